/* backend_cpu.c: the compute primitives on the host in plain C, single-threaded and in a fixed order (bit-reproducible). */
#include "backend.h"

#include "sgemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *cpu_alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "apsmpi_train: out of memory for %zu bytes\n", bytes);
        exit(1);
    }
    return p;
}

static void cpu_release(void *p) { free(p); }

static void cpu_copy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

static void cpu_synchronize(void) {}

static void cpu_add_bias(float *y, const float *bias, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            y[(size_t)r * cols + c] += bias[c];
}

static void cpu_sum_rows(float *db, const float *dy, int rows, int cols)
{
    for (int c = 0; c < cols; c++)
        db[c] = 0.0f;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            db[c] += dy[(size_t)r * cols + c];
}

static void cpu_relu_forward(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

static void cpu_relu_backward(float *dx, const float *dy, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

/* In NHWC the k pixels of one patch row are k * ch consecutive floats. */
static void cpu_im2col(float *col, const float *x, int batch, int h, int w, int ch, int k)
{
    int oh = h - k + 1, ow = w - k + 1;
    size_t span = (size_t)k * ch;
    for (int b = 0; b < batch; b++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int ky = 0; ky < k; ky++) {
                    memcpy(col, x + (((size_t)b * h + oy + ky) * w + ox) * ch, span * sizeof(float));
                    col += span;
                }
}

static void cpu_col2im(float *dx, const float *dcol, int batch, int h, int w, int ch, int k)
{
    int oh = h - k + 1, ow = w - k + 1;
    size_t span = (size_t)k * ch;
    memset(dx, 0, (size_t)batch * h * w * ch * sizeof(float));
    for (int b = 0; b < batch; b++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int ky = 0; ky < k; ky++) {
                    float *d = dx + (((size_t)b * h + oy + ky) * w + ox) * ch;
                    for (size_t i = 0; i < span; i++)
                        d[i] += dcol[i];
                    dcol += span;
                }
}

static void cpu_maxpool_forward(float *y, int *argmax, const float *x, int batch, int h, int w, int ch)
{
    int oh = h / 2, ow = w / 2;
    for (int b = 0; b < batch; b++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int c = 0; c < ch; c++) {
                    int best = ((b * h + 2 * oy) * w + 2 * ox) * ch + c;
                    for (int dy = 0; dy < 2; dy++)
                        for (int dx = 0; dx < 2; dx++) {
                            int i = ((b * h + 2 * oy + dy) * w + 2 * ox + dx) * ch + c;
                            if (x[i] > x[best])
                                best = i;
                        }
                    size_t o = (((size_t)b * oh + oy) * ow + ox) * ch + c;
                    y[o] = x[best];
                    argmax[o] = best;
                }
}

static void cpu_maxpool_backward(float *dx, const float *dy, const int *argmax, int batch, int h, int w, int ch)
{
    size_t out = (size_t)batch * (h / 2) * (w / 2) * ch;
    memset(dx, 0, (size_t)batch * h * w * ch * sizeof(float));
    for (size_t o = 0; o < out; o++)
        dx[argmax[o]] += dy[o];
}

static double cpu_softmax_xent(float *dlogits, const float *logits, const int *labels, int rows, int classes)
{
    double loss = 0.0;
    for (int r = 0; r < rows; r++) {
        const float *z = logits + (size_t)r * classes;
        float *d = dlogits + (size_t)r * classes;
        float zmax = z[0], sum = 0.0f;
        for (int c = 1; c < classes; c++)
            if (z[c] > zmax)
                zmax = z[c];
        for (int c = 0; c < classes; c++) {
            d[c] = expf(z[c] - zmax);
            sum += d[c];
        }
        for (int c = 0; c < classes; c++)
            d[c] /= sum;
        d[labels[r]] -= 1.0f;
        loss += (double)logf(sum) - (double)(z[labels[r]] - zmax);
    }
    return loss;
}

static long cpu_count_correct(const float *logits, const int *labels, int rows, int classes)
{
    long correct = 0;
    for (int r = 0; r < rows; r++) {
        const float *z = logits + (size_t)r * classes;
        int best = 0;
        for (int c = 1; c < classes; c++)
            if (z[c] > z[best])
                best = c;
        correct += best == labels[r];
    }
    return correct;
}

static void cpu_sgd_momentum(float *w, float *v, const float *g, size_t n, float lr, float momentum, float divisor)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = momentum * v[i] + g[i] / divisor;
        w[i] -= lr * v[i];
    }
}

const struct backend backend_cpu = {
    .name = "cpu",
    .device_memory = false,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .host_alloc = cpu_alloc,
    .host_release = cpu_release,
    .to_device = cpu_copy,
    .to_host = cpu_copy,
    .synchronize = cpu_synchronize,
    .sgemm = sgemm,
    .add_bias = cpu_add_bias,
    .sum_rows = cpu_sum_rows,
    .relu_forward = cpu_relu_forward,
    .relu_backward = cpu_relu_backward,
    .im2col = cpu_im2col,
    .col2im = cpu_col2im,
    .maxpool_forward = cpu_maxpool_forward,
    .maxpool_backward = cpu_maxpool_backward,
    .softmax_xent = cpu_softmax_xent,
    .count_correct = cpu_count_correct,
    .sgd_momentum = cpu_sgd_momentum,
};
