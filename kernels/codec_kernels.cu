/* codec_kernels.cu: the CUDA kernels of apsmpi: per-block exponents (amax), encode and decode. */
/* The results are the CPU codec's bit for bit: the per-element arithmetic is the shared source
 * of src/core/fpconv.h and the per-thread logic that of codec_device.h (also run on the host by
 * tests/gpu/emulate_kernels.cpp). This file holds what only a GPU runs: the kernels around
 * that logic (shared memory staging, warp and block reductions, atomics) and the launches.
 *
 * Parallelisation:
 * - encode/decode: one thread per unit of 8 consecutive elements (a whole number of packing
 *   groups for every width, and exactly w bytes of packed data). A warp handles 32 units, i.e.
 *   256 elements and 32*w contiguous packed bytes, staged in shared memory so that the global
 *   reads/writes of the packed side are coalesced 32-bit words whatever the width; the floats
 *   move as two float4 per thread where the pointer is 16-byte aligned. Grid-stride loops
 *   over warps (at most 8 thread blocks of 256 threads per SM), 64-bit indices throughout.
 *   Counters: per-thread sums, a warp and a block reduction, one atomicAdd per count and thread
 *   block.
 * - block exponents: max of the absolute float bits as uint32, then apsmpi_exponent_of_bits
 *   of it, as aps.c does. Blocks of at most 16 elements: a thread per block; up to 8192: a
 *   warp per block; larger: each block is cut into segments of at least 16384 elements so that
 *   the grid fills the device, a thread block per segment; the segments of one block combine
 *   their exponents with an atomic max on the int16 result (the exponent is non-decreasing in
 *   the magnitude, so the max of the segments' exponents is the exponent of the block's max;
 *   the results are first set to APSMPI_EXP_ZERO, the identity).
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "apsmpi_kernels.h"
#include "codec_device.h"
#include "codec_mx_device.h"

using namespace apsmpi_k;

namespace
{

/* ---- device helpers ---- */

__device__ __forceinline__ uint32_t warp_max(uint32_t v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = umax32(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* *p = max(*p, v) for an int16 in global memory (16-bit atomicCAS: compute capability 7.0+). */
__device__ __forceinline__ void atomic_max_i16(int16_t *p, int16_t v)
{
    unsigned short *a = reinterpret_cast<unsigned short *>(p);
    unsigned short old = *reinterpret_cast<volatile unsigned short *>(a);
    while ((int16_t)old < v) {
        unsigned short prev = atomicCAS(a, old, (unsigned short)v);
        if (prev == old)
            break;
        old = prev;
    }
}

/* ---- block exponents ---- */

/* One thread per APS block (tiny blocks). */
__global__ void __launch_bounds__(kThreads)
    amax_per_thread(const uint32_t *__restrict__ x, size_t n, size_t bl, size_t nblocks, int16_t *__restrict__ exps)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x; b < nblocks; b += stride) {
        size_t lo, hi;
        block_range(n, bl, b, &lo, &hi);
        uint32_t m = 0;
        for (size_t i = lo; i < hi; i++)
            m = umax32(m, ld_ro(x + i) & 0x7fffffffu);
        exps[b] = apsmpi_exponent_of_bits(m);
    }
}

/* One warp per APS block. */
__global__ void __launch_bounds__(kThreads)
    amax_per_warp(const uint32_t *__restrict__ x, size_t n, size_t bl, size_t nblocks, int16_t *__restrict__ exps)
{
    const unsigned lane = threadIdx.x & 31u;
    const size_t nwarps = (size_t)gridDim.x * kWarps;
    for (size_t b = (size_t)blockIdx.x * kWarps + (threadIdx.x >> 5); b < nblocks; b += nwarps) {
        size_t lo, hi;
        block_range(n, bl, b, &lo, &hi);
        uint32_t m = warp_max(range_max(x, lo, hi, lane, 32));
        if (lane == 0)
            exps[b] = apsmpi_exponent_of_bits(m);
    }
}

