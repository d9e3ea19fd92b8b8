/* gradsync.h: sums the gradients over the ranks with MPI_Allreduce, one call per tensor or per fused bucket. */
#ifndef TRAIN_GRADSYNC_H
#define TRAIN_GRADSYNC_H

#include "model.h"

#include <mpi.h>

struct bucket {
    size_t offset, count; /* a contiguous range of the gradient arena */
};

struct gradsync {
    int nbuckets;
    struct bucket buckets[2 * MODEL_MAX_LAYERS];
    double seconds;           /* inside MPI_Allreduce, since the last reset */
    long calls;               /* MPI_Allreduce calls, all time */
    unsigned long long bytes; /* their FP32 bytes on this rank, all time */
};

/* bucket_bytes 0: one bucket per tensor. Otherwise tensors, in the order backpropagation
 * finishes them, fill a bucket until the next one would take it past bucket_bytes (a
 * tensor larger than that gets a bucket of its own), as DDP and Horovod fuse them. */
void gradsync_plan(struct gradsync *s, const struct model *m, size_t bucket_bytes);
/* MPI_Allreduce(MPI_IN_PLACE, bucket, MPI_FLOAT, MPI_SUM) for every bucket, in order. */
void gradsync_run(struct gradsync *s, float *grads, MPI_Comm comm);

#endif
