/* model.c: builds the MLP and the CNN, lays out their parameters, initializes them from the seed, runs them. */
#include "model.h"

#include "data.h"
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RNG_STREAM_INIT 1

static void add(struct model *m, struct layer l) { m->layers[m->nlayers++] = l; }

static int define_layers(struct model *m, const char *name)
{
    if (strcmp(name, "mlp") == 0) {
        add(m, layer_dense(DATA_PIXELS, 256));
        add(m, layer_relu(m->layers[m->nlayers - 1].out));
        add(m, layer_dense(256, 128));
        add(m, layer_relu(m->layers[m->nlayers - 1].out));
        add(m, layer_dense(128, DATA_CLASSES));
    } else if (strcmp(name, "cnn") == 0) {
        add(m, layer_conv((struct shape){DATA_SIDE, DATA_SIDE, 1}, 5, 8));
        add(m, layer_relu(m->layers[m->nlayers - 1].out));
        add(m, layer_maxpool(m->layers[m->nlayers - 1].out));
        add(m, layer_conv(m->layers[m->nlayers - 1].out, 5, 16));
        add(m, layer_relu(m->layers[m->nlayers - 1].out));
        add(m, layer_maxpool(m->layers[m->nlayers - 1].out));
        add(m, layer_dense((int)shape_size(m->layers[m->nlayers - 1].out), DATA_CLASSES));
    } else {
        return -1;
    }
    return 0;
}

static void add_tensor(struct model *m, float **view, float **grad, size_t count)
{
    struct tensor *t = &m->tensors[m->ntensors++];
    t->offset = m->nparams;
    t->count = count;
    *view = m->params + t->offset;
    *grad = m->grads + t->offset;
    m->nparams += count;
}

int model_build(struct model *m, const struct backend *be, const char *name, int capacity, uint64_t seed)
{
    size_t total = 0;
    float *host;
    struct rng r;

    memset(m, 0, sizeof *m);
    m->be = be;
    m->capacity = capacity;
    if (define_layers(m, name) != 0)
        return -1;
    m->name = name;
    for (int i = 0; i < m->nlayers; i++)
        total += m->layers[i].w_count + m->layers[i].b_count;
    m->params = be->alloc(total * sizeof(float));
    m->grads = be->alloc(total * sizeof(float));
    m->velocity = be->alloc(total * sizeof(float));
    for (int i = m->nlayers - 1; i >= 0; i--) {
        struct layer *l = &m->layers[i];
        if (l->w_count == 0)
            continue;
        add_tensor(m, &l->b, &l->db, l->b_count);
        add_tensor(m, &l->w, &l->dw, l->w_count);
    }
    /* initialized layer by layer from the input on, whatever the arena order */
    host = malloc(total * sizeof(float));
    if (!host) {
        fprintf(stderr, "apsmpi_train: out of memory for %zu parameters\n", total);
        exit(1);
    }
    rng_init(&r, seed, RNG_STREAM_INIT);
    for (int i = 0; i < m->nlayers; i++) {
        struct layer *l = &m->layers[i];
        if (l->w_count)
            layer_init(l, &r, host + (l->w - m->params), host + (l->b - m->params));
    }
    be->to_device(m->params, host, total * sizeof(float));
    free(host);
    for (int i = 0; i < m->nlayers; i++)
        layer_alloc(be, &m->layers[i], capacity, i > 0);
    m->x = be->alloc((size_t)capacity * DATA_PIXELS * sizeof(float));
    m->labels = be->alloc((size_t)capacity * sizeof(int));
    m->dlogits = be->alloc((size_t)capacity * DATA_CLASSES * sizeof(float));
    return 0;
}

void model_free(struct model *m)
{
    const struct backend *be = m->be;
    for (int i = 0; i < m->nlayers; i++)
        layer_free(be, &m->layers[i]);
    be->release(m->params);
    be->release(m->grads);
    be->release(m->velocity);
    be->release(m->x);
    be->release(m->labels);
    be->release(m->dlogits);
}

const float *model_forward(struct model *m, int batch)
{
    const float *x = m->x;
    for (int i = 0; i < m->nlayers; i++) {
        layer_forward(m->be, &m->layers[i], x, batch);
        x = m->layers[i].y;
    }
    return x;
}

void model_backward(struct model *m, int batch)
{
    const float *dy = m->dlogits;
    for (int i = m->nlayers - 1; i >= 0; i--) {
        const float *x = i > 0 ? m->layers[i - 1].y : m->x;
        layer_backward(m->be, &m->layers[i], x, dy, batch);
        dy = m->layers[i].dx;
    }
}
