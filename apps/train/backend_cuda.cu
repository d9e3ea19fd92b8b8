/* backend_cuda.cu: the compute primitives on one GPU: sgemm through cuBLAS in strict FP32, the rest as kernels without atomics (reproducible bits). */
/*
 * Only in apsmpi_train_cuda (see Makefile.am). Every call goes to the legacy default stream,
 * so the work runs in the order it was queued; cudaMemcpy to the host, the primitives that
 * return a number, and synchronize wait for it. Semantics are those of backend_cpu.c, and
 * every sum that one thread owns is done in the CPU's order with the CPU's roundings
 * (sum_rows, col2im, maxpool, count_correct, sgd_momentum, the elementwise kernels match it
 * bit for bit); cuBLAS's sums and the GPU's expf/logf in softmax_xent differ from the
 * host's in the last bits.
 *
 * Run-to-run reproducibility (same seed, same ranks, same GPU model and toolkit): no float
 * atomics anywhere, every reduction has a fixed order, and cuBLAS runs one handle on one
 * stream in pedantic FP32 math (no TF32, no BF16x9 emulation, no atomics), for which
 * cuBLAS promises the same bits on every run on GPUs of the same architecture and SM count.
 */
#include "backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 256

static cublasHandle_t blas;
static int ready;

/* ---- errors: a failing CUDA or cuBLAS call ends the program with its name and reason ---- */

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "apsmpi_train: cuda backend: %s: %s (%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
        exit(1);
    }
}

static void check_blas(cublasStatus_t s, const char *what)
{
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "apsmpi_train: cuda backend: %s: %s (status %d)\n", what, cublasGetStatusString(s), (int)s);
        exit(1);
    }
}

#define CHECK(call) check((call), #call)
/* After a launch: a bad configuration shows at once, a fault inside the kernel at the next
 * call that waits for it (at the latest the loss copied back in the same step). */
#define CHECK_LAUNCH(kernel) check(cudaGetLastError(), "launch of " #kernel)

/* Blocks for a grid-stride loop over n items (n > 0). */
static unsigned int grid_for(size_t n)
{
    size_t blocks = (n + THREADS - 1) / THREADS;
    return (unsigned int)(blocks < (1u << 20) ? blocks : (1u << 20));
}

#define FOR_EACH(i, n) \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)(n); i += (size_t)gridDim.x * blockDim.x)

/* ---- kernels ---- */

/* One thread per element. */
static __global__ void add_bias_kernel(float *y, const float *bias, size_t total, int cols)
{
    FOR_EACH(i, total) { y[i] += bias[i % (size_t)cols]; }
}

/* db[c] = dy[0][c] + dy[1][c] + ... in row order, like the CPU. A block owns up to THREADS
 * columns; it stages tiles of rows of its columns in shared memory with coalesced loads by
 * all its threads, then one thread per column adds its column's values in row order. */
#define SUM_ROWS_TILE 8192 /* floats: 32 KiB of shared memory */
static __global__ void sum_rows_kernel(float *db, const float *dy, int rows, int cols)
{
    __shared__ float tile[SUM_ROWS_TILE];
    int c0 = blockIdx.x * THREADS, cw = cols - c0 < THREADS ? cols - c0 : THREADS;
    int per_tile = SUM_ROWS_TILE / cw; /* >= SUM_ROWS_TILE / THREADS rows */
    float s = 0.0f;

    for (int r0 = 0; r0 < rows; r0 += per_tile) {
        int n = rows - r0 < per_tile ? rows - r0 : per_tile;
        for (int t = threadIdx.x; t < n * cw; t += blockDim.x)
            tile[t] = dy[(size_t)(r0 + t / cw) * cols + c0 + t % cw];
        __syncthreads();
        if ((int)threadIdx.x < cw)
            for (int r = 0; r < n; r++)
                s += tile[r * cw + threadIdx.x];
        __syncthreads();
    }
    if ((int)threadIdx.x < cw)
        db[c0 + threadIdx.x] = s;
}

/* The batch, row, column and channel of element i of an NHWC tensor of h x w x ch images. */
struct nhwc {
    size_t b;
    int y, x, c;
};

static __device__ struct nhwc nhwc_of(size_t i, int h, int w, int ch)
{
    struct nhwc p;
    size_t t = i / (size_t)ch;
    p.c = (int)(i % (size_t)ch);
    p.x = (int)(t % (size_t)w);
    t /= (size_t)w;
    p.y = (int)(t % (size_t)h);
    p.b = t / (size_t)h;
    return p;
}

