/* gradsync.h: sums the gradients over the ranks with MPI_Allreduce, one call per tensor or per fused bucket. */
#ifndef TRAIN_GRADSYNC_H
#define TRAIN_GRADSYNC_H

#include "arena.h"

#include <mpi.h>
#include <stdbool.h>

/* --bucket-bytes's value for one bucket that holds the whole gradient. */
#define GRADSYNC_ONE_BUCKET ((size_t)-1)

struct bucket {
    size_t offset, count; /* a contiguous range of the gradient arena */
};

struct gradsync {
    int nbuckets;
    struct bucket buckets[ARENA_MAX_TENSORS];
    const struct arena *arena;
    float *staging;           /* host copy of one bucket (page-locked on a GPU); NULL: MPI gets the arena */
    double seconds;           /* in the allreduce calls and their staging copies, since the last reset */
    long calls;               /* MPI_Allreduce calls, all time */
    unsigned long long bytes; /* their FP32 bytes on this rank, all time */
    /* Host arenas only (NULL otherwise): the gradient as this rank had it before the
     * allreduce, and per tensor, all time, its non-zero values and how many of them the
     * sum returned as exactly zero (a lossy allreduce that flushed them). */
    float *before;
    unsigned long long nonzero[ARENA_MAX_TENSORS], zeroed[ARENA_MAX_TENSORS];
};

/* bucket_bytes 0: one bucket per tensor. Otherwise tensors, in arena order, fill a bucket
 * until the next one would take it past bucket_bytes (a tensor larger than that gets a
 * bucket of its own), as DDP and Horovod fuse them; GRADSYNC_ONE_BUCKET: one bucket.
 * through_host: when the arena is device memory, every bucket is copied to a host buffer,
 * allreduced there and copied back, as a job does without a CUDA-aware MPI; otherwise (and
 * always for host arenas) MPI gets the arena's own pointers. */
void gradsync_plan(struct gradsync *s, const struct arena *a, size_t bucket_bytes, bool through_host);
/* MPI_Allreduce(MPI_IN_PLACE, bucket, MPI_FLOAT, MPI_SUM) for every bucket of the gradient
 * arena, in order, once the backend's queued work (the backward pass) is done. */
void gradsync_run(struct gradsync *s, MPI_Comm comm);
/* Collective: rank 0 prints one line with the values zeroed by the allreduce over all ranks
 * and steps, in all and for each tensor that lost any (nothing for device arenas). */
void gradsync_report_zeroed(const struct gradsync *s, MPI_Comm comm);
/* Releases the staging and the copy buffers. */
void gradsync_free(struct gradsync *s);

#endif
