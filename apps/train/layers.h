/* layers.h: the layers of the models (dense, convolution, ReLU, max pooling), forward and backward on a backend. */
#ifndef TRAIN_LAYERS_H
#define TRAIN_LAYERS_H

#include "backend.h"
#include "rng.h"

#include <stdbool.h>
#include <stddef.h>

enum layer_kind { LAYER_DENSE, LAYER_CONV, LAYER_RELU, LAYER_MAXPOOL };

/* An activation per sample: h x w x c, NHWC; a dense layer's is 1 x 1 x features. */
struct shape {
    int h, w, c;
};

struct layer {
    enum layer_kind kind;
    struct shape in, out;
    int k;                   /* convolution: kernel side */
    size_t w_count, b_count; /* parameters: weights (fan_in x outputs) and biases */
    float *w, *b, *dw, *db;  /* views into the model's parameter and gradient arenas */
    float *y;                /* output: capacity x out */
    float *dx;               /* gradient of the input: capacity x in, NULL for the first layer */
    float *col, *dcol;       /* convolution: the im2col patches and their gradient */
    int *argmax;             /* max pooling: the input index of every output */
};

struct layer layer_dense(int in, int out);
struct layer layer_conv(struct shape in, int k, int out_channels);
struct layer layer_relu(struct shape in);
struct layer layer_maxpool(struct shape in);

static inline size_t shape_size(struct shape s) { return (size_t)s.h * s.w * s.c; }

/* Allocates the activation buffers for up to capacity samples (dx only when needed). */
void layer_alloc(const struct backend *be, struct layer *l, int capacity, bool need_dx);
void layer_free(const struct backend *be, struct layer *l);
/* He-uniform weights, zero biases, into host arrays of w_count and b_count floats. */
void layer_init(const struct layer *l, struct rng *r, float *w, float *b);
/* y = layer(x) for batch samples. */
void layer_forward(const struct backend *be, struct layer *l, const float *x, int batch);
/* From x and dy (gradient of y): the parameter gradients, summed over the batch, and dx. */
void layer_backward(const struct backend *be, struct layer *l, const float *x, const float *dy, int batch);

#endif
