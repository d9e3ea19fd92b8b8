/* gradsync.c: plans the allreduce buckets over the gradient arena, runs one in-place MPI_Allreduce per bucket, and counts the values the sum zeroed. */
#include "gradsync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gradsync_plan(struct gradsync *s, const struct arena *a, size_t bucket_bytes, bool through_host)
{
    size_t largest = 0;

    memset(s, 0, sizeof *s);
    s->arena = a;
    for (int t = 0; t < a->ntensors; t++) {
        struct bucket *b = s->nbuckets ? &s->buckets[s->nbuckets - 1] : NULL;
        size_t count = a->tensors[t].count;
        if (b && (bucket_bytes == GRADSYNC_ONE_BUCKET || (b->count + count) * sizeof(float) <= bucket_bytes)) {
            b->count += count;
        } else {
            b = &s->buckets[s->nbuckets++];
            b->offset = a->tensors[t].offset;
            b->count = count;
        }
    }
    for (int i = 0; i < s->nbuckets; i++)
        if (s->buckets[i].count > largest)
            largest = s->buckets[i].count;
    if (through_host && a->be->device_memory)
        s->staging = a->be->host_alloc(largest * sizeof(float));
    if (!a->be->device_memory)
        s->before = a->be->host_alloc(a->nparams * sizeof(float));
}

/* Per tensor: the values that were non-zero here before the allreduce and zero after. */
static void count_zeroed(struct gradsync *s)
{
    const struct arena *a = s->arena;
    for (int t = 0; t < a->ntensors; t++) {
        const float *before = s->before + a->tensors[t].offset, *after = arena_grad(a, t);
        unsigned long long nonzero = 0, zeroed = 0;
        for (size_t i = 0; i < a->tensors[t].count; i++) {
            nonzero += before[i] != 0.0f;
            zeroed += before[i] != 0.0f && after[i] == 0.0f;
        }
        s->nonzero[t] += nonzero;
        s->zeroed[t] += zeroed;
    }
}

void gradsync_run(struct gradsync *s, MPI_Comm comm)
{
    const struct backend *be = s->arena->be;
    float *grads = s->arena->grads;

    /* the gradients are final before the clock starts: the backward pass is not timed */
    be->synchronize();
    if (s->before)
        memcpy(s->before, grads, s->arena->nparams * sizeof(float));
    for (int i = 0; i < s->nbuckets; i++) {
        float *g = grads + s->buckets[i].offset;
        size_t count = s->buckets[i].count, bytes = count * sizeof(float);
        double t0 = MPI_Wtime();
        if (s->staging) {
            be->to_host(s->staging, g, bytes);
            MPI_Allreduce(MPI_IN_PLACE, s->staging, (int)count, MPI_FLOAT, MPI_SUM, comm);
            be->to_device(g, s->staging, bytes);
        } else {
            MPI_Allreduce(MPI_IN_PLACE, g, (int)count, MPI_FLOAT, MPI_SUM, comm);
        }
        s->seconds += MPI_Wtime() - t0;
        s->calls++;
        s->bytes += bytes;
    }
    if (s->before)
        count_zeroed(s);
}

void gradsync_report_zeroed(const struct gradsync *s, MPI_Comm comm)
{
    const struct arena *a = s->arena;
    unsigned long long nonzero[ARENA_MAX_TENSORS], zeroed[ARENA_MAX_TENSORS], all_nz = 0, all_z = 0;
    int rank, n = a->ntensors;
    const char *sep = "; by tensor:";

    if (!s->before)
        return;
    MPI_Comm_rank(comm, &rank);
    MPI_Reduce(s->nonzero, nonzero, n, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(s->zeroed, zeroed, n, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm);
    if (rank != 0)
        return;
    for (int t = 0; t < n; t++) {
        all_nz += nonzero[t];
        all_z += zeroed[t];
    }
    printf("apsmpi_train: zeroed by the allreduce (non-zero on a rank, zero in the sum): %llu of %llu (%.4g%%)", all_z,
           all_nz, all_nz ? 100.0 * (double)all_z / (double)all_nz : 0.0);
    for (int t = 0; t < n; t++)
        if (zeroed[t]) {
            printf("%s %s %.4g%%", sep, a->tensors[t].name, 100.0 * (double)zeroed[t] / (double)nonzero[t]);
            sep = ",";
        }
    printf("\n");
    fflush(stdout);
}

void gradsync_free(struct gradsync *s)
{
    const struct backend *be = s->arena->be;
    if (s->staging)
        be->host_release(s->staging);
    if (s->before)
        be->host_release(s->before);
    s->staging = s->before = NULL;
}
