/* gradsync.h: sums the gradients over the ranks with MPI_Allreduce, one call per tensor or per fused bucket. */
#ifndef TRAIN_GRADSYNC_H
#define TRAIN_GRADSYNC_H

#include "model.h"

#include <mpi.h>
#include <stdbool.h>

struct bucket {
    size_t offset, count; /* a contiguous range of the gradient arena */
};

struct gradsync {
    int nbuckets;
    struct bucket buckets[2 * MODEL_MAX_LAYERS];
    const struct backend *be;
    float *staging;           /* host copy of one bucket (page-locked on a GPU); NULL: MPI gets the arena */
    double seconds;           /* in the allreduce calls and their staging copies, since the last reset */
    long calls;               /* MPI_Allreduce calls, all time */
    unsigned long long bytes; /* their FP32 bytes on this rank, all time */
};

/* bucket_bytes 0: one bucket per tensor. Otherwise tensors, in the order backpropagation
 * finishes them, fill a bucket until the next one would take it past bucket_bytes (a
 * tensor larger than that gets a bucket of its own), as DDP and Horovod fuse them.
 * through_host: when the arena is device memory (m->be->device_memory), every bucket is
 * copied to a host buffer, allreduced there and copied back, as a job does without a
 * CUDA-aware MPI; otherwise (and always for host arenas) MPI gets the arena's own pointers. */
void gradsync_plan(struct gradsync *s, const struct model *m, size_t bucket_bytes, bool through_host);
/* MPI_Allreduce(MPI_IN_PLACE, bucket, MPI_FLOAT, MPI_SUM) for every bucket, in order,
 * once the backend's queued work (the backward pass) is done. */
void gradsync_run(struct gradsync *s, float *grads, MPI_Comm comm);
/* Releases the staging buffer. */
void gradsync_free(struct gradsync *s);

#endif
