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

static void view_tensor(const struct arena *a, int t, float **view, float **grad)
{
    *view = arena_param(a, t);
    *grad = arena_grad(a, t);
}

int model_build(struct model *m, const struct backend *be, const char *name, int capacity, uint64_t seed)
{
    struct arena *a = &m->arena;
    int tb[MODEL_MAX_LAYERS], tw[MODEL_MAX_LAYERS];
    size_t total;
    float *host;
    struct rng r;

    memset(m, 0, sizeof *m);
    m->be = be;
    m->capacity = capacity;
    if (define_layers(m, name) != 0)
        return -1;
    m->name = name;
    arena_init(a, be);
    for (int i = m->nlayers - 1; i >= 0; i--) {
        if (m->layers[i].w_count == 0)
            continue;
        tb[i] = arena_add(a, m->layers[i].b_count, false, "layer%d.b", i + 1);
        tw[i] = arena_add(a, m->layers[i].w_count, true, "layer%d.w", i + 1);
    }
    arena_alloc(a);
    total = a->nparams;
    m->velocity = be->alloc(total * sizeof(float));
    for (int i = 0; i < m->nlayers; i++) {
        struct layer *l = &m->layers[i];
        if (l->w_count == 0)
            continue;
        view_tensor(a, tb[i], &l->b, &l->db);
        view_tensor(a, tw[i], &l->w, &l->dw);
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
            layer_init(l, &r, host + (l->w - a->params), host + (l->b - a->params));
    }
    be->to_device(a->params, host, total * sizeof(float));
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
    arena_free(&m->arena);
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
