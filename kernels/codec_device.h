/* codec_device.h: the per-thread logic of the CUDA kernels, as host+device C++ so that a host emulation can run it too. */
/* codec_kernels.cu wraps these functions in __global__ kernels (shared memory, shuffles,
 * __syncwarp, atomics, launches); tests/gpu/emulate_kernels.cpp runs the same functions on
 * the host, lane by lane in the kernels' order, so that the GPU test suite checks this logic
 * against the CPU codec on machines without a GPU. Everything a kernel computes is here
 * except the warp/block reductions and the atomics.
 *
 * Layout: element i of a packed buffer occupies bits [i*w, (i+1)*w) of a little-endian bit
 * stream, LSB first: the packing groups of src/core/codec.c (g codes in g*w/8 bytes) have no
 * padding bits, so groups laid end to end are that stream, and 8- and 16-bit codes are plain
 * byte and uint16 arrays. A "unit" is 8 consecutive elements: a whole number of groups for
 * every width, and exactly w bytes. One thread handles one unit per step; the 32 units of a
 * warp are 256 elements and 32*w contiguous packed bytes, staged in shared memory. */
#ifndef APSMPI_CODEC_DEVICE_H
#define APSMPI_CODEC_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <vector_types.h>
#include <vector_functions.h>

#include "core/codec.h"
#include "core/format.h"
#include "core/fpconv.h"

#ifdef __CUDACC__
#define APSMPI_KHD __host__ __device__ __forceinline__
#define APSMPI_UNROLL _Pragma("unroll")
#define APSMPI_UNROLL4 _Pragma("unroll 4")
#else
#define APSMPI_KHD inline
#define APSMPI_UNROLL
#define APSMPI_UNROLL4
#endif

