/* gradsync.c: plans the allreduce buckets over the gradient arena and runs one in-place MPI_Allreduce per bucket. */
#include "gradsync.h"

#include <string.h>

void gradsync_plan(struct gradsync *s, const struct model *m, size_t bucket_bytes)
{
    memset(s, 0, sizeof *s);
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
}

void gradsync_run(struct gradsync *s, float *grads, MPI_Comm comm)
{
    for (int i = 0; i < s->nbuckets; i++) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, grads + s->buckets[i].offset, (int)s->buckets[i].count, MPI_FLOAT, MPI_SUM, comm);
        s->seconds += MPI_Wtime() - t0;
        s->calls++;
        s->bytes += s->buckets[i].count * sizeof(float);
    }
}