/* exps[0..nblocks) = INT16_MIN (APSMPI_EXP_ZERO), the identity of the max. */
__global__ void __launch_bounds__(kThreads) fill_exp_zero(int16_t *exps, size_t nblocks)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x; b < nblocks; b += stride)
        exps[b] = INT16_MIN;
}

/* One thread block per segment of seg elements of an APS block, split segments per block.
 * split == 1: the exponent is written; otherwise it is max-combined into exps, which
 * fill_exp_zero has set before. */
__global__ void __launch_bounds__(kThreads)
    amax_per_segment(const uint32_t *__restrict__ x, size_t n, size_t bl, size_t nblocks, size_t split, size_t seg,
                     int16_t *__restrict__ exps)
{
    __shared__ uint32_t red[kWarps];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t nwork = nblocks * split;
    for (size_t w = blockIdx.x; w < nwork; w += gridDim.x) {
        const size_t b = w / split, k = w - b * split;
        size_t lo, hi;
        segment_range(n, bl, seg, b, k, &lo, &hi);
        uint32_t m = warp_max(range_max(x, lo, hi, threadIdx.x, kThreads));
        if (lane == 0)
            red[warp] = m;
        __syncthreads();
        if (warp == 0) {
            m = warp_max(lane < kWarps ? red[lane] : 0u);
            if (lane == 0) {
                int16_t e = apsmpi_exponent_of_bits(m);
                if (split == 1)
                    exps[b] = e;
                else
                    atomic_max_i16(exps + b, e);
            }
        }
        __syncthreads(); /* red is reused by the next segment */
    }
}

/* ---- encode ---- */

template <int W, bool SR> __global__ void __launch_bounds__(kThreads) encode_kernel(const EncodeArgs a)
{
    __shared__ uint32_t stage[kWarps][8 * W]; /* 32 lanes x W bytes per warp */
    __shared__ unsigned long long red[2][kWarps];
    const apsmpi_format f = a.f;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t nunits = units_of(a.n);
    const size_t stride = (size_t)gridDim.x * kWarps * 32;
    uint8_t *lane_bytes = reinterpret_cast<uint8_t *>(stage[warp]) + lane * W;
    unsigned long long nonzero = 0, flushed = 0;

    /* u0: the first unit of this warp's step (uniform over the warp) */
    for (size_t u0 = ((size_t)blockIdx.x * kWarps + warp) * 32; u0 < nunits; u0 += stride) {
        encode_unit<W, SR>(a, f, u0 + lane, lane_bytes, nonzero, flushed);
        __syncwarp();
        encode_copy_out<W>(a, u0, stage[warp], lane);
        __syncwarp(); /* the stage is rewritten by the next step */
    }

    if (a.counters != NULL) { /* uniform over the grid */
        unsigned long long counts[2] = {nonzero, flushed};
        block_add_counters<2>(counts, a.counters, red);
    }
}

/* ---- decode ---- */

template <int W> __global__ void __launch_bounds__(kThreads) decode_kernel(const DecodeArgs a)
{
    __shared__ uint32_t stage[kWarps][8 * W];
    const apsmpi_format f = a.f;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t nunits = units_of(a.n);
    const size_t stride = (size_t)gridDim.x * kWarps * 32;
    const uint8_t *lane_bytes = reinterpret_cast<const uint8_t *>(stage[warp]) + lane * W;

    for (size_t u0 = ((size_t)blockIdx.x * kWarps + warp) * 32; u0 < nunits; u0 += stride) {
        decode_copy_in<W>(a, u0, stage[warp], lane);
        __syncwarp();
        decode_unit<W>(a, f, u0 + lane, lane_bytes);
        __syncwarp(); /* the stage is rewritten by the next step */
    }
}

/* ---- launches ---- */

/* Multiprocessors of the current device; 1 where it cannot be read (the launch reports it). */
int sm_count()
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
        return 1;
    return sms;
}