namespace apsmpi_k
{

constexpr int kThreads = 256; /* threads per thread block, all kernels */
constexpr int kWarps = kThreads / 32;
constexpr int kUnit = 8;               /* elements per thread and step in encode/decode */
constexpr size_t kThreadBlockMax = 16; /* block exponents: APS blocks this small, a thread each */
constexpr size_t kWarpBlockMax = 8192; /* up to this, a warp each */
constexpr size_t kMinSegment = 16384;  /* larger blocks: thread blocks over segments this long */
constexpr int kCtasPerSm = 8;          /* grid-stride grids: at most this many thread blocks per SM */

/* On the host (the emulation), a wide access must be as aligned as on the GPU, where a
 * misaligned one faults: check it, so that the emulated tests catch what the GPU would. */
template <typename T> APSMPI_KHD void check_aligned(const T *p)
{
#ifndef __CUDA_ARCH__
    if (((uintptr_t)p & (alignof(T) - 1)) != 0)
        __builtin_trap();
#else
    (void)p;
#endif
}

/* A read-only load (through the non-coherent cache on the device). */
template <typename T> APSMPI_KHD T ld_ro(const T *p)
{
#ifdef __CUDA_ARCH__
    return __ldg(p);
#else
    check_aligned(p);
    return *p;
#endif
}

/* A store. */
template <typename T> APSMPI_KHD void st(T *p, T v)
{
    check_aligned(p);
    *p = v;
}

APSMPI_KHD uint32_t umax32(uint32_t a, uint32_t b) { return a > b ? a : b; }

APSMPI_KHD size_t div_up(size_t a, size_t b) { return a / b + (a % b != 0); }

/* Units of kUnit elements that hold n elements. */
APSMPI_KHD size_t units_of(size_t n) { return n / kUnit + (n % kUnit != 0); }

/* The grid of a grid-stride kernel that has `wanted` thread blocks of work. */
inline unsigned grid_for(size_t wanted, int sms)
{
    size_t cap = (size_t)sms * kCtasPerSm;
    size_t g = wanted < cap ? wanted : cap;
    return g > 0 ? (unsigned)g : 1u;
}

/* ---- block exponents ---- */

/* This thread's share (thread t of nt) of the max of the absolute float bits over x[lo, hi):
 * scalar loads up to the first 16-byte boundary, then uint4 loads, then the scalar tail.
 * The order of these uint32 values is the order of the magnitudes, inf and NaN above all. */
APSMPI_KHD uint32_t range_max(const uint32_t *x, size_t lo, size_t hi, unsigned t, unsigned nt)
{
    const uint32_t *p = x + lo;
    size_t len = hi - lo;
    size_t head = ((16u - ((uintptr_t)p & 15u)) & 15u) / 4u;
    uint32_t m = 0;
    if (head > len)
        head = len;
    if (t < head)
        m = ld_ro(p + t) & 0x7fffffffu;
    p += head;
    len -= head;
    const size_t nv = len / 4;
    const uint4 *v = reinterpret_cast<const uint4 *>(p);
    APSMPI_UNROLL4
    for (size_t k = t; k < nv; k += nt) {
        uint4 q = ld_ro(v + k);
        m = umax32(m,
                   umax32(umax32(q.x & 0x7fffffffu, q.y & 0x7fffffffu), umax32(q.z & 0x7fffffffu, q.w & 0x7fffffffu)));
    }
    if (t < len - nv * 4)
        m = umax32(m, ld_ro(p + nv * 4 + t) & 0x7fffffffu);
    return m;
}

/* The range [lo, hi) of APS block b of x[0..n), blocks of bl elements. */
APSMPI_KHD void block_range(size_t n, size_t bl, size_t b, size_t *lo, size_t *hi)
{
    *lo = b * bl;
    *hi = n - *lo < bl ? n : *lo + bl;
}

/* How apsmpi_cuda_block_exponents splits the work. */
enum { AMAX_PER_THREAD, AMAX_PER_WARP, AMAX_PER_SEGMENT };
struct AmaxPlan {
    int path;
    size_t bl; /* min(block_len, n) */
    size_t nblocks;
    size_t split; /* AMAX_PER_SEGMENT: segments per block; > 1: combined by atomic max */
    size_t seg;   /* elements per segment */
    unsigned grid;
};

inline AmaxPlan amax_plan(size_t n, size_t block_len, int sms)
{
    AmaxPlan p;
    p.bl = block_len < n ? block_len : n;
    p.nblocks = block_len >= n ? 1 : div_up(n, block_len);
    p.split = 1;
    p.seg = p.bl;
    if (p.bl <= kThreadBlockMax) {
        p.path = AMAX_PER_THREAD;
        p.grid = grid_for(div_up(p.nblocks, kThreads), sms);
    } else if (p.bl <= kWarpBlockMax) {
        p.path = AMAX_PER_WARP;
        p.grid = grid_for(div_up(p.nblocks, kWarps), sms);
    } else {
        p.path = AMAX_PER_SEGMENT;
        const size_t target = (size_t)sms * kCtasPerSm;
        if (p.nblocks < target) {
            size_t seg = div_up(p.bl, div_up(target, p.nblocks));
            seg = seg < kMinSegment ? kMinSegment : seg;
            seg = (seg + 3) & ~(size_t)3;
            p.split = div_up(p.bl, seg);
            p.seg = p.split == 1 ? p.bl : seg;
        }
        p.grid = grid_for(p.nblocks * p.split, sms);
    }
    return p;
}

/* The segment k of block b under plan p (empty past the end of a short last block). */
APSMPI_KHD void segment_range(size_t n, size_t bl, size_t seg, size_t b, size_t k, size_t *lo, size_t *hi)
{
    size_t blo, bhi;
    block_range(n, bl, b, &blo, &bhi);
    size_t s = blo + k * seg;
    s = s < bhi ? s : bhi;
    *lo = s;
    *hi = bhi - s < seg ? bhi : s + seg;
}

/* ---- packing: the 8*W bits of a unit in two 64-bit halves, W bytes in shared memory ---- */

/* Places a W-bit code at bit `at` of the 128-bit (lo, hi). */
template <int W> APSMPI_KHD void put_code(uint64_t &lo, uint64_t &hi, int at, uint32_t code)
{
    if (at < 64)
        lo |= (uint64_t)code << at;
    if (at + W > 64)
        hi |= at < 64 ? (uint64_t)code >> (64 - at) : (uint64_t)code << (at - 64);
}

/* The W-bit code at bit `at` of (lo, hi). */
template <int W> APSMPI_KHD uint32_t get_code(uint64_t lo, uint64_t hi, int at)
{
    uint64_t v = at < 64 ? lo >> at : 0;
    if (at + W > 64)
        v |= at < 64 ? hi << (64 - at) : hi >> (at - 64);
    return (uint32_t)(v & ((1u << W) - 1u));
}

/* Stores the low W bytes of (lo, hi) at p (p = lane * W bytes into a 4-byte aligned array). */
template <int W> APSMPI_KHD void stage_store(uint8_t *p, uint64_t lo, uint64_t hi)
{
    if constexpr (W % 4 == 0) {
        uint32_t *q = reinterpret_cast<uint32_t *>(p);
        APSMPI_UNROLL
        for (int k = 0; k < W / 4; k++)
            st(q + k, (uint32_t)(k < 2 ? lo >> (32 * k) : hi >> (32 * (k - 2))));
    } else if constexpr (W % 2 == 0) {
        uint16_t *q = reinterpret_cast<uint16_t *>(p);
        APSMPI_UNROLL
        for (int k = 0; k < W / 2; k++)
            st(q + k, (uint16_t)(k < 4 ? lo >> (16 * k) : hi >> (16 * (k - 4))));
    } else {
        APSMPI_UNROLL
        for (int k = 0; k < W; k++)
            p[k] = (uint8_t)(k < 8 ? lo >> (8 * k) : hi >> (8 * (k - 8)));
    }
}

/* Loads W bytes at p (as for stage_store) into (lo, hi). */
template <int W> APSMPI_KHD void stage_load(const uint8_t *p, uint64_t &lo, uint64_t &hi)
{
    lo = 0;
    hi = 0;
    if constexpr (W % 4 == 0) {
        const uint32_t *q = reinterpret_cast<const uint32_t *>(p);
        check_aligned(q);
        APSMPI_UNROLL
        for (int k = 0; k < W / 4; k++) {
            if (k < 2)
                lo |= (uint64_t)q[k] << (32 * k);
            else
                hi |= (uint64_t)q[k] << (32 * (k - 2));
        }
    } else if constexpr (W % 2 == 0) {
        const uint16_t *q = reinterpret_cast<const uint16_t *>(p);
        check_aligned(q);
        APSMPI_UNROLL
        for (int k = 0; k < W / 2; k++) {
            if (k < 4)
                lo |= (uint64_t)q[k] << (16 * k);
            else
                hi |= (uint64_t)q[k] << (16 * (k - 4));
        }
    } else {
        APSMPI_UNROLL
        for (int k = 0; k < W; k++) {
            if (k < 8)
                lo |= (uint64_t)p[k] << (8 * k);
            else
                hi |= (uint64_t)p[k] << (8 * (k - 8));
        }
    }
}

/* ---- scales ---- */

/* The scale of consecutive buffer indices, looked up again only when a block boundary is
 * crossed (one division per unit in the common case). */
struct ScaleCursor {
    const int16_t *scales; /* NULL: no scaling, s stays 0 */
    size_t block_len;
    size_t next; /* first buffer index past the current block */
    int s;

