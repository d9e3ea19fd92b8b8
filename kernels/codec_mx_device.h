/* codec_mx_device.h: the per-thread logic of the MX formats' CUDA kernels, as host+device C++ so that the host emulation runs it too. */
/* codec_mx_kernels.cu wraps these functions in __global__ kernels; tests/gpu/emulate_kernels.cpp
 * runs them on the host lane by lane in the kernels' order. The per-element and per-block
 * arithmetic is src/core/mxconv.h, the source the CPU codec runs.
 *
 * Layout (core/mx_format.h): block b of an MX buffer is packing group b, 1 + 4 * W bytes: its
 * E8M0 scale byte, then its 32 codes LSB first. One thread encodes or decodes one block per
 * step (its 32 floats read as 8 float4 where aligned); the 32 blocks of a warp are 32 * (1 +
 * 4 W) contiguous bytes, a multiple of 4 starting at a multiple of 4, staged in shared memory
 * so that the warp reads and writes them as coalesced 32-bit words.
 *
 * A measuring encode (APSMPI_FORMAT=auto: apsmpi_cuda_encode_measured) counts in the same pass,
 * per block, each non-zero value's depth below the block's largest in the bins it is given
 * (core/flush_depth.h, the host histogram's arithmetic), over every block. */
#ifndef APSMPI_CODEC_MX_DEVICE_H
#define APSMPI_CODEC_MX_DEVICE_H

#include "codec_device.h"
#include "core/flush_depth.h"
#include "core/mxconv.h"

