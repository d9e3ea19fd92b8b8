/* codec_mx_kernels.cu: the CUDA kernels of the MX formats (encode, decode), bit for bit the CPU codec's. */
/* Parallelisation: one thread per MX block of 32 elements (its scale needs all 32); a warp
 * handles 32 blocks per step, staged in shared memory (32 * (1 + 4 W) bytes) so that the
 * packed side moves as coalesced 32-bit words; the floats move as 8 float4 per thread where
 * aligned. Grid-stride loops over warps (at most 8 thread blocks of 256 threads per SM), 64-bit
 * indices. Counters: per-thread sums, then block_add_counters (codec_device.h: a warp and a block
 * reduction, integer atomics). A measuring encode (APSMPI_FORMAT=auto) is its own instance of
 * the encode kernel, which counts the depth bins too in the same pass. The per-thread logic is
 * codec_mx_device.h. */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "apsmpi_kernels.h"
#include "codec_mx_device.h"

using namespace apsmpi_k;

namespace
{

template <int W, bool SR, bool MEASURE>
__global__ void __launch_bounds__(kThreads) mx_encode_kernel(const MxEncodeArgs a)
{
    constexpr int NC = MxCounts<MEASURE>::n;
    __shared__ uint32_t stage[kWarps][MxLayout<W>::stage_words];
    __shared__ unsigned long long red[NC][kWarps];
    const apsmpi_format f = a.f;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t nblocks = mx_blocks_of(a.n);
    const size_t stride = (size_t)gridDim.x * kWarps * 32;
    uint8_t *group = reinterpret_cast<uint8_t *>(stage[warp]) + lane * MxLayout<W>::group_bytes;
    unsigned long long counts[NC] = {};

    /* b0: the first block of this warp's step (uniform over the warp) */
    for (size_t b0 = ((size_t)blockIdx.x * kWarps + warp) * 32; b0 < nblocks; b0 += stride) {
        mx_encode_block<W, SR, MEASURE>(a, f, b0 + lane, group, counts);
        __syncwarp();
        mx_encode_copy_out<W>(a, b0, stage[warp], lane);
        __syncwarp(); /* the stage is rewritten by the next step */
    }

    if (a.counters != NULL) /* uniform over the grid */
        block_add_counters<NC>(counts, a.counters, red);
}

template <int W> __global__ void __launch_bounds__(kThreads) mx_decode_kernel(const MxDecodeArgs a)
{
    __shared__ uint32_t stage[kWarps][MxLayout<W>::stage_words];
    const apsmpi_format f = a.f;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t nblocks = mx_blocks_of(a.n);
    const size_t stride = (size_t)gridDim.x * kWarps * 32;
    const uint8_t *group = reinterpret_cast<const uint8_t *>(stage[warp]) + lane * MxLayout<W>::group_bytes;

    for (size_t b0 = ((size_t)blockIdx.x * kWarps + warp) * 32; b0 < nblocks; b0 += stride) {
        mx_decode_copy_in<W>(a, b0, stage[warp], lane);
        __syncwarp();
        mx_decode_block<W>(a, f, b0 + lane, group);
        __syncwarp(); /* the stage is rewritten by the next step */
    }
}

int sm_count()
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
        return 1;
    return sms;
}

/* The encode kernel of width W for the rounding and whether it measures. */
template <int W>
cudaError_t launch_mx_encode(const MxEncodeArgs &a, int stochastic, int measure, unsigned grid, cudaStream_t st)
{
    if (measure) {
        if (stochastic)
            mx_encode_kernel<W, true, true><<<grid, kThreads, 0, st>>>(a);
        else
            mx_encode_kernel<W, false, true><<<grid, kThreads, 0, st>>>(a);
    } else {
        if (stochastic)
            mx_encode_kernel<W, true, false><<<grid, kThreads, 0, st>>>(a);
        else
            mx_encode_kernel<W, false, false><<<grid, kThreads, 0, st>>>(a);
    }
    return cudaGetLastError();
}

} /* namespace */

int apsmpi_cuda_mx_encode(const apsmpi_format *f, const float *in, size_t n, size_t first_index, apsmpi_rounding r,
                          const apsmpi_depth_bins *bins, void *out, unsigned long long *counters, void *stream)
{
    const MxEncodeArgs a = mx_encode_args(f, in, n, first_index, r, bins, out, counters);
    const unsigned grid = mx_codec_grid(n, sm_count());
    cudaStream_t st = (cudaStream_t)stream;
    switch (f->width) {
#define MX_ENCODE_CASE(W) \
    case W:               \
        return launch_mx_encode<W>(a, r.stochastic, bins != NULL, grid, st);
        APSMPI_MX_WIDTH_CASES(MX_ENCODE_CASE)
#undef MX_ENCODE_CASE
    default:
        return cudaErrorInvalidValue;
    }
}

int apsmpi_cuda_mx_decode(const apsmpi_format *f, const void *in, size_t n, float *out, void *stream)
{
    const MxDecodeArgs a = mx_decode_args(f, in, n, out);
    const unsigned grid = mx_codec_grid(n, sm_count());
    cudaStream_t st = (cudaStream_t)stream;
    switch (f->width) {
#define MX_DECODE_CASE(W)                                  \
    case W:                                                \
        mx_decode_kernel<W><<<grid, kThreads, 0, st>>>(a); \
        break;
        APSMPI_MX_WIDTH_CASES(MX_DECODE_CASE)
#undef MX_DECODE_CASE
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
