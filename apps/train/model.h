/* model.h: the two models (an MLP and a small CNN) as layer stacks over one parameter and one gradient arena. */
#ifndef TRAIN_MODEL_H
#define TRAIN_MODEL_H

#include "arena.h"
#include "backend.h"
#include "layers.h"

#include <stdint.h>

#define MODEL_MAX_LAYERS 8

struct model {
    const struct backend *be;
    const char *name;
    int nlayers, capacity;
    struct layer layers[MODEL_MAX_LAYERS];
    /* a layer's tensors: bias before weights, the last layer first */
    struct arena arena;
    float *velocity; /* device memory of arena.nparams floats */
    float *x;        /* input batch: capacity x 784 */
    int *labels;     /* capacity */
    float *dlogits;  /* capacity x 10 */
};

/* Builds "mlp" (784-256-128-10) or "cnn" (conv5x5x8, pool, conv5x5x16, pool, fc 10) for
 * batches of up to capacity samples, initialized from seed. Returns 0, or -1 for an unknown name. */
int model_build(struct model *m, const struct backend *be, const char *name, int capacity, uint64_t seed);
void model_free(struct model *m);
/* The logits (batch x 10) of the batch in m->x. */
const float *model_forward(struct model *m, int batch);
/* The gradients, summed over the batch, into m->grads, from m->dlogits. */
void model_backward(struct model *m, int batch);

#endif
