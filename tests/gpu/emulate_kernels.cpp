/* emulate_kernels.cpp: runs the kernels' per-thread logic (kernels/codec_device.h) on the host, standing in for the CUDA runtime, so that test_kernels.c checks it without a GPU. */
/* Linked with tests/gpu/test_kernels.c instead of the kernels and cudart, this file provides
 * the few CUDA runtime calls the test makes (host memory stands for device memory) and the
 * four apsmpi_cuda_* functions, which run the same code as the kernels of
 * kernels/codec_kernels.cu and kernels/codec_mx_kernels.cu: the same launch plans and grids, every thread block, warp and
 * lane in turn, each warp step's lanes first through the compute phase and then through the
 * copy phase (the __syncwarp between them), a shared-memory stage that keeps stale bytes
 * between steps as on the GPU, and the warp/block reductions and atomics replaced by their
 * sequential equivalents. The multiprocessor count the plans are made for cycles through
 * 1, 2, 3 and 132, so that grid-stride loops run many steps, few, or one.
 *
 * What this cannot check is what only the GPU does: the device branches of fpconv.h and
 * codec_device.h (__float_as_uint, __clz, __ldg, __fmul_rn, device ldexpf), the shuffles,
 * barriers and atomics, and the launches themselves. test_kernels linked with the real
 * kernels checks those on a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "apsmpi_kernels.h"
#include "codec_device.h"
#include "codec_mx_device.h"

using namespace apsmpi_k;

/* ---- the CUDA runtime calls of test_kernels.c, on host memory ---- */

extern "C" {

cudaError_t cudaGetDeviceCount(int *count)
{
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t size)
{
    size_t rounded = (size + 255) / 256 * 256; /* device allocations are 256-byte aligned */
    *p = aligned_alloc(256, rounded ? rounded : 256);
    if (*p == NULL)
        return cudaErrorMemoryAllocation;
    memset(*p, 0xCD, rounded ? rounded : 256); /* not zero, as device memory need not be */
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    (void)kind;
    memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int value, size_t count)
{
    memset(p, value, count);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaGetLastError(void) { return cudaSuccess; }

const char *cudaGetErrorString(cudaError_t err)
{
    return err == cudaSuccess ? "no error (emulated)" : "error (emulated)";
}

/* Too little for the 2^31-element test, which would take minutes on the host. */
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = (size_t)1 << 30;
    *total_bytes = (size_t)1 << 30;
    return cudaSuccess;
}

} /* extern "C" */

/* ---- the kernels ---- */