cudaError_t launch_encode(const EncodeArgs &a, int stochastic, unsigned grid, cudaStream_t st)
{
    switch (a.f.width) {
#define ENCODE_CASE(W)                                             \
    case W:                                                        \
        if (stochastic)                                            \
            encode_kernel<W, true><<<grid, kThreads, 0, st>>>(a);  \
        else                                                       \
            encode_kernel<W, false><<<grid, kThreads, 0, st>>>(a); \
        break;
        APSMPI_WIDTH_CASES(ENCODE_CASE)
#undef ENCODE_CASE
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t launch_decode(const DecodeArgs &a, unsigned grid, cudaStream_t st)
{
    switch (a.f.width) {
#define DECODE_CASE(W)                                  \
    case W:                                             \
        decode_kernel<W><<<grid, kThreads, 0, st>>>(a); \
        break;
        APSMPI_WIDTH_CASES(DECODE_CASE)
#undef DECODE_CASE
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

} /* namespace */

/* ---- the C interface ---- */

extern "C" int apsmpi_cuda_block_exponents(const float *x, size_t n, size_t block_len, int16_t *exps, void *stream)
{
    if (n == 0)
        return cudaSuccess;
    if (x == NULL || exps == NULL || block_len == 0)
        return cudaErrorInvalidValue;
    cudaStream_t st = (cudaStream_t)stream;
    const uint32_t *bits = reinterpret_cast<const uint32_t *>(x);
    const AmaxPlan p = amax_plan(n, block_len, sm_count());

    switch (p.path) {
    case AMAX_PER_THREAD:
        amax_per_thread<<<p.grid, kThreads, 0, st>>>(bits, n, p.bl, p.nblocks, exps);
        break;
    case AMAX_PER_WARP:
        amax_per_warp<<<p.grid, kThreads, 0, st>>>(bits, n, p.bl, p.nblocks, exps);
        break;
    default:
        if (p.split > 1) {
            fill_exp_zero<<<grid_for(div_up(p.nblocks, kThreads), sm_count()), kThreads, 0, st>>>(exps, p.nblocks);
            cudaError_t err = cudaGetLastError();
            if (err != cudaSuccess)
                return err;
        }
        amax_per_segment<<<p.grid, kThreads, 0, st>>>(bits, n, p.bl, p.nblocks, p.split, p.seg, exps);
        break;
    }
    return cudaGetLastError();
}

extern "C" int apsmpi_cuda_encode(const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                                  const int16_t *scales, size_t block_len, apsmpi_rounding r, void *out,
                                  unsigned long long *counters, void *stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!codec_args_ok(f, in, out, scales, block_len))
        return cudaErrorInvalidValue;
    if (f->mx) /* blocks of 32 with scales of their own: codec_mx_kernels.cu */
        return apsmpi_cuda_mx_encode(f, in, n, first_index, r, NULL, out, counters, stream);
    EncodeArgs a = encode_args(f, in, n, first_index, scales, block_len, r, out, counters);
    return launch_encode(a, r.stochastic, codec_grid(n, sm_count()), (cudaStream_t)stream);
}

extern "C" int apsmpi_cuda_encode_measured(const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                                           apsmpi_rounding r, const apsmpi_depth_bins *bins, void *out,
                                           unsigned long long *counters, void *stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!measured_args_ok(f, in, out, bins, counters))
        return cudaErrorInvalidValue;
    return apsmpi_cuda_mx_encode(f, in, n, first_index, r, bins, out, counters, stream);
}

extern "C" int apsmpi_cuda_decode(const apsmpi_format *f, const void *in, size_t n, size_t first_index,
                                  const int16_t *scales, size_t block_len, float *out, void *stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!codec_args_ok(f, in, out, scales, block_len))
        return cudaErrorInvalidValue;
    if (f->mx)
        return apsmpi_cuda_mx_decode(f, in, n, out, stream);
    DecodeArgs a = decode_args(f, in, n, first_index, scales, block_len, out);
    return launch_decode(a, codec_grid(n, sm_count()), (cudaStream_t)stream);
}
