/* layers.c: forward and backward of dense, convolution (im2col + sgemm), ReLU and 2x2 max-pool layers. */
#include "layers.h"

#include <math.h>
#include <string.h>

static struct layer blank(enum layer_kind kind, struct shape in, struct shape out)
{
    struct layer l;
    memset(&l, 0, sizeof l);
    l.kind = kind;
    l.in = in;
    l.out = out;
    return l;
}

struct layer layer_dense(int in, int out)
{
    struct layer l = blank(LAYER_DENSE, (struct shape){1, 1, in}, (struct shape){1, 1, out});
    l.w_count = (size_t)in * out;
    l.b_count = (size_t)out;
    return l;
}

struct layer layer_conv(struct shape in, int k, int out_channels)
{
    struct layer l = blank(LAYER_CONV, in, (struct shape){in.h - k + 1, in.w - k + 1, out_channels});
    l.k = k;
    l.w_count = (size_t)k * k * in.c * out_channels;
    l.b_count = (size_t)out_channels;
    return l;
}

struct layer layer_relu(struct shape in) { return blank(LAYER_RELU, in, in); }

struct layer layer_maxpool(struct shape in)
{
    return blank(LAYER_MAXPOOL, in, (struct shape){in.h / 2, in.w / 2, in.c});
}

/* Dense and convolution layers are the same product Y[rows x out] = X[rows x fan_in] W + b:
 * a dense layer's rows are the samples, a convolution's the output pixels of all samples
 * and its X the im2col patches. */
static int product_rows(const struct layer *l, int batch)
{
    return l->kind == LAYER_CONV ? batch * l->out.h * l->out.w : batch;
}

/* The inputs of one output of a dense or convolution layer; 0 for layers without weights. */
static int layer_fan_in(const struct layer *l) { return l->b_count ? (int)(l->w_count / l->b_count) : 0; }

void layer_alloc(const struct backend *be, struct layer *l, int capacity, bool need_dx)
{
    l->y = be->alloc((size_t)capacity * shape_size(l->out) * sizeof(float));
    l->dx = need_dx ? be->alloc((size_t)capacity * shape_size(l->in) * sizeof(float)) : NULL;
    if (l->kind == LAYER_CONV) {
        size_t patches = (size_t)capacity * l->out.h * l->out.w * l->k * l->k * l->in.c;
        l->col = be->alloc(patches * sizeof(float));
        l->dcol = need_dx ? be->alloc(patches * sizeof(float)) : NULL;
    }
    if (l->kind == LAYER_MAXPOOL)
        l->argmax = be->alloc((size_t)capacity * shape_size(l->out) * sizeof(int));
}

void layer_free(const struct backend *be, struct layer *l)
{
    be->release(l->y);
    be->release(l->dx);
    be->release(l->col);
    be->release(l->dcol);
    be->release(l->argmax);
}

void layer_init(const struct layer *l, struct rng *r, float *w, float *b)
{
    float limit = sqrtf(6.0f / (float)layer_fan_in(l));
    for (size_t i = 0; i < l->w_count; i++)
        w[i] = rng_uniform(r, -limit, limit);
    for (size_t i = 0; i < l->b_count; i++)
        b[i] = 0.0f;
}

/* The product of the rows (samples, or convolution patches) with the weights, plus biases. */
static void product_forward(const struct backend *be, struct layer *l, const float *x, int rows)
{
    int fan_in = layer_fan_in(l), outs = (int)l->b_count;
    be->sgemm(false, false, rows, outs, fan_in, 1.0f, x, fan_in, l->w, outs, 0.0f, l->y, outs);
    be->add_bias(l->y, l->b, rows, outs);
}

void layer_forward(const struct backend *be, struct layer *l, const float *x, int batch)
{
    switch (l->kind) {
    case LAYER_CONV:
        be->im2col(l->col, x, batch, l->in.h, l->in.w, l->in.c, l->k);
        product_forward(be, l, l->col, product_rows(l, batch));
        break;
    case LAYER_DENSE:
        product_forward(be, l, x, product_rows(l, batch));
        break;
    case LAYER_RELU:
        be->relu_forward(l->y, x, (size_t)batch * shape_size(l->in));
        break;
    case LAYER_MAXPOOL:
        be->maxpool_forward(l->y, l->argmax, x, batch, l->in.h, l->in.w, l->in.c);
        break;
    }
}

void layer_backward(const struct backend *be, struct layer *l, const float *x, const float *dy, int batch)
{
    int rows = product_rows(l, batch), fan_in = layer_fan_in(l), outs = (int)l->b_count;

    switch (l->kind) {
    case LAYER_CONV:
    case LAYER_DENSE: {
        const float *xs = l->kind == LAYER_CONV ? l->col : x;
        float *dxs = l->kind == LAYER_CONV ? l->dcol : l->dx;
        be->sgemm(true, false, fan_in, outs, rows, 1.0f, xs, fan_in, dy, outs, 0.0f, l->dw, outs);
        be->sum_rows(l->db, dy, rows, outs);
        if (l->dx) {
            be->sgemm(false, true, rows, fan_in, outs, 1.0f, dy, outs, l->w, outs, 0.0f, dxs, fan_in);
            if (l->kind == LAYER_CONV)
                be->col2im(l->dx, l->dcol, batch, l->in.h, l->in.w, l->in.c, l->k);
        }
        break;
    }
    case LAYER_RELU:
        if (l->dx)
            be->relu_backward(l->dx, dy, l->y, (size_t)batch * shape_size(l->in));
        break;
    case LAYER_MAXPOOL:
        if (l->dx)
            be->maxpool_backward(l->dx, dy, l->argmax, batch, l->in.h, l->in.w, l->in.c);
        break;
    }
}