namespace
{

int emulated_sms()
{
    static const int sms[] = {1, 2, 3, 132};
    static unsigned calls = 0;
    return sms[calls++ % 4];
}

/* The stage of one warp: shared memory, stale between steps and between kernels. */
uint32_t stage_mem[8 * 16];

template <int W, bool SR> void emulate_encode(const EncodeArgs &a, unsigned grid)
{
    const apsmpi_format f = a.f;
    const size_t nunits = units_of(a.n);
    const size_t stride = (size_t)grid * kWarps * 32;
    unsigned long long total_nonzero = 0, total_flushed = 0;
    for (unsigned blk = 0; blk < grid; blk++) {
        for (int warp = 0; warp < kWarps; warp++) {
            unsigned long long nonzero[32] = {0}, flushed[32] = {0};
            for (size_t u0 = ((size_t)blk * kWarps + warp) * 32; u0 < nunits; u0 += stride) {
                for (unsigned lane = 0; lane < 32; lane++)
                    encode_unit<W, SR>(a, f, u0 + lane, reinterpret_cast<uint8_t *>(stage_mem) + lane * W,
                                       nonzero[lane], flushed[lane]);
                for (unsigned lane = 0; lane < 32; lane++)
                    encode_copy_out<W>(a, u0, stage_mem, lane);
            }
            for (int lane = 0; lane < 32; lane++) {
                total_nonzero += nonzero[lane];
                total_flushed += flushed[lane];
            }
        }
    }
    if (a.counters != NULL) {
        a.counters[0] += total_nonzero;
        a.counters[1] += total_flushed;
    }
}

template <int W> void emulate_decode(const DecodeArgs &a, unsigned grid)
{
    const apsmpi_format f = a.f;
    const size_t nunits = units_of(a.n);
    const size_t stride = (size_t)grid * kWarps * 32;
    for (unsigned blk = 0; blk < grid; blk++) {
        for (int warp = 0; warp < kWarps; warp++) {
            for (size_t u0 = ((size_t)blk * kWarps + warp) * 32; u0 < nunits; u0 += stride) {
                for (unsigned lane = 0; lane < 32; lane++)
                    decode_copy_in<W>(a, u0, stage_mem, lane);
                for (unsigned lane = 0; lane < 32; lane++)
                    decode_unit<W>(a, f, u0 + lane, reinterpret_cast<const uint8_t *>(stage_mem) + lane * W);
            }
        }
    }
}

/* The MX kernels (codec_mx_kernels.cu): a lane per block, a warp per 32 blocks. */
uint32_t mx_stage_mem[8 * 33];

template <int W, bool SR, bool MEASURE> void emulate_mx_encode(const MxEncodeArgs &a, unsigned grid)
{
    constexpr int NC = MxCounts<MEASURE>::n;
    const apsmpi_format f = a.f;
    const size_t nblocks = mx_blocks_of(a.n);
    const size_t stride = (size_t)grid * kWarps * 32;
    unsigned long long counts[NC] = {};
    for (unsigned blk = 0; blk < grid; blk++)
        for (int warp = 0; warp < kWarps; warp++)
            for (size_t b0 = ((size_t)blk * kWarps + warp) * 32; b0 < nblocks; b0 += stride) {
                for (unsigned lane = 0; lane < 32; lane++)
                    mx_encode_block<W, SR, MEASURE>(
                        a, f, b0 + lane, reinterpret_cast<uint8_t *>(mx_stage_mem) + lane * MxLayout<W>::group_bytes,
                        counts);
                for (unsigned lane = 0; lane < 32; lane++)
                    mx_encode_copy_out<W>(a, b0, mx_stage_mem, lane);
            }
    if (a.counters != NULL)
        for (int k = 0; k < NC; k++)
            a.counters[k] += counts[k];
}

/* The encode of width W for the rounding and whether it measures. */
template <int W> void emulate_mx_encode_of(const MxEncodeArgs &a, int stochastic, int measure, unsigned grid)
{
    if (measure)
        stochastic ? emulate_mx_encode<W, true, true>(a, grid) : emulate_mx_encode<W, false, true>(a, grid);
    else
        stochastic ? emulate_mx_encode<W, true, false>(a, grid) : emulate_mx_encode<W, false, false>(a, grid);
}

template <int W> void emulate_mx_decode(const MxDecodeArgs &a, unsigned grid)
{
    const apsmpi_format f = a.f;
    const size_t nblocks = mx_blocks_of(a.n);
    const size_t stride = (size_t)grid * kWarps * 32;
    for (unsigned blk = 0; blk < grid; blk++)
        for (int warp = 0; warp < kWarps; warp++)
            for (size_t b0 = ((size_t)blk * kWarps + warp) * 32; b0 < nblocks; b0 += stride) {
                for (unsigned lane = 0; lane < 32; lane++)
                    mx_decode_copy_in<W>(a, b0, mx_stage_mem, lane);
                for (unsigned lane = 0; lane < 32; lane++)
                    mx_decode_block<W>(a, f, b0 + lane,
                                       reinterpret_cast<const uint8_t *>(mx_stage_mem) +
                                           lane * MxLayout<W>::group_bytes);
            }
}

} /* namespace */

