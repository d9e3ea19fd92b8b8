/* arena.h: a model's parameters and gradients as two flat arenas, cut into named tensors (what the allreduce and the optimizers see). */
#ifndef TRAIN_ARENA_H
#define TRAIN_ARENA_H

#include "backend.h"

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARENA_MAX_TENSORS 64

/* One parameter tensor: its place in the arenas, its name, and whether weight decay applies
 * to it (weight matrices and embeddings; not gains and biases). */
struct tensor {
    size_t offset, count;
    char name[32];
    bool decay;
};

/* Tensors in arena order: the order backpropagation finishes them (last layer first), as
 * DDP fills its buckets, so that a bucket of consecutive tensors is a contiguous range. */
struct arena {
    const struct backend *be;
    int ntensors;
    struct tensor tensors[ARENA_MAX_TENSORS];
    size_t nparams;
    float *params, *grads; /* device memory of nparams floats each, once arena_alloc ran */
};

/* Empties a; tensors are then declared with arena_add and the memory made by arena_alloc. */
void arena_init(struct arena *a, const struct backend *be);
/* Declares the next tensor of count floats (name printf-style); returns its index. */
int arena_add(struct arena *a, size_t count, bool decay, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Allocates both arenas, zero-filled. */
void arena_alloc(struct arena *a);
void arena_free(struct arena *a);
/* Views of tensor t in the parameter and the gradient arena. */
static inline float *arena_param(const struct arena *a, int t) { return a->params + a->tensors[t].offset; }
static inline float *arena_grad(const struct arena *a, int t) { return a->grads + a->tensors[t].offset; }

/* Whether the parameters are bit-identical on all ranks of comm (an FNV-1a hash of them,
 * compared in one MAX reduction of h and ~h); host: scratch of nparams floats. */
bool arena_ranks_agree(const struct arena *a, MPI_Comm comm, float *host);

#endif
