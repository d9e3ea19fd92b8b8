/* test_train_backend.c: the training program's CUDA backend (apps/train/backend_cuda.cu) against its CPU backend, primitive by primitive (SKIP without a GPU). */
/* Every primitive runs on the same random inputs on both backends. The kernels that
 * backend_cuda.cu says match the CPU bit for bit (add_bias, sum_rows, the relus, im2col,
 * col2im, the max pooling, count_correct, sgd_momentum, sgemm with k = 0) are compared bit
 * for bit; softmax_xent (the GPU's expf and logf) and sgemm through cuBLAS to a relative
 * 1e-5. Shapes are those of the models (MNIST images, 5x5 convolutions, 2x2 pooling) and odd
 * ones (a column count past one thread block, more rows than one shared-memory tile).
 * APSMPI_TEST_NO_CUBLAS=1 (a PTX simulator, which cannot run cuBLAS): the kernels are tested
 * without backend_cuda_init succeeding, and the sgemm cases through cuBLAS are left out;
 * the reason backend_cuda_init gave is printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static const struct backend *gpu = &backend_cuda, *cpu = &backend_cpu;
static int have_cublas;

/* ---- random numbers: splitmix64 ---- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Gradient-like floats of both signs over several binades, some zeros and ties. */
static void fill(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd64();
        x[i] = r % 17 == 0   ? 0.0f
               : r % 23 == 0 ? x[i / 2]
                             : (float)ldexp((double)(r >> 40) / (1 << 24), (int)(r % 9) - 4);
        if (r >> 63)
            x[i] = -x[i];
    }
}

/* A host buffer of n floats, filled. */
static float *host_floats(size_t n)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    assert_non_null(x);
    fill(x, n);
    return x;
}

/* A device copy of host memory. */
static void *on_gpu(const void *h, size_t bytes)
{
    void *d = gpu->alloc(bytes);
    gpu->to_device(d, h, bytes);
    return d;
}

/* The device buffer d (n floats) is bit for bit the host buffer want. */
static void same_bits(const char *what, const void *d, const void *want, size_t bytes)
{
    uint8_t *got = malloc(bytes ? bytes : 1);
    assert_non_null(got);
    gpu->to_host(got, d, bytes);
    for (size_t k = 0; k < bytes; k++)
        if (got[k] != ((const uint8_t *)want)[k])
            fail_msg("%s: byte %zu (element %zu) cpu %02x gpu %02x", what, k, k / 4, ((const uint8_t *)want)[k],
                     got[k]);
    free(got);
}

/* The device floats d are within tol * mag[i] of want (mag NULL: of |want[i]| + 1e-6). */
static void close_floats(const char *what, const float *d, const float *want, const float *mag, size_t n, double tol)
{
    float *got = malloc((n ? n : 1) * sizeof *got);
    assert_non_null(got);
    gpu->to_host(got, d, n * sizeof *got);
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol * (mag ? mag[i] : fabs((double)want[i]) + 1e-6)))
            fail_msg("%s: element %zu cpu %.9g gpu %.9g", what, i, (double)want[i], (double)got[i]);
    free(got);
}

static void test_alloc_is_zeroed(void **state)
{
    size_t n = 5000;
    float *zeros = calloc(n, sizeof *zeros);
    float *d = gpu->alloc(n * sizeof *d);
    same_bits("alloc", d, zeros, n * sizeof *d);
    gpu->release(d);
    free(zeros);
}

static void test_add_bias_sum_rows(void **state)
{
    /* rows x cols: a hidden layer, the logits, cols past one block, rows past one tile */
    static const int shapes[][2] = {{32, 256}, {32, 10}, {7, 300}, {1, 1}, {9000, 3}, {3000, 257}, {0, 5}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        size_t n = (size_t)rows * cols;
        float *y = host_floats(n), *bias = host_floats(cols), *db = host_floats(cols);
        float *dy = on_gpu(y, n * sizeof *y), *dbias = on_gpu(bias, cols * sizeof *bias), *ddb = gpu->alloc(cols * 4);
        gpu->sum_rows(ddb, dy, rows, cols);
        cpu->sum_rows(db, y, rows, cols);
        same_bits("sum_rows", ddb, db, cols * sizeof *db);
        gpu->add_bias(dy, dbias, rows, cols);
        cpu->add_bias(y, bias, rows, cols);
        same_bits("add_bias", dy, y, n * sizeof *y);
        gpu->release(dy);
        gpu->release(dbias);
        gpu->release(ddb);
        free(y);
        free(bias);
        free(db);
    }
}

static void test_relu(void **state)
{
    size_t n = 70001;
    float *x = host_floats(n), *dy = host_floats(n), *y = malloc(n * 4), *dx = malloc(n * 4);
    x[0] = NAN;
    x[1] = -0.0f;
    float *gx = on_gpu(x, n * 4), *gdy = on_gpu(dy, n * 4), *gy = gpu->alloc(n * 4), *gdx = gpu->alloc(n * 4);
    cpu->relu_forward(y, x, n);
    gpu->relu_forward(gy, gx, n);
    same_bits("relu_forward", gy, y, n * 4);
    cpu->relu_backward(dx, dy, y, n);
    gpu->relu_backward(gdx, gdy, gy, n);
    same_bits("relu_backward", gdx, dx, n * 4);
    gpu->release(gx);
    gpu->release(gdy);
    gpu->release(gy);
    gpu->release(gdx);
    free(x);
    free(dy);
    free(y);
    free(dx);
}

static void test_im2col_col2im(void **state)
{
    /* batch, h, w, ch, k: the CNN's first and second convolutions, and odd ones */
    static const int shapes[][5] = {
        {2, 28, 28, 1, 5}, {2, 12, 12, 8, 5}, {3, 7, 5, 3, 3}, {1, 4, 4, 2, 4}, {1, 3, 3, 1, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int b = shapes[s][0], h = shapes[s][1], w = shapes[s][2], ch = shapes[s][3], k = shapes[s][4];
        size_t nx = (size_t)b * h * w * ch, ncol = (size_t)b * (h - k + 1) * (w - k + 1) * k * k * ch;
        float *x = host_floats(nx), *col = malloc(ncol * 4), *dcol = host_floats(ncol), *dx = malloc(nx * 4);
        float *gx = on_gpu(x, nx * 4), *gcol = gpu->alloc(ncol * 4), *gdcol = on_gpu(dcol, ncol * 4);
        float *gdx = on_gpu(x, nx * 4); /* overwritten */
        cpu->im2col(col, x, b, h, w, ch, k);
        gpu->im2col(gcol, gx, b, h, w, ch, k);
        same_bits("im2col", gcol, col, ncol * 4);
        cpu->col2im(dx, dcol, b, h, w, ch, k);
        gpu->col2im(gdx, gdcol, b, h, w, ch, k);
        same_bits("col2im", gdx, dx, nx * 4);
        gpu->release(gx);
        gpu->release(gcol);
        gpu->release(gdcol);
        gpu->release(gdx);
        free(x);
        free(col);
        free(dcol);
        free(dx);
    }
}

static void test_maxpool(void **state)
{
    static const int shapes[][4] = {{2, 24, 24, 8}, {3, 8, 8, 16}, {1, 2, 2, 1}, {2, 6, 4, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int b = shapes[s][0], h = shapes[s][1], w = shapes[s][2], ch = shapes[s][3];
        size_t nx = (size_t)b * h * w * ch, ny = nx / 4;
        float *x = host_floats(nx), *y = malloc(ny * 4), *dy = host_floats(ny), *dx = malloc(nx * 4);
        int *arg = malloc(ny * sizeof *arg);
        for (size_t i = 0; i < nx; i += 5)
            x[i] = x[i / 2]; /* ties inside windows: the first one wins */
        float *gx = on_gpu(x, nx * 4), *gy = gpu->alloc(ny * 4), *gdy = on_gpu(dy, ny * 4), *gdx = gpu->alloc(nx * 4);
        int *garg = gpu->alloc(ny * sizeof *garg);
        cpu->maxpool_forward(y, arg, x, b, h, w, ch);
        gpu->maxpool_forward(gy, garg, gx, b, h, w, ch);
        same_bits("maxpool_forward", gy, y, ny * 4);
        same_bits("maxpool_forward argmax", garg, arg, ny * sizeof *arg);
        cpu->maxpool_backward(dx, dy, arg, b, h, w, ch);
        gpu->maxpool_backward(gdx, gdy, garg, b, h, w, ch);
        same_bits("maxpool_backward", gdx, dx, nx * 4);
        gpu->release(gx);
        gpu->release(gy);
        gpu->release(gdy);
        gpu->release(gdx);
        gpu->release(garg);
        free(x);
        free(y);
        free(dy);
        free(dx);
        free(arg);
    }
}

static void test_softmax_count_correct(void **state)
{
    static const int shapes[][2] = {{64, 10}, {300, 10}, {5, 1}, {17, 33}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int rows = shapes[s][0], classes = shapes[s][1];
        size_t n = (size_t)rows * classes;
        float *z = host_floats(n), *d = malloc(n * 4);
        int *labels = malloc(rows * sizeof *labels);
        for (int r = 0; r < rows; r++) {
            labels[r] = (int)(rnd64() % (uint64_t)classes);
            if (r % 3 == 0) /* a tie for the largest logit */
                z[(size_t)r * classes + classes - 1] = z[(size_t)r * classes];
        }
        float *gz = on_gpu(z, n * 4), *gd = gpu->alloc(n * 4);
        int *glabels = on_gpu(labels, rows * sizeof *labels);
        double want = cpu->softmax_xent(d, z, labels, rows, classes);
        double got = gpu->softmax_xent(gd, gz, glabels, rows, classes);
        if (!(fabs(got - want) <= 1e-5 * fabs(want) + 1e-6))
            fail_msg("softmax_xent loss %dx%d: cpu %.12g gpu %.12g", rows, classes, want, got);
        close_floats("softmax_xent dlogits", gd, d, NULL, n, 1e-5);
        long wc = cpu->count_correct(z, labels, rows, classes), gc = gpu->count_correct(gz, glabels, rows, classes);
        if (wc != gc)
            fail_msg("count_correct %dx%d: cpu %ld gpu %ld", rows, classes, wc, gc);
        gpu->release(gz);
        gpu->release(gd);
        gpu->release(glabels);
        free(z);
        free(d);
        free(labels);
    }
}

static void test_sgd_momentum(void **state)
{
    size_t n = 50003;
    float *w = host_floats(n), *v = host_floats(n), *g = host_floats(n);
    float *gw = on_gpu(w, n * 4), *gv = on_gpu(v, n * 4), *gg = on_gpu(g, n * 4);
    for (int step = 0; step < 3; step++) {
        cpu->sgd_momentum(w, v, g, n, 0.05f, 0.9f, 3.0f);
        gpu->sgd_momentum(gw, gv, gg, n, 0.05f, 0.9f, 3.0f);
    }
    same_bits("sgd_momentum v", gv, v, n * 4);
    same_bits("sgd_momentum w", gw, w, n * 4);
    gpu->release(gw);
    gpu->release(gv);
    gpu->release(gg);
    free(w);
    free(v);
    free(g);
}

/* |x| of n floats, into a new buffer. */
static float *abs_of(const float *x, size_t n)
{
    float *y = malloc((n ? n : 1) * sizeof *y);
    assert_non_null(y);
    for (size_t i = 0; i < n; i++)
        y[i] = fabsf(x[i]);
    return y;
}

/* sgemm with k = 0 (C = beta C, a kernel of its own) bit for bit; with k > 0 (cuBLAS) within
 * 1e-5 of the sum of the magnitudes of its terms (any order of summation meets that). */
static void test_sgemm(void **state)
{
    static const int shapes[][3] = {{32, 256, 0}, {7, 9, 0}, {32, 256, 784}, {32, 10, 256}, {5, 3, 1}, {64, 8, 25}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        if (k > 0 && !have_cublas)
            continue;
        for (int t = 0; t < 4; t++) {
            int ta = t & 1, tb = t >> 1;
            int lda = ta ? m : (k > 0 ? k : 1), ldb = tb ? (k > 0 ? k : 1) : n, ldc = n + 3;
            size_t na = (size_t)m * k + 1, nb = (size_t)k * n + 1, nc = (size_t)m * ldc;
            float *a = host_floats(na), *b = host_floats(nb), *c = host_floats(nc);
            float *ga = on_gpu(a, na * 4), *gb = on_gpu(b, nb * 4), *gc = on_gpu(c, nc * 4);
            float beta = t == 3 ? 0.0f : 0.5f;
            float *ma = abs_of(a, na), *mb = abs_of(b, nb), *mc = abs_of(c, nc);
            cpu->sgemm(ta, tb, m, n, k, 1.5f, ma, lda, mb, ldb, fabsf(beta), mc, ldc);
            cpu->sgemm(ta, tb, m, n, k, 1.5f, a, lda, b, ldb, beta, c, ldc);
            gpu->sgemm(ta, tb, m, n, k, 1.5f, ga, lda, gb, ldb, beta, gc, ldc);
            if (k == 0)
                same_bits("sgemm k=0", gc, c, nc * 4);
            else
                close_floats("sgemm (cuBLAS)", gc, c, mc, nc, 1e-5);
            free(ma);
            free(mb);
            free(mc);
            gpu->release(ga);
            gpu->release(gb);
            gpu->release(gc);
            free(a);
            free(b);
            free(c);
        }
    }
}

int main(void)
{
    char msg[512];
    const char *no_cublas = getenv("APSMPI_TEST_NO_CUBLAS");
    if (backend_cuda_init(0, msg, sizeof msg) == 0) {
        have_cublas = 1;
        printf("cuda backend: %s\n", msg);
    } else if (strstr(msg, "no usable GPU") != NULL) {
        printf("SKIP: %s\n", msg);
        return 77;
    } else if (no_cublas != NULL && !strcmp(no_cublas, "1")) {
        printf("backend_cuda_init failed (%s): APSMPI_TEST_NO_CUBLAS=1, the kernels are tested without it, sgemm "
               "through cuBLAS is not\n",
               msg);
    } else {
        printf("backend_cuda_init failed: %s\n", msg);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_is_zeroed),
        cmocka_unit_test(test_add_bias_sum_rows),
        cmocka_unit_test(test_relu),
        cmocka_unit_test(test_im2col_col2im),
        cmocka_unit_test(test_maxpool),
        cmocka_unit_test(test_softmax_count_correct),
        cmocka_unit_test(test_sgd_momentum),
        cmocka_unit_test(test_sgemm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