/* One thread per element; NaN gives 0 as on the CPU. */
static __global__ void relu_forward_kernel(float *y, const float *x, size_t n)
{
    FOR_EACH(i, n) { y[i] = x[i] > 0.0f ? x[i] : 0.0f; }
}

static __global__ void relu_backward_kernel(float *dx, const float *dy, const float *y, size_t n)
{
    FOR_EACH(i, n) { dx[i] = y[i] > 0.0f ? dy[i] : 0.0f; }
}

/* One thread per element of col (batch * oh * ow rows of k * k * ch): coalesced writes; a
 * patch row of k pixels is k * ch consecutive floats of x. */
static __global__ void im2col_kernel(float *col, const float *x, size_t total, int h, int w, int ch, int k, int oh,
                                     int ow)
{
    size_t span = (size_t)k * ch, patch = (size_t)k * span;
    FOR_EACH(i, total)
    {
        size_t row = i / patch, j = i % patch;
        size_t ky = j / span, rest = j % span; /* rest = kx * ch + c */
        size_t ox = row % (size_t)ow, t = row / (size_t)ow;
        size_t oy = t % (size_t)oh, b = t / (size_t)oh;
        col[i] = x[((b * h + oy + ky) * w + ox) * ch + rest];
    }
}

/* The adjoint without atomics: one thread per element of dx gathers the patch entries that
 * came from it, in the CPU's order (output row oy ascending, then column ox ascending; the
 * kernel offset is then y - oy, x - ox), from +0: the same bits as the CPU's scatter. */
static __global__ void col2im_kernel(float *dx, const float *dcol, size_t total, int h, int w, int ch, int k, int oh,
                                     int ow)
{
    size_t span = (size_t)k * ch, patch = (size_t)k * span;
    FOR_EACH(i, total)
    {
        struct nhwc p = nhwc_of(i, h, w, ch);
        size_t b = p.b;
        int y = p.y, x = p.x, c = p.c;
        int oy_lo = y - k + 1 > 0 ? y - k + 1 : 0, oy_hi = y < oh - 1 ? y : oh - 1;
        int ox_lo = x - k + 1 > 0 ? x - k + 1 : 0, ox_hi = x < ow - 1 ? x : ow - 1;
        float s = 0.0f;
        for (int oy = oy_lo; oy <= oy_hi; oy++)
            for (int ox = ox_lo; ox <= ox_hi; ox++)
                s += dcol[((b * oh + oy) * ow + ox) * patch + (size_t)(y - oy) * span + (size_t)(x - ox) * ch + c];
        dx[i] = s;
    }
}

/* One thread per output; the first largest of the window wins, as on the CPU (same int
 * index arithmetic as the CPU, whose argmax is an int). */
static __global__ void maxpool_forward_kernel(float *y, int *argmax, const float *x, size_t total, int h, int w, int ch,
                                              int oh, int ow)
{
    FOR_EACH(o, total)
    {
        struct nhwc p = nhwc_of(o, oh, ow, ch);
        int b = (int)p.b, oy = p.y, ox = p.x, c = p.c;
        int best = ((b * h + 2 * oy) * w + 2 * ox) * ch + c;
        for (int dy = 0; dy < 2; dy++)
            for (int dx = 0; dx < 2; dx++) {
                int i = ((b * h + 2 * oy + dy) * w + 2 * ox + dx) * ch + c;
                if (x[i] > x[best])
                    best = i;
            }
        y[o] = x[best];
        argmax[o] = best;
    }
}

/* The windows do not overlap, so an input element belongs to at most one output: one thread
 * per element of dx takes that output's gradient if it was the winner, else 0 (no scatter,
 * no atomics; 0.0f + dy as the CPU's += on a zeroed dx, which turns -0 into +0). */
static __global__ void maxpool_backward_kernel(float *dx, const float *dy, const int *argmax, size_t total, int h,
                                               int w, int ch, int oh, int ow)
{
    FOR_EACH(i, total)
    {
        struct nhwc p = nhwc_of(i, h, w, ch);
        size_t b = p.b;
        int y = p.y, x = p.x, c = p.c;
        float v = 0.0f;
        if (y / 2 < oh && x / 2 < ow) {
            size_t o = ((b * oh + y / 2) * ow + x / 2) * ch + c;
            if ((size_t)argmax[o] == i)
                v = 0.0f + dy[o];
        }
        dx[i] = v;
    }
}

/* One thread per row, the CPU's loops over the classes in the same order: dlogits = softmax -
 * onehot, and the row's loss log(sum) - (z[label] - zmax) in double into loss[r]. */
static __global__ void softmax_xent_kernel(float *dlogits, double *loss, const float *logits, const int *labels,
                                           int rows, int classes)
{
    FOR_EACH(r, rows)
    {
        const float *z = logits + r * (size_t)classes;
        float *d = dlogits + r * (size_t)classes;
        float zmax = z[0], sum = 0.0f;
        int label = labels[r];
        for (int c = 1; c < classes; c++)
            if (z[c] > zmax)
                zmax = z[c];
        for (int c = 0; c < classes; c++) {
            d[c] = expf(z[c] - zmax);
            sum += d[c];
        }
        for (int c = 0; c < classes; c++)
            d[c] /= sum;
        if (label < 0 || label >= classes) { /* never from the data set; NaN rather than a stray write */
            loss[r] = nan("");
            continue;
        }
        d[label] -= 1.0f;
        loss[r] = (double)logf(sum) - (double)(z[label] - zmax);
    }
}

/* One thread per row: 1 if the first largest logit is at the label. */
static __global__ void count_correct_kernel(int *hit, const float *logits, const int *labels, int rows, int classes)
{
    FOR_EACH(r, rows)
    {
        const float *z = logits + r * (size_t)classes;
        int best = 0;
        for (int c = 1; c < classes; c++)
            if (z[c] > z[best])
                best = c;
        hit[r] = best == labels[r];
    }
}

/* One thread per element; explicit roundings, so nvcc fuses nothing into an FMA and every
 * step rounds as the CPU's does. */
static __global__ void sgd_momentum_kernel(float *w, float *v, const float *g, size_t n, float lr, float momentum,
                                           float divisor)
{
    FOR_EACH(i, n)
    {
        float vi = __fadd_rn(__fmul_rn(momentum, v[i]), __fdiv_rn(g[i], divisor));
        v[i] = vi;
        w[i] = __fsub_rn(w[i], __fmul_rn(lr, vi));
    }
}

/* C = beta C (beta 0: zeros, C not read), for sgemm with k = 0. */
static __global__ void scale_kernel(float *c, int m, int n, int ldc, float beta)
{
    FOR_EACH(i, (size_t)m * n)
    {
        float *cij = c + (i / n) * (size_t)ldc + i % n;
        *cij = beta == 0.0f ? 0.0f : __fmul_rn(beta, *cij);
    }
}

/* ---- per-row results on their way to the host ---- */

struct scratch {
    void *dev, *host;
    size_t bytes;
};

static struct scratch loss_rows, hit_rows;

/* Device and host arrays of at least bytes (grown, never shrunk). */
static void scratch_reserve(struct scratch *s, size_t bytes)
{
    if (bytes <= s->bytes)
        return;
    CHECK(cudaFree(s->dev));
    free(s->host);
    s->dev = NULL;
    CHECK(cudaMalloc(&s->dev, bytes));
    s->host = malloc(bytes);
    if (!s->host) {
        fprintf(stderr, "apsmpi_train: out of memory for %zu bytes\n", bytes);
        exit(1);
    }
    s->bytes = bytes;
}

/* ---- the table's members ---- */

static void *cuda_alloc(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        fprintf(stderr, "apsmpi_train: cuda backend: out of GPU memory for %zu bytes: %s (%s)\n", bytes,
                cudaGetErrorString(e), cudaGetErrorName(e));
        exit(1);
    }
    CHECK(cudaMemset(p, 0, bytes ? bytes : 1));
    return p;
}

static void cuda_release(void *p) { CHECK(cudaFree(p)); }

static void *cuda_host_alloc(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMallocHost(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        fprintf(stderr, "apsmpi_train: cuda backend: cannot get %zu bytes of page-locked host memory: %s (%s)\n", bytes,
                cudaGetErrorString(e), cudaGetErrorName(e));
        exit(1);
    }
    return p;
}

static void cuda_host_release(void *p) { CHECK(cudaFreeHost(p)); }

static void cuda_to_device(void *dst, const void *src, size_t bytes)
{
    if (bytes)
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

static void cuda_to_host(void *dst, const void *src, size_t bytes)
{
    if (bytes)
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

static void cuda_synchronize(void) { CHECK(cudaDeviceSynchronize()); }

/* Row-major C (m x n, ldc) is column-major C^T (n x m, ldc), and C^T = op(B)^T op(A)^T: the
 * column-major product with A and B, m and n swapped. Row-major B read column-major is B^T,
 * so op(B) stays op(B): transposed when tb. Leading dimensions carry over unchanged: for
 * cuBLAS, B's is >= n (tb false: B stored k x n) or >= k (tb: n x k), A's >= k (ta false:
 * m x k) or >= m (ta: k x m), C's >= n, which are sgemm.h's. */
static void cuda_sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                       int ldb, float beta, float *c, int ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        scale_kernel<<<grid_for((size_t)m * n), THREADS>>>(c, m, n, ldc, beta);
        CHECK_LAUNCH(scale_kernel);
        return;
    }
    check_blas(cublasSgemm(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b,
                           ldb, a, lda, &beta, c, ldc),
               "cublasSgemm");
}

static void cuda_add_bias(float *y, const float *bias, int rows, int cols)
{
    size_t total = (size_t)rows * (cols > 0 ? cols : 0);
    if (rows <= 0 || total == 0)
        return;
    add_bias_kernel<<<grid_for(total), THREADS>>>(y, bias, total, cols);
    CHECK_LAUNCH(add_bias_kernel);
}

static void cuda_sum_rows(float *db, const float *dy, int rows, int cols)
{
    if (cols <= 0)
        return;
    /* rows <= 0: the loop is empty and db is set to 0, as on the CPU */
    sum_rows_kernel<<<(cols + THREADS - 1) / THREADS, THREADS>>>(db, dy, rows > 0 ? rows : 0, cols);
    CHECK_LAUNCH(sum_rows_kernel);
}

static void cuda_relu_forward(float *y, const float *x, size_t n)
{
    if (n == 0)
        return;
    relu_forward_kernel<<<grid_for(n), THREADS>>>(y, x, n);
    CHECK_LAUNCH(relu_forward_kernel);
}

static void cuda_relu_backward(float *dx, const float *dy, const float *y, size_t n)
{
    if (n == 0)
        return;
    relu_backward_kernel<<<grid_for(n), THREADS>>>(dx, dy, y, n);
    CHECK_LAUNCH(relu_backward_kernel);
}

static void cuda_im2col(float *col, const float *x, int batch, int h, int w, int ch, int k)
{
    int oh = h - k + 1, ow = w - k + 1;
    size_t total;
    if (batch <= 0 || oh <= 0 || ow <= 0 || ch <= 0 || k <= 0)
        return;
    total = (size_t)batch * oh * ow * k * k * ch;
    im2col_kernel<<<grid_for(total), THREADS>>>(col, x, total, h, w, ch, k, oh, ow);
    CHECK_LAUNCH(im2col_kernel);
}

static void cuda_col2im(float *dx, const float *dcol, int batch, int h, int w, int ch, int k)
{
    int oh = h - k + 1, ow = w - k + 1;
    size_t total;
    if (batch <= 0 || h <= 0 || w <= 0 || ch <= 0)
        return;
    total = (size_t)batch * h * w * ch;
    col2im_kernel<<<grid_for(total), THREADS>>>(dx, dcol, total, h, w, ch, k, oh, ow);
    CHECK_LAUNCH(col2im_kernel);
}

static void cuda_maxpool_forward(float *y, int *argmax, const float *x, int batch, int h, int w, int ch)
{
    int oh = h / 2, ow = w / 2;
    size_t total;
    if (batch <= 0 || oh <= 0 || ow <= 0 || ch <= 0)
        return;
    total = (size_t)batch * oh * ow * ch;
    maxpool_forward_kernel<<<grid_for(total), THREADS>>>(y, argmax, x, total, h, w, ch, oh, ow);
    CHECK_LAUNCH(maxpool_forward_kernel);
}

static void cuda_maxpool_backward(float *dx, const float *dy, const int *argmax, int batch, int h, int w, int ch)
{
    size_t total;
    if (batch <= 0 || h <= 0 || w <= 0 || ch <= 0)
        return;
    total = (size_t)batch * h * w * ch;
    maxpool_backward_kernel<<<grid_for(total), THREADS>>>(dx, dy, argmax, total, h, w, ch, h / 2, w / 2);
    CHECK_LAUNCH(maxpool_backward_kernel);
}

/* The rows' losses come back to the host and are summed there in row order, in double. */
static double cuda_softmax_xent(float *dlogits, const float *logits, const int *labels, int rows, int classes)
{
    const double *host;
    double loss = 0.0;
    if (rows <= 0 || classes <= 0)
        return 0.0;
    scratch_reserve(&loss_rows, (size_t)rows * sizeof(double));
    softmax_xent_kernel<<<grid_for((size_t)rows), THREADS>>>(dlogits, (double *)loss_rows.dev, logits, labels, rows,
                                                             classes);
    CHECK_LAUNCH(softmax_xent_kernel);
    CHECK(cudaMemcpy(loss_rows.host, loss_rows.dev, (size_t)rows * sizeof(double), cudaMemcpyDeviceToHost));
    host = (const double *)loss_rows.host;
    for (int r = 0; r < rows; r++)
        loss += host[r];
    return loss;
}

