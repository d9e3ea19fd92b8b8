/* gradsync.c: plans the allreduce buckets over the gradient arena and runs one in-place MPI_Allreduce per bucket. */
#include "gradsync.h"

#include <string.h>

void gradsync_plan(struct gradsync *s, const struct model *m, size_t bucket_bytes, bool through_host)
{
    size_t largest = 0;

    memset(s, 0, sizeof *s);
    s->be = m->be;
    for (int t = 0; t < m->ntensors; t++) {
        struct bucket *b = s->nbuckets ? &s->buckets[s->nbuckets - 1] : NULL;
        size_t count = m->tensors[t].count;
        if (b && (b->count + count) * sizeof(float) <= bucket_bytes) {
            b->count += count;
        } else {
            b = &s->buckets[s->nbuckets++];
            b->offset = m->tensors[t].offset;
            b->count = count;
        }
    }
    for (int i = 0; i < s->nbuckets; i++)
        if (s->buckets[i].count > largest)
            largest = s->buckets[i].count;
    if (through_host && m->be->device_memory)
        s->staging = m->be->host_alloc(largest * sizeof(float));
}

void gradsync_run(struct gradsync *s, float *grads, MPI_Comm comm)
{
    /* the gradients are final before the clock starts: the backward pass is not timed */
    s->be->synchronize();
    for (int i = 0; i < s->nbuckets; i++) {
        float *g = grads + s->buckets[i].offset;
        size_t count = s->buckets[i].count, bytes = count * sizeof(float);
        double t0 = MPI_Wtime();
        if (s->staging) {
            s->be->to_host(s->staging, g, bytes);
            MPI_Allreduce(MPI_IN_PLACE, s->staging, (int)count, MPI_FLOAT, MPI_SUM, comm);
            s->be->to_device(g, s->staging, bytes);
        } else {
            MPI_Allreduce(MPI_IN_PLACE, g, (int)count, MPI_FLOAT, MPI_SUM, comm);
        }
        s->seconds += MPI_Wtime() - t0;
        s->calls++;
        s->bytes += bytes;
    }
}

void gradsync_free(struct gradsync *s)
{
    if (s->staging)
        s->be->host_release(s->staging);
    s->staging = NULL;
}