    APSMPI_KHD void start(const int16_t *sc, size_t bl, size_t idx)
    {
        scales = sc;
        block_len = bl;
        s = 0;
        next = SIZE_MAX;
        if (sc != NULL)
            seek(idx);
    }
    APSMPI_KHD void seek(size_t idx)
    {
        /* a 32-bit division where it suffices: a 64-bit one is a long software routine */
        size_t b = ((idx | block_len) >> 32) != 0 ? idx / block_len : (size_t)((uint32_t)idx / (uint32_t)block_len);
        s = ld_ro(scales + b);
        next = (b + 1) * block_len;
    }
    /* The scale of buffer index idx (idx not below the last one asked). */
    APSMPI_KHD int at(size_t idx)
    {
        if (scales != NULL && idx >= next)
            seek(idx);
        return s;
    }
};

/* ---- encode ---- */

struct EncodeArgs {
    apsmpi_format f;
    const float *in;
    size_t n;
    size_t first;          /* buffer index of in[0] */
    const int16_t *scales; /* NULL: no scaling */
    size_t block_len;
    uint64_t key; /* apsmpi_rng_key(seed, call) */
    uint8_t *out;
    size_t out_bytes; /* apsmpi_groups_for(f, n) * apsmpi_group_bytes(f) */
    unsigned long long *counters;
    int in_aligned;  /* in is 16-byte aligned */
    int out_aligned; /* out is 4-byte aligned */
};

/* Element j of a unit (buffer index idx0 + j; real: not past the end) under scale s: its
 * code placed into (lo, hi), its counts added to nz and fl. */
template <int W, bool SR>
APSMPI_KHD void encode_elem(const EncodeArgs &a, const apsmpi_format &f, float v, int s, size_t idx0, int j, bool real,
                            uint64_t &lo, uint64_t &hi, uint32_t &nz, uint32_t &fl)
{
    const uint32_t magmask = (1u << (W - 1)) - 1u;
    const uint32_t x = apsmpi_f2u(v);
    const uint32_t rnd = SR ? apsmpi_rng_bits(a.key, idx0 + j) : 0u;
    uint32_t code = apsmpi_encode_one(x, s, &f, SR ? 1 : 0, rnd);
    code = real ? code : 0u;
    const uint32_t isnz = (uint32_t)(real && (x << 1) != 0);
    nz += isnz;
    fl += isnz & (uint32_t)((code & magmask) == 0);
    put_code<W>(lo, hi, j * W, code);
}

/* Encodes unit u (if it exists) into the W bytes at lane_bytes; adds its non-zero inputs and
 * flushed ones to nonzero and flushed. */
template <int W, bool SR>
APSMPI_KHD void encode_unit(const EncodeArgs &a, const apsmpi_format &f, size_t u, uint8_t *lane_bytes,
                            unsigned long long &nonzero, unsigned long long &flushed)
{
    const size_t n = a.n;
    if (u >= units_of(n))
        return;
    const size_t i0 = u * kUnit;
    const int cnt = n - i0 < (size_t)kUnit ? (int)(n - i0) : kUnit; /* elements before the end */
    float v[kUnit];
    if (a.in_aligned && cnt == kUnit) {
        const float4 *p = reinterpret_cast<const float4 *>(a.in + i0);
        float4 q0 = ld_ro(p), q1 = ld_ro(p + 1);
        v[0] = q0.x;
        v[1] = q0.y;
        v[2] = q0.z;
        v[3] = q0.w;
        v[4] = q1.x;
        v[5] = q1.y;
        v[6] = q1.z;
        v[7] = q1.w;
    } else {
        APSMPI_UNROLL
        for (int j = 0; j < kUnit; j++)
            v[j] = j < cnt ? ld_ro(a.in + i0 + j) : 0.0f;
    }
    const size_t idx0 = a.first + i0;
    ScaleCursor sc;
    sc.start(a.scales, a.block_len, idx0);
    uint64_t lo = 0, hi = 0;
    uint32_t nz = 0, fl = 0;
    if (sc.next - idx0 >= (size_t)kUnit) { /* one scale for the unit: the common case */
        const int s = sc.s;
        APSMPI_UNROLL
        for (int j = 0; j < kUnit; j++)
            encode_elem<W, SR>(a, f, v[j], s, idx0, j, j < cnt, lo, hi, nz, fl);
    } else {
        APSMPI_UNROLL
        for (int j = 0; j < kUnit; j++)
            encode_elem<W, SR>(a, f, v[j], j < cnt ? sc.at(idx0 + j) : 0, idx0, j, j < cnt, lo, hi, nz, fl);
    }
    nonzero += nz;
    flushed += fl;
    stage_store<W>(lane_bytes, lo, hi);
}

/* Lane `lane`'s share of writing the warp's staged bytes (units u0..u0+31) to the output:
 * 32-bit words where the output is 4-byte aligned, bytes otherwise and for the tail. */
/* Lane `lane`'s share of writing nb staged bytes (a warp's) to dst: 32-bit words where dst is
 * 4-byte aligned (aligned), bytes otherwise and for the tail. Shared with the MX kernels. */
APSMPI_KHD void stage_copy_out(uint8_t *dst, const uint32_t *stage, size_t nb, int aligned, unsigned lane)
{
    const uint8_t *sb = reinterpret_cast<const uint8_t *>(stage);
    size_t k0 = 0;
    if (aligned) {
        const size_t nw = nb / 4;
        for (size_t k = lane; k < nw; k += 32)
            st(reinterpret_cast<uint32_t *>(dst) + k, stage[k]);
        k0 = nw * 4;
    }
    for (size_t k = k0 + lane; k < nb; k += 32)
        dst[k] = sb[k];
}

/* Lane `lane`'s share of staging nb bytes from src (words where src is 4-byte aligned), the
 * stage's bytes from nb to all set to zero. */
APSMPI_KHD void stage_copy_in(const uint8_t *src, uint32_t *stage, size_t nb, size_t all, int aligned, unsigned lane)
{
    uint8_t *sb = reinterpret_cast<uint8_t *>(stage);
    size_t k0 = 0;
    if (aligned) {
        const size_t nw = nb / 4;
        for (size_t k = lane; k < nw; k += 32)
            st(stage + k, ld_ro(reinterpret_cast<const uint32_t *>(src) + k));
        k0 = nw * 4;
    }
    for (size_t k = k0 + lane; k < nb; k += 32)
        sb[k] = ld_ro(src + k);
    for (size_t k = nb + lane; k < all; k += 32)
        sb[k] = 0;
}

/* Lane `lane`'s share of writing the warp's staged bytes (units u0..u0+31) to the output
 * (b0 is a multiple of 32*W: dst is 4-byte aligned when the output is). */
template <int W> APSMPI_KHD void encode_copy_out(const EncodeArgs &a, size_t u0, const uint32_t *stage, unsigned lane)
{
    const size_t b0 = u0 * W;
    const size_t left = a.out_bytes - b0;
    stage_copy_out(a.out + b0, stage, left < (size_t)(32 * W) ? left : (size_t)(32 * W), a.out_aligned, lane);
}

/* ---- decode ---- */

struct DecodeArgs {
    apsmpi_format f;
    const uint8_t *in;
    size_t in_bytes; /* apsmpi_groups_for(f, n) * apsmpi_group_bytes(f) */
    size_t n;
    size_t first;
    const int16_t *scales;
    size_t block_len;
    float *out;
    int in_aligned;  /* in is 4-byte aligned */
    int out_aligned; /* out is 16-byte aligned */
};

/* Lane `lane`'s share of staging the warp's packed bytes (units u0..u0+31); zeros past the
 * end of the input. */
template <int W> APSMPI_KHD void decode_copy_in(const DecodeArgs &a, size_t u0, uint32_t *stage, unsigned lane)
{
    const size_t b0 = u0 * W;
    const size_t left = a.in_bytes - b0;
    stage_copy_in(a.in + b0, stage, left < (size_t)(32 * W) ? left : (size_t)(32 * W), (size_t)(32 * W), a.in_aligned,
                  lane);
}

/* The CPU's float of a code under scale s: table[code] * 2^-s for -127 <= s <= 126 (the
 * table holding apsmpi_decode_one(code, 0, f); a NaN keeps its bits through the product, as
 * on x86), else apsmpi_decode_one(code, s, f). Both are value(code) / 2^s rounded once. */
APSMPI_KHD float decode_scaled(uint32_t code, int s, const apsmpi_format *f)
{
    if (s >= -127 && s <= 126) {
        float t = apsmpi_decode_one(code, 0, f);
        float p2 = apsmpi_u2f((uint32_t)(127 - s) << 23);
#ifdef __CUDA_ARCH__
        return t != t ? t : __fmul_rn(t, p2);
#else
        return t != t ? t : t * p2;
#endif
    }
    return apsmpi_decode_one(code, s, f);
}

/* Decodes unit u (if it exists) from the W staged bytes at lane_bytes into the output. */
template <int W>
APSMPI_KHD void decode_unit(const DecodeArgs &a, const apsmpi_format &f, size_t u, const uint8_t *lane_bytes)
{
    const size_t n = a.n;
    if (u >= units_of(n))
        return;
    const size_t i0 = u * kUnit;
    const int cnt = n - i0 < (size_t)kUnit ? (int)(n - i0) : kUnit;
    uint64_t lo, hi;
    stage_load<W>(lane_bytes, lo, hi);
    const size_t idx0 = a.first + i0;
    ScaleCursor sc;
    sc.start(a.scales, a.block_len, idx0);
    float r[kUnit];
    if (sc.next - idx0 >= (size_t)kUnit && sc.s >= -127 && sc.s <= 126) {
        /* one scale, applied by one multiplication: the common case (decode_scaled inlined) */
        const float p2 = apsmpi_u2f((uint32_t)(127 - sc.s) << 23);
        APSMPI_UNROLL
        for (int j = 0; j < kUnit; j++) {
            float t = apsmpi_decode_one(get_code<W>(lo, hi, j * W), 0, &f);
#ifdef __CUDA_ARCH__
            r[j] = t != t ? t : __fmul_rn(t, p2);
#else
            r[j] = t != t ? t : t * p2;
#endif
        }
    } else {
        APSMPI_UNROLL
        for (int j = 0; j < kUnit; j++)
            r[j] = decode_scaled(get_code<W>(lo, hi, j * W), j < cnt ? sc.at(idx0 + j) : 0, &f);
    }
    if (a.out_aligned && cnt == kUnit) {
        float4 *p = reinterpret_cast<float4 *>(a.out + i0);
        st(p, make_float4(r[0], r[1], r[2], r[3]));
        st(p + 1, make_float4(r[4], r[5], r[6], r[7]));
    } else {
        APSMPI_UNROLL
        for (int j = 0; j < kUnit; j++)
            if (j < cnt)
                a.out[i0 + j] = r[j];
    }
}

/* ---- arguments and grids of encode/decode ---- */

inline EncodeArgs encode_args(const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                              const int16_t *scales, size_t block_len, apsmpi_rounding r, void *out,
                              unsigned long long *counters)
{
    EncodeArgs a;
    a.f = *f;
    a.in = in;
    a.n = n;
    a.first = first_index;
    a.scales = scales;
    a.block_len = block_len;
    a.key = apsmpi_rng_key(r.seed, r.call);
    a.out = static_cast<uint8_t *>(out);
    a.out_bytes = apsmpi_groups_for(f, n) * apsmpi_group_bytes(f);
    a.counters = counters;
    a.in_aligned = ((uintptr_t)in & 15u) == 0;
    a.out_aligned = ((uintptr_t)out & 3u) == 0;
    return a;
}

inline DecodeArgs decode_args(const apsmpi_format *f, const void *in, size_t n, size_t first_index,
                              const int16_t *scales, size_t block_len, float *out)
{
    DecodeArgs a;
    a.f = *f;
    a.in = static_cast<const uint8_t *>(in);
    a.in_bytes = apsmpi_groups_for(f, n) * apsmpi_group_bytes(f);
    a.n = n;
    a.first = first_index;
    a.scales = scales;
    a.block_len = block_len;
    a.out = out;
    a.in_aligned = ((uintptr_t)in & 3u) == 0;
    a.out_aligned = ((uintptr_t)out & 15u) == 0;
    return a;
}

/* 1 if the arguments of an encode/decode are acceptable (n > 0). */
inline int codec_args_ok(const apsmpi_format *f, const void *in, const void *out, const int16_t *scales,
                         size_t block_len)
{
    return f != NULL && in != NULL && out != NULL && f->width >= 3 && f->width <= 16 &&
           (scales == NULL || block_len > 0);
}

/* The grid of encode/decode for n elements: a warp per 32 units, kWarps warps a block. */
inline unsigned codec_grid(size_t n, int sms) { return grid_for(div_up(units_of(n), (size_t)kWarps * 32), sms); }

#ifdef __CUDACC__
/* Adds the thread block's NC counts (v: this thread's) to counters[0..NC) (device memory): a
 * warp reduction, a block reduction, then one atomicAdd per non-zero count per thread block;
 * integer sums, so the result is the same whatever the order. Every thread of the block calls
 * it (red: NC x kWarps of shared memory). */
template <int NC>
__device__ __forceinline__ void block_add_counters(unsigned long long (&v)[NC], unsigned long long *counters,
                                                   unsigned long long (*red)[kWarps])
{
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
        for (int k = 0; k < NC; k++)
            v[k] += __shfl_xor_sync(0xffffffffu, v[k], o);
    }
    if (lane == 0) {
#pragma unroll
        for (int k = 0; k < NC; k++)
            red[k][warp] = v[k];
    }
    __syncthreads();
    if (threadIdx.x < (unsigned)NC) {
        unsigned long long t = 0;
        for (int w = 0; w < kWarps; w++)
            t += red[threadIdx.x][w];
        if (t)
            atomicAdd(counters + threadIdx.x, t);
    }
}
#endif

} /* namespace apsmpi_k */

#define APSMPI_WIDTH_CASES(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)

#endif