static long cuda_count_correct(const float *logits, const int *labels, int rows, int classes)
{
    const int *host;
    long correct = 0;
    if (rows <= 0 || classes <= 0)
        return 0;
    scratch_reserve(&hit_rows, (size_t)rows * sizeof(int));
    count_correct_kernel<<<grid_for((size_t)rows), THREADS>>>((int *)hit_rows.dev, logits, labels, rows, classes);
    CHECK_LAUNCH(count_correct_kernel);
    CHECK(cudaMemcpy(hit_rows.host, hit_rows.dev, (size_t)rows * sizeof(int), cudaMemcpyDeviceToHost));
    host = (const int *)hit_rows.host;
    for (int r = 0; r < rows; r++)
        correct += host[r];
    return correct;
}

static void cuda_sgd_momentum(float *w, float *v, const float *g, size_t n, float lr, float momentum, float divisor)
{
    if (n == 0)
        return;
    sgd_momentum_kernel<<<grid_for(n), THREADS>>>(w, v, g, n, lr, momentum, divisor);
    CHECK_LAUNCH(sgd_momentum_kernel);
}

/* ---- set-up ---- */

extern "C" int backend_cuda_init(int local_rank, char *msg, size_t msglen)
{
    int count = 0, device;
    cudaError_t e;
    cublasStatus_t s;
    struct cudaDeviceProp prop;
    struct cudaFuncAttributes attr;

    if (ready) {
        snprintf(msg, msglen, "already set up");
        return 0;
    }
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        if (e != cudaSuccess)
            snprintf(msg, msglen, "no usable GPU: cudaGetDeviceCount returned %d (%s: %s)", (int)e, cudaGetErrorName(e),
                     cudaGetErrorString(e));
        else
            snprintf(msg, msglen, "no usable GPU: cudaGetDeviceCount returned cudaSuccess and 0 devices");
        return -1;
    }
    device = (local_rank > 0 ? local_rank : 0) % count;
    if ((e = cudaSetDevice(device)) != cudaSuccess || (e = cudaFree(NULL)) != cudaSuccess ||
        (e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess) {
        snprintf(msg, msglen, "GPU %d of %d (cudaGetDeviceCount returned %d): cannot be used: %s: %s", device, count,
                 count, cudaGetErrorName(e), cudaGetErrorString(e));
        return -1;
    }
    /* this build's kernels must have an image for this GPU (SASS sm_80, sm_90; PTX compute_90) */
    if ((e = cudaFuncGetAttributes(&attr, sgd_momentum_kernel)) != cudaSuccess) {
        snprintf(msg, msglen, "GPU %d of %d, %s (sm_%d%d): no kernel of this build runs on it: %s: %s", device, count,
                 prop.name, prop.major, prop.minor, cudaGetErrorName(e), cudaGetErrorString(e));
        return -1;
    }
    if ((s = cublasCreate(&blas)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetAtomicsMode(blas, CUBLAS_ATOMICS_NOT_ALLOWED)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetStream(blas, 0)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, msglen, "GPU %d of %d, %s: cuBLAS cannot be set up: %s", device, count, prop.name,
                 cublasGetStatusString(s));
        return -1;
    }
    ready = 1;
    snprintf(msg, msglen, "GPU %d of %d, %s (sm_%d%d), cuBLAS FP32 pedantic math", device, count, prop.name, prop.major,
             prop.minor);
    return 0;
}

extern "C" const struct backend backend_cuda = {
    .name = "cuda",
    .device_memory = true,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .host_alloc = cuda_host_alloc,
    .host_release = cuda_host_release,
    .to_device = cuda_to_device,
    .to_host = cuda_to_host,
    .synchronize = cuda_synchronize,
    .sgemm = cuda_sgemm,
    .add_bias = cuda_add_bias,
    .sum_rows = cuda_sum_rows,
    .relu_forward = cuda_relu_forward,
    .relu_backward = cuda_relu_backward,
    .im2col = cuda_im2col,
    .col2im = cuda_col2im,
    .maxpool_forward = cuda_maxpool_forward,
    .maxpool_backward = cuda_maxpool_backward,
    .softmax_xent = cuda_softmax_xent,
    .count_correct = cuda_count_correct,
    .sgd_momentum = cuda_sgd_momentum,
};
