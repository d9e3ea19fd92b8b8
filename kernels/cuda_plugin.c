/* cuda_plugin.c: libapsmpi_cuda.so, the CUDA device plugin: streams, events, memory and copies, and the kernels. */
/* libapsmpi.so loads this file's library with dlopen only when a job hands it GPU memory, so
 * that a CPU-only job never loads CUDA. Streams are created blocking (they wait for work on
 * the legacy default stream, where a job that does not manage streams computes its
 * gradients); the library synchronises them before each call returns. */
#include <cuda_runtime.h>

#include "apsmpi_kernels.h"
#include "device/device_plugin.h"

static int device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

static int device_of(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError(); /* a pointer CUDA does not know: host memory; clear the sticky state */
        return -1;
    }
    return a.type == cudaMemoryTypeDevice ? a.device : -1;
}

static int set_device(int dev, int *previous)
{
    cudaError_t e = cudaGetDevice(previous);
    if (e == cudaSuccess && *previous != dev)
        e = cudaSetDevice(dev);
    return (int)e;
}

static void *stream_create(void)
{
    cudaStream_t s;
    return cudaStreamCreate(&s) == cudaSuccess ? (void *)s : NULL;
}

static void stream_destroy(void *s) { cudaStreamDestroy((cudaStream_t)s); }
static int stream_sync(void *s) { return (int)cudaStreamSynchronize((cudaStream_t)s); }

static void *event_create(void)
{
    cudaEvent_t e;
    return cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess ? (void *)e : NULL;
}

static void event_destroy(void *e) { cudaEventDestroy((cudaEvent_t)e); }
static int event_record(void *e, void *s) { return (int)cudaEventRecord((cudaEvent_t)e, (cudaStream_t)s); }
static int event_sync(void *e) { return (int)cudaEventSynchronize((cudaEvent_t)e); }

static int stream_wait_event(void *s, void *e) { return (int)cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)e, 0); }

static void *device_alloc(size_t bytes)
{
    void *p = NULL;
    return cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess ? p : NULL;
}

static void device_free(void *p) { cudaFree(p); }

static void *host_alloc(size_t bytes)
{
    void *p = NULL;
    return cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocPortable) == cudaSuccess ? p : NULL;
}

static void host_free(void *p) { cudaFreeHost(p); }

static int copy(void *dst, const void *src, size_t bytes, void *s)
{
    return (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)s);
}

static const char *error_string(int err) { return cudaGetErrorString((cudaError_t)err); }

static const apsmpi_device_ops cuda_ops = {
    .abi = APSMPI_DEVICE_PLUGIN_ABI,
    .name = "CUDA",
    .device_count = device_count,
    .device_of = device_of,
    .set_device = set_device,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_sync = stream_sync,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_sync = event_sync,
    .stream_wait_event = stream_wait_event,
    .device_alloc = device_alloc,
    .device_free = device_free,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .copy = copy,
    .block_exponents = apsmpi_cuda_block_exponents,
    .encode = apsmpi_cuda_encode,
    .decode = apsmpi_cuda_decode,
    .encode_measured = apsmpi_cuda_encode_measured,
    .error_string = error_string,
};

APSMPI_PLUGIN_EXPORT const apsmpi_device_ops *apsmpi_device_plugin(void) { return &cuda_ops; }