namespace apsmpi_k
{

constexpr int kMxBlock = APSMPI_MX_BLOCK;

/* The layout of width W: bytes of one block (packing group), 32-bit words of a warp's stage
 * of 32 blocks. */
template <int W> struct MxLayout {
    static constexpr int group_bytes = 1 + 4 * W;
    static constexpr int stage_words = 8 * group_bytes;
};

/* Blocks that hold n elements. */
APSMPI_KHD size_t mx_blocks_of(size_t n) { return n / kMxBlock + (n % kMxBlock != 0); }

struct MxEncodeArgs {
    apsmpi_format f;
    const float *in;
    size_t n;
    size_t first; /* buffer index of in[0]: the random stream of stochastic rounding */
    uint64_t key; /* apsmpi_rng_key(seed, call) */
    uint8_t *out;
    size_t out_bytes; /* mx_blocks_of(n) * (1 + 4 W) */
    unsigned long long *counters;
    apsmpi_depth_bins bins; /* a measuring encode's bins (core/flush_depth.h) */
    int in_aligned;         /* in is 16-byte aligned */
    int out_aligned;        /* out is 4-byte aligned */
};

/* The counts a thread keeps over the blocks it encodes, in the order of core/flush_depth.h:
 * the non-zero inputs and the flushed ones, and for a measuring encode the bins' counts. */
template <bool MEASURE> struct MxCounts {
    static constexpr int n = MEASURE ? APSMPI_MEASURE_COUNTERS : APSMPI_COUNT_DEEP;
};

struct MxDecodeArgs {
    apsmpi_format f;
    const uint8_t *in;
    size_t in_bytes;
    size_t n;
    float *out;
    int in_aligned;  /* in is 4-byte aligned */
    int out_aligned; /* out is 16-byte aligned */
};

/* Encodes block b (if it exists) into the 1 + 4 W bytes at group (in the stage); adds its
 * non-zero inputs and the flushed ones (not in a NaN block) to counts, and for a measuring
 * encode its non-zero values of each bin's depth or more. */
template <int W, bool SR, bool MEASURE>
APSMPI_KHD void mx_encode_block(const MxEncodeArgs &a, const apsmpi_format &f, size_t b, uint8_t *group,
                                unsigned long long (&counts)[MxCounts<MEASURE>::n])
{
    if (b >= mx_blocks_of(a.n))
        return;
    const size_t i0 = b * kMxBlock;
    const int cnt = a.n - i0 < (size_t)kMxBlock ? (int)(a.n - i0) : kMxBlock; /* elements before the end */
    float v[kMxBlock];
    if (a.in_aligned && cnt == kMxBlock) {
        const float4 *p = reinterpret_cast<const float4 *>(a.in + i0);
        APSMPI_UNROLL
        for (int k = 0; k < kMxBlock / 4; k++) {
            float4 q = ld_ro(p + k);
            v[4 * k] = q.x;
            v[4 * k + 1] = q.y;
            v[4 * k + 2] = q.z;
            v[4 * k + 3] = q.w;
        }
    } else {
        APSMPI_UNROLL
        for (int j = 0; j < kMxBlock; j++)
            v[j] = j < cnt ? ld_ro(a.in + i0 + j) : 0.0f; /* zeros do not raise the maximum */
    }
    uint32_t m = 0;
    APSMPI_UNROLL
    for (int j = 0; j < kMxBlock; j++)
        m = umax32(m, apsmpi_f2u(v[j]) & 0x7fffffffu);
    const uint32_t E = apsmpi_mx_scale_of(m, f.emax);
    const int32_t top = apsmpi_block_top(m);
    const uint32_t magmask = (1u << (W - 1)) - 1u;
    uint32_t words[W] = {}; /* the 4 W code bytes as W words, LSB first */
    uint32_t nz = 0, fl = 0, deep[APSMPI_DEPTH_BINS] = {};
    APSMPI_UNROLL
    for (int j = 0; j < kMxBlock; j++) {
        const uint32_t x = apsmpi_f2u(v[j]);
        const uint32_t rnd = SR ? apsmpi_rng_bits(a.key, a.first + i0 + j) : 0u;
        uint32_t code = E == APSMPI_MX_SCALE_NAN ? 0u : apsmpi_mx_encode_one(x, E, &f, SR ? 1 : 0, rnd);
        const uint32_t isnz = (uint32_t)((x << 1) != 0);
        nz += isnz;
        fl += isnz & (uint32_t)((code & magmask) == 0) & (uint32_t)(E != APSMPI_MX_SCALE_NAN);
        if constexpr (MEASURE) {
            const int32_t d = apsmpi_value_depth(x & 0x7fffffffu, top);
            APSMPI_UNROLL
            for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
                deep[k] += isnz & (uint32_t)(d >= a.bins.depth[k]);
        }
        const int at = j * W;
        words[at / 32] |= code << (at % 32);
        if (at % 32 + W > 32)
            words[at / 32 + 1] |= code >> (32 - at % 32);
    }
    counts[APSMPI_COUNT_NONZERO] += nz;
    counts[APSMPI_COUNT_FLUSHED] += fl;
    if constexpr (MEASURE) {
        APSMPI_UNROLL
        for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
            counts[APSMPI_COUNT_DEEP + k] += deep[k];
    }
    group[0] = (uint8_t)E;
    APSMPI_UNROLL
    for (int k = 0; k < 4 * W; k++)
        group[1 + k] = (uint8_t)(words[k / 4] >> (8 * (k % 4)));
}

/* Lane `lane`'s share of writing the warp's staged blocks (b0..b0+31) to the output: 32-bit
 * words where the output is 4-byte aligned, bytes otherwise and for the tail. */
template <int W>
APSMPI_KHD void mx_encode_copy_out(const MxEncodeArgs &a, size_t b0, const uint32_t *stage, unsigned lane)
{
    const size_t w0 = b0 * MxLayout<W>::group_bytes; /* a multiple of 32 * (1 + 4 W): of 4 */
    const size_t left = a.out_bytes - w0, all = (size_t)(4 * MxLayout<W>::stage_words);
    stage_copy_out(a.out + w0, stage, left < all ? left : all, a.out_aligned, lane);
}

/* Lane `lane`'s share of staging the warp's blocks b0..b0+31; zeros past the end. */
template <int W> APSMPI_KHD void mx_decode_copy_in(const MxDecodeArgs &a, size_t b0, uint32_t *stage, unsigned lane)
{
    const size_t w0 = b0 * MxLayout<W>::group_bytes;
    const size_t left = a.in_bytes - w0, all = (size_t)(4 * MxLayout<W>::stage_words);
    stage_copy_in(a.in + w0, stage, left < all ? left : all, all, a.in_aligned, lane);
}

/* The float of an element code in a block of scale byte E, as the CPU codec gives it:
 * value(code) * 2^(E - 127) rounded once (the table value times the exact power of two; a
 * NaN code keeps its bits), the quiet NaN for a NaN scale (core/mxconv.h). */
APSMPI_KHD float mx_decode_scaled(uint32_t code, uint32_t E, const apsmpi_format *f)
{
    if (E == APSMPI_MX_SCALE_NAN)
        return apsmpi_u2f(0x7FC00000u);
    const float t = apsmpi_decode_one(code, 0, f), p2 = apsmpi_mx_scale_value(E);
#ifdef __CUDA_ARCH__
    return t != t ? t : __fmul_rn(t, p2);
#else
    return t != t ? t : t * p2;
#endif
}

/* Decodes block b (if it exists) from its staged bytes into the output. */
template <int W>
APSMPI_KHD void mx_decode_block(const MxDecodeArgs &a, const apsmpi_format &f, size_t b, const uint8_t *group)
{
    if (b >= mx_blocks_of(a.n))
        return;
    const size_t i0 = b * kMxBlock;
    const int cnt = a.n - i0 < (size_t)kMxBlock ? (int)(a.n - i0) : kMxBlock;
    const uint32_t E = group[0];
    uint32_t words[W];
    APSMPI_UNROLL
    for (int k = 0; k < W; k++)
        words[k] = (uint32_t)group[1 + 4 * k] | (uint32_t)group[2 + 4 * k] << 8 | (uint32_t)group[3 + 4 * k] << 16 |
                   (uint32_t)group[4 + 4 * k] << 24;
    float r[kMxBlock];
    APSMPI_UNROLL
    for (int j = 0; j < kMxBlock; j++) {
        const int at = j * W;
        uint32_t code = words[at / 32] >> (at % 32);
        if (at % 32 + W > 32)
            code |= words[at / 32 + 1] << (32 - at % 32);
        r[j] = mx_decode_scaled(code & ((1u << W) - 1u), E, &f);
    }
    if (a.out_aligned && cnt == kMxBlock) {
        float4 *p = reinterpret_cast<float4 *>(a.out + i0);
        APSMPI_UNROLL
        for (int k = 0; k < kMxBlock / 4; k++)
            st(p + k, make_float4(r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]));
    } else {
        APSMPI_UNROLL
        for (int j = 0; j < kMxBlock; j++)
            if (j < cnt)
                a.out[i0 + j] = r[j];
    }
}

/* The arguments of an MX encode; bins: a measuring encode's (NULL: none). */
inline MxEncodeArgs mx_encode_args(const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                                   apsmpi_rounding r, const apsmpi_depth_bins *bins, void *out,
                                   unsigned long long *counters)
{
    MxEncodeArgs a;
    a.f = *f;
    a.in = in;
    a.n = n;
    a.first = first_index;
    a.key = apsmpi_rng_key(r.seed, r.call);
    a.out = static_cast<uint8_t *>(out);
    a.out_bytes = apsmpi_groups_for(f, n) * apsmpi_group_bytes(f);
    a.counters = counters;
    for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
        a.bins.depth[k] = bins ? bins->depth[k] : APSMPI_DEPTH_NONE;
    a.in_aligned = ((uintptr_t)in & 15u) == 0;
    a.out_aligned = ((uintptr_t)out & 3u) == 0;
    return a;
}

inline MxDecodeArgs mx_decode_args(const apsmpi_format *f, const void *in, size_t n, float *out)
{
    MxDecodeArgs a;
    a.f = *f;
    a.in = static_cast<const uint8_t *>(in);
    a.in_bytes = apsmpi_groups_for(f, n) * apsmpi_group_bytes(f);
    a.n = n;
    a.out = out;
    a.in_aligned = ((uintptr_t)in & 3u) == 0;
    a.out_aligned = ((uintptr_t)out & 15u) == 0;
    return a;
}

/* 1 if the arguments of a measuring encode (apsmpi_cuda_encode_measured) are acceptable (n > 0):
 * an MX format, bins and counters. */
inline int measured_args_ok(const apsmpi_format *f, const void *in, const void *out, const apsmpi_depth_bins *bins,
                            const unsigned long long *counters)
{
    return codec_args_ok(f, in, out, NULL, 0) && f->mx && bins != NULL && counters != NULL;
}

/* The grid of MX encode/decode for n elements: a warp per 32 blocks, kWarps warps a block. */
inline unsigned mx_codec_grid(size_t n, int sms) { return grid_for(div_up(mx_blocks_of(n), (size_t)kWarps * 32), sms); }

/* The MX element widths, each a template instance (the formats of one width share it, their
 * element's fields passed in apsmpi_format: mxfp6 and mxfp6e2m3; mxfp5 is FP5 E3M1). */
#define APSMPI_MX_WIDTH_CASES(X) X(8) X(6) X(5) X(4)

} /* namespace apsmpi_k */

/* The MX launches of codec_mx_kernels.cu, which apsmpi_cuda_encode, apsmpi_cuda_encode_measured
 * and apsmpi_cuda_decode (codec_kernels.cu) hand an MX format to: the same arguments less the
 * scales; bins NULL: a plain encode (counters: two entries), else a measuring one (counters:
 * APSMPI_MEASURE_COUNTERS entries). */
int apsmpi_cuda_mx_encode(const apsmpi_format *f, const float *in, size_t n, size_t first_index, apsmpi_rounding r,
                          const apsmpi_depth_bins *bins, void *out, unsigned long long *counters, void *stream);
int apsmpi_cuda_mx_decode(const apsmpi_format *f, const void *in, size_t n, float *out, void *stream);

#endif
