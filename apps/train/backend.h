/* backend.h: the compute primitives the models are built from; one implementation per device (backend_cpu.c, backend_cuda.cu). */
#ifndef TRAIN_BACKEND_H
#define TRAIN_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every pointer a primitive takes is device memory from alloc (host memory on the CPU).
 * Matrices are row-major; images are NHWC (batch, height, width, channels). A primitive
 * that returns a number returns it on the host. A GPU backend implements the same table
 * in its own file (sgemm through cuBLAS, the rest as kernels); the model code, the
 * gradient allreduce on device buffers and the training loop stay as they are. A device
 * backend may queue its work: the copies to the host and the primitives that return a
 * number wait for it, and synchronize waits for all of it. */
struct backend {
    const char *name;
    /* Whether alloc's memory is on a device, out of the host's reach (false: host memory,
     * which MPI can take as it is). */
    bool device_memory;
    /* Zero-filled device memory; failure ends the program with a message. */
    void *(*alloc)(size_t bytes);
    void (*release)(void *p);
    /* Host memory for staging copies to and from the device (page-locked on a GPU);
     * failure ends the program with a message. */
    void *(*host_alloc)(size_t bytes);
    void (*host_release)(void *p);
    void (*to_device)(void *dst, const void *src, size_t bytes);
    void (*to_host)(void *dst, const void *src, size_t bytes);
    /* Returns once all the work queued so far is done and its results are in memory. */
    void (*synchronize)(void);

    /* C = alpha op(A) op(B) + beta C, as in sgemm.h. */
    void (*sgemm)(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                  float beta, float *c, int ldc);
    /* y[r][c] += bias[c] for rows x cols. */
    void (*add_bias)(float *y, const float *bias, int rows, int cols);
    /* db[c] = sum over r of dy[r][c], summed in row order. */
    void (*sum_rows)(float *db, const float *dy, int rows, int cols);
    /* y = max(x, 0); dx = dy where y > 0, else 0. */
    void (*relu_forward)(float *y, const float *x, size_t n);
    void (*relu_backward)(float *dx, const float *dy, const float *y, size_t n);
    /* Valid k x k convolution patches: col[(b, oy, ox)][(ky, kx, c)] from x (batch, h, w, ch). */
    void (*im2col)(float *col, const float *x, int batch, int h, int w, int ch, int k);
    /* The adjoint: dx = sum of the patches dcol back at their places (dx is overwritten). */
    void (*col2im)(float *dx, const float *dcol, int batch, int h, int w, int ch, int k);
    /* 2x2 max pooling with stride 2 (h, w even); argmax keeps the winner's input index. */
    void (*maxpool_forward)(float *y, int *argmax, const float *x, int batch, int h, int w, int ch);
    void (*maxpool_backward)(float *dx, const float *dy, const int *argmax, int batch, int h, int w, int ch);
    /* Softmax cross-entropy of logits (rows x classes) against labels: dlogits = softmax -
     * onehot (per sample, not averaged); returns the summed loss. */
    double (*softmax_xent)(float *dlogits, const float *logits, const int *labels, int rows, int classes);
    /* How many rows have their largest logit at the label (the first one on ties). */
    long (*count_correct)(const float *logits, const int *labels, int rows, int classes);
    /* SGD with momentum on a summed gradient: v = momentum v + g / divisor; w -= lr v. */
    void (*sgd_momentum)(float *w, float *v, const float *g, size_t n, float lr, float momentum, float divisor);
};

extern const struct backend backend_cpu;

/* The CUDA backend: only in apsmpi_train_cuda (backend_cuda.cu, built with TRAIN_HAVE_CUDA). */
extern const struct backend backend_cuda;
/* Picks GPU local_rank % (GPUs on the node) and readies cuBLAS; must precede any use of
 * backend_cuda. Returns 0 with a description of the GPU in msg, or -1 with the reason
 * (no usable GPU: what cudaGetDeviceCount returned). */
int backend_cuda_init(int local_rank, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif
