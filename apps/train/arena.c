/* arena.c: declares a model's tensors in the parameter and gradient arenas, allocates them, and checks that the ranks hold the same parameters. */
#include "arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void arena_init(struct arena *a, const struct backend *be)
{
    memset(a, 0, sizeof *a);
    a->be = be;
}

int arena_add(struct arena *a, size_t count, bool decay, const char *fmt, ...)
{
    struct tensor *t;
    va_list ap;

    if (a->ntensors == ARENA_MAX_TENSORS) {
        fprintf(stderr, "apsmpi_train: more than %d parameter tensors\n", ARENA_MAX_TENSORS);
        exit(1);
    }
    t = &a->tensors[a->ntensors];
    t->offset = a->nparams;
    t->count = count;
    t->decay = decay;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    a->nparams += count;
    return a->ntensors++;
}

void arena_alloc(struct arena *a)
{
    a->params = a->be->alloc(a->nparams * sizeof(float));
    a->grads = a->be->alloc(a->nparams * sizeof(float));
}

void arena_free(struct arena *a)
{
    a->be->release(a->params);
    a->be->release(a->grads);
    a->params = a->grads = NULL;
}

bool arena_ranks_agree(const struct arena *a, MPI_Comm comm, float *host)
{
    const unsigned char *p = (const unsigned char *)host;
    uint64_t h = 0xcbf29ce484222325ULL, v[2];

    a->be->to_host(host, a->params, a->nparams * sizeof(float));
    for (size_t i = 0; i < a->nparams * sizeof(float); i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    v[0] = h;
    v[1] = ~h;
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, comm);
    return v[0] == h && ~v[1] == h;
}