int apsmpi_cuda_mx_encode(const apsmpi_format *f, const float *in, size_t n, size_t first_index, apsmpi_rounding r,
                          const apsmpi_depth_bins *bins, void *out, unsigned long long *counters, void *stream)
{
    (void)stream;
    const MxEncodeArgs a = mx_encode_args(f, in, n, first_index, r, bins, out, counters);
    const unsigned grid = mx_codec_grid(n, emulated_sms());
    switch (f->width) {
#define MX_ENCODE_CASE(W)                                             \
    case W:                                                           \
        emulate_mx_encode_of<W>(a, r.stochastic, bins != NULL, grid); \
        break;
        APSMPI_MX_WIDTH_CASES(MX_ENCODE_CASE)
#undef MX_ENCODE_CASE
    default:
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

int apsmpi_cuda_mx_decode(const apsmpi_format *f, const void *in, size_t n, float *out, void *stream)
{
    (void)stream;
    const MxDecodeArgs a = mx_decode_args(f, in, n, out);
    const unsigned grid = mx_codec_grid(n, emulated_sms());
    switch (f->width) {
#define MX_DECODE_CASE(W)              \
    case W:                            \
        emulate_mx_decode<W>(a, grid); \
        break;
        APSMPI_MX_WIDTH_CASES(MX_DECODE_CASE)
#undef MX_DECODE_CASE
    default:
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

extern "C" int apsmpi_cuda_block_exponents(const float *x, size_t n, size_t block_len, int16_t *exps, void *stream)
{
    (void)stream;
    if (n == 0)
        return cudaSuccess;
    if (x == NULL || exps == NULL || block_len == 0)
        return cudaErrorInvalidValue;
    const uint32_t *bits = reinterpret_cast<const uint32_t *>(x);
    const AmaxPlan p = amax_plan(n, block_len, emulated_sms());
    if (p.path == AMAX_PER_THREAD) {
        for (size_t b = 0; b < p.nblocks; b++) {
            size_t lo, hi;
            block_range(n, p.bl, b, &lo, &hi);
            uint32_t m = 0;
            for (size_t i = lo; i < hi; i++)
                m = umax32(m, ld_ro(bits + i) & 0x7fffffffu);
            exps[b] = apsmpi_exponent_of_bits(m);
        }
    } else if (p.path == AMAX_PER_WARP) {
        for (size_t b = 0; b < p.nblocks; b++) {
            size_t lo, hi;
            block_range(n, p.bl, b, &lo, &hi);
            uint32_t m = 0;
            for (unsigned lane = 0; lane < 32; lane++)
                m = umax32(m, range_max(bits, lo, hi, lane, 32));
            exps[b] = apsmpi_exponent_of_bits(m);
        }
    } else {
        if (p.split > 1)
            for (size_t b = 0; b < p.nblocks; b++)
                exps[b] = INT16_MIN;
        for (size_t w = 0; w < p.nblocks * p.split; w++) {
            const size_t b = w / p.split, k = w - b * p.split;
            size_t lo, hi;
            segment_range(n, p.bl, p.seg, b, k, &lo, &hi);
            uint32_t m = 0;
            for (unsigned t = 0; t < (unsigned)kThreads; t++)
                m = umax32(m, range_max(bits, lo, hi, t, kThreads));
            int16_t e = apsmpi_exponent_of_bits(m);
            if (p.split == 1)
                exps[b] = e;
            else if (e > exps[b])
                exps[b] = e;
        }
    }
    return cudaSuccess;
}

extern "C" int apsmpi_cuda_encode(const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                                  const int16_t *scales, size_t block_len, apsmpi_rounding r, void *out,
                                  unsigned long long *counters, void *stream)
{
    (void)stream;
    if (n == 0)
        return cudaSuccess;
    if (!codec_args_ok(f, in, out, scales, block_len))
        return cudaErrorInvalidValue;
    if (f->mx)
        return apsmpi_cuda_mx_encode(f, in, n, first_index, r, NULL, out, counters, stream);
    EncodeArgs a = encode_args(f, in, n, first_index, scales, block_len, r, out, counters);
    unsigned grid = codec_grid(n, emulated_sms());
    switch (f->width) {
#define ENCODE_CASE(W)                         \
    case W:                                    \
        if (r.stochastic)                      \
            emulate_encode<W, true>(a, grid);  \
        else                                   \
            emulate_encode<W, false>(a, grid); \
        break;
        APSMPI_WIDTH_CASES(ENCODE_CASE)
#undef ENCODE_CASE
    }
    return cudaSuccess;
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
    (void)stream;
    if (n == 0)
        return cudaSuccess;
    if (!codec_args_ok(f, in, out, scales, block_len))
        return cudaErrorInvalidValue;
    if (f->mx)
        return apsmpi_cuda_mx_decode(f, in, n, out, stream);
    DecodeArgs a = decode_args(f, in, n, first_index, scales, block_len, out);
    unsigned grid = codec_grid(n, emulated_sms());
    switch (f->width) {
#define DECODE_CASE(W)              \
    case W:                         \
        emulate_decode<W>(a, grid); \
        break;
        APSMPI_WIDTH_CASES(DECODE_CASE)
#undef DECODE_CASE
    }
    return cudaSuccess;
}
