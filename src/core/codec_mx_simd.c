/* codec_mx_simd.c: the MX formats' loops for one x86 vector level (avx2 or avx512), compiled once per level with its -m flags. */
#if defined(__x86_64__) && !defined(__AVX512F__) && !defined(__AVX2__)
/* compiled alone without a level's -m flags (scripts/ci/depgraph.sh does): the avx2 level */
#pragma GCC target("avx2,f16c")
#endif
#include <string.h>
#include "core/codec_mx.h"
#include "core/mx_elem.h"
#include "core/mxconv.h"
#if defined(__x86_64__)
#include <immintrin.h>
#if defined(APSMPI_EMULATE_AVX512) && !defined(__AVX512F__)
/* make check-avx512-emulated: the avx512 level built for AVX2, its AVX-512 intrinsics emulated */
#include "core/avx512_emulated.h"
#endif

/* The two levels are this source compiled for vectors of VB bytes, 32 (avx2) or 64 (avx512):
 * the element arithmetic in gcc's vector types, which the compiler maps to the level's
 * instructions; a block's codes as 32 bytes in a 256-bit register (both levels have them),
 * narrowed, widened and bit-packed with intrinsics. A block of 32 elements is NV vectors of NL
 * lanes. Float arithmetic is IEEE single with one rounding per operation (no -ffast-math,
 * no contraction: Makefile.am gives -ffp-contract=off), subnormals kept (codec.c clears the
 * caller's FTZ and DAZ around every call). */
#if defined(__AVX512F__) || defined(APSMPI_EMULATE_AVX512)
#define VB 64
#define LOOPS apsmpi_mx_loops_avx512
#define LEVEL "avx512"
#elif defined(__AVX2__)
#define VB 32
#define LOOPS apsmpi_mx_loops_avx2
#define LEVEL "avx2"
#else
#error "codec_mx_simd.c is compiled with -mavx2 or -mavx512f (see Makefile.am)"
#endif

#include "core/simd_lanes.h"
#include "core/simd_bytes.h"

enum { BLOCK = APSMPI_MX_BLOCK, NV = BLOCK / NL };

/* Lane selections on signed 32-bit comparisons (every value compared here is below 2^31),
 * unsigned minimum and maximum: a mask register and one blend on avx512, a compare and a
 * blendv on avx2. */
#if VB == 64
INLINE vu sel_lt(vu a, vu b, vu x, vu y) /* a < b ? x : y */
{
    return (vu)_mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask((__m512i)a, (__m512i)b), (__m512i)y, (__m512i)x);
}

INLINE vu sel_eq(vu a, vu b, vu x, vu y) /* a == b ? x : y */
{
    return (vu)_mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask((__m512i)a, (__m512i)b), (__m512i)y, (__m512i)x);
}

INLINE vu min_u(vu a, vu b) { return (vu)_mm512_min_epu32((__m512i)a, (__m512i)b); }

INLINE vu max_u(vu a, vu b) { return (vu)_mm512_max_epu32((__m512i)a, (__m512i)b); }

/* shifts by lane counts, giving 0 for counts of 32 and more */
INLINE vu srlv(vu a, vu n) { return (vu)_mm512_srlv_epi32((__m512i)a, (__m512i)n); }

INLINE vu sllv(vu a, vu n) { return (vu)_mm512_sllv_epi32((__m512i)a, (__m512i)n); }

/* two blocks' lanes a, b: the low halves of both, the high halves of both; then within each
 * half of the result, lanes swapped by 4, 2 and 1 (block_maxima), and a half repeated */
#define LOW_HALVES_OF_BOTH 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define HIGH_HALVES_OF_BOTH 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define SWAP_BY_4 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11
#define SWAP_BY_2 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
#define SWAP_BY_1 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14
#define LOW_HALF_TWICE 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7
#define HIGH_HALF_TWICE 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15
#else
INLINE vu sel_lt(vu a, vu b, vu x, vu y)
{
    return (vu)_mm256_blendv_epi8((__m256i)y, (__m256i)x, _mm256_cmpgt_epi32((__m256i)b, (__m256i)a));
}

INLINE vu sel_eq(vu a, vu b, vu x, vu y)
{
    return (vu)_mm256_blendv_epi8((__m256i)y, (__m256i)x, _mm256_cmpeq_epi32((__m256i)a, (__m256i)b));
}

INLINE vu min_u(vu a, vu b) { return (vu)_mm256_min_epu32((__m256i)a, (__m256i)b); }

INLINE vu max_u(vu a, vu b) { return (vu)_mm256_max_epu32((__m256i)a, (__m256i)b); }

INLINE vu srlv(vu a, vu n) { return (vu)_mm256_srlv_epi32((__m256i)a, (__m256i)n); }

INLINE vu sllv(vu a, vu n) { return (vu)_mm256_sllv_epi32((__m256i)a, (__m256i)n); }

#define LOW_HALVES_OF_BOTH 0, 1, 2, 3, 8, 9, 10, 11
#define HIGH_HALVES_OF_BOTH 4, 5, 6, 7, 12, 13, 14, 15
#define SWAP_BY_2 2, 3, 0, 1, 6, 7, 4, 5
#define SWAP_BY_1 1, 0, 3, 2, 5, 4, 7, 6
#define LOW_HALF_TWICE 0, 1, 2, 3, 0, 1, 2, 3
#define HIGH_HALF_TWICE 4, 5, 6, 7, 4, 5, 6, 7
#endif

INLINE vu load_f32(const float *p)
{
    vu v;
    memcpy(&v, p, sizeof v);
    return v;
}

INLINE void store_f32(float *p, vu v) { memcpy(p, &v, sizeof v); }

/* The largest lanes of two blocks' lane maxima a and b: every lane of the low half of the
 * result holds a's largest lane, every lane of the high half b's (one shuffle of both and one
 * maximum halve the lanes of each, then swaps within halves: fewer steps than a horizontal
 * maximum of each). */
INLINE vu block_maxima(vu a, vu b)
{
    vu m = max_u(__builtin_shufflevector(a, b, LOW_HALVES_OF_BOTH), __builtin_shufflevector(a, b, HIGH_HALVES_OF_BOTH));
#if VB == 64
    m = max_u(m, __builtin_shufflevector(m, m, SWAP_BY_4));
#endif
    m = max_u(m, __builtin_shufflevector(m, m, SWAP_BY_2));
    return max_u(m, __builtin_shufflevector(m, m, SWAP_BY_1));
}

/* ---- elements ---- */

/* An element format's constants (mx_elem.h) as vectors; the loops below take W, M and kind
 * as compile-time constants, so that all of these are. */
typedef struct elem_consts {
    int w1, sh, emax, emin, specials;
    vu max_code, half, k2, thr, magic, special_ovf, ovf_code, rebias, signbit, magmask;
} elem_consts;

INLINE elem_consts elem_consts_of(int W, int M, int kind)
{
    const apsmpi_mx_elem e = apsmpi_mx_elem_of(W, M, kind);
    elem_consts k = {e.w1,
                     e.sh,
                     e.emax,
                     e.emin,
                     e.specials,
                     splat(e.max_code),
                     splat(e.half),
                     splat(e.k2),
                     splat(e.thr),
                     splat(e.magic),
                     splat(e.special_ovf),
                     splat(e.ovf_code),
                     splat(e.rebias),
                     splat(e.signbit),
                     splat(e.magmask)};
    return k;
}

/* Keeps the constant v in a register through the loops on avx512 (32 registers): gcc would
 * otherwise make the element constants again inside the loop, a broadcast each on the
 * shuffle port, several a block. An empty asm that may change v: the compiler cannot
 * rematerialize it. (Not in the emulated avx512 level: no register of AVX2 holds 64 bytes.) */
INLINE void in_register(vu *v)
{
#if VB == 64 && !defined(APSMPI_EMULATE_AVX512)
    __asm__("" : "+v"(*v));
#else
    (void)v;
#endif
}

/* The saturated magnitude codes of y = |x| / X, computed in float (exact unless y is a float
 * subnormal, which is far below every element's smallest subnormal and gives 0 either way):
 * a normal element rounds y's bits to nearest even at sh bits, a subnormal one is y + magic
 * rounded by the addition. */
INLINE vu encode_mag(vf y, const elem_consts *k)
{
    vu yb = (vu)y;
    vu odd = (yb >> k->sh) & 1u;
    vu normal = ((yb + k->half + odd) >> k->sh) - k->k2;
    vu subnormal = (vu)(y + (vf)k->magic) - k->magic;
    return min_u(sel_lt(yb, k->thr, subnormal, normal), k->max_code);
}

/* The same, stochastically with the random bits rnd (apsmpi_encode_one's rounding: up iff rnd
 * plus the fraction cut off, taken to 32 bits, carries): a normal element adds the top sh bits
 * of rnd to the sh bits of y cut off; a subnormal one cuts shl > sh bits of y's significand,
 * their top 32 added to rnd (a y below the float normals cuts so many that nothing carries,
 * as for the exact value). */
INLINE vu encode_mag_sr(vf y, const elem_consts *k, vu rnd)
{
    vu yb = (vu)y;
    vu normal = ((yb + (rnd >> (32 - k->sh))) >> k->sh) - k->k2;
    vu my = (yb & 0x7FFFFFu) | 0x800000u;
    vu shl = splat((uint32_t)(k->sh + k->emin + 127)) - (yb >> 23);
    vu fr = sel_lt(splat(32), shl, srlv(my, shl - 32), sllv(my, 32 - shl));
    vu carry = ((fr & rnd) | ((fr | rnd) & ~(fr + rnd))) >> 31;
    vu subnormal = srlv(my, shl) + carry;
    return min_u(sel_lt(yb, k->thr, subnormal, normal), k->max_code);
}

/* The floats of magnitude codes c times the block's scale p2: the code moved into a float's
 * bit positions and rebiased is the element's value, or for a subnormal one (exponent field
 * 0, taken as 1) its value plus 2^emin, which is then taken off (exactly): every factor is a
 * normal float and exact, the product rounded once. */
INLINE vu decode_mag(vu c, vf p2, const elem_consts *k, int M)
{
    vu sub = (vu)(c < (1u << M));
    vu bits = (c << k->sh) + k->rebias + (sub & (1u << 23));
    vf v = (vf)bits - (vf)(sub & k->thr);
    vu r = (vu)(v * p2);
    if (k->specials) { /* E4M3's NaN code, E5M2's inf and NaN codes */
        vu special = sel_eq(c, k->ovf_code, k->special_ovf, splat(0x7FC00000u));
        r = sel_lt(k->max_code, c, special, r);
    }
    return r;
}

/* ---- blocks ---- */

/* The scale bytes of lanes holding blocks' largest magnitudes (float bits below 2^31), as
 * apsmpi_mx_scale_of gives them: 255 for inf or NaN, else floor(log2 amax) - emax + 127,
 * taken up to 0; an amax with exponent field 0 (zero, a float subnormal) gives 0 as there,
 * for 0 - emax < 0 (every element format's emax is at least 1). */
INLINE vu scale_bytes(vu amax, int emax)
{
    vi e = (vi)(amax >> 23) - emax;
    return sel_lt(amax, splat(0x7F800000u), (vu)(e & ~(e >> 31)), splat(APSMPI_MX_SCALE_NAN));
}

/* Encodes the block at p into its 1 + 4 * W bytes at o, given its scale byte E and 1 / X in
 * every lane of p2 (to nearest, or if SR with the random stream rng; counting the flushed
 * inputs into flushed if COUNT). */
INLINE void encode_block(const float *p, uint8_t *o, uint32_t E, vf p2, const elem_consts *k, int W, int COUNT, int SR,
                         rng_lanes *rng, vu *flushed)
{
    o[0] = (uint8_t)E;
    if (__builtin_expect(E == APSMPI_MX_SCALE_NAN, 0)) {
        memset(o + 1, 0, 4 * (size_t)W);
        if (SR) /* the stream moves on by the block */
            for (int v = 0; v < NV; v++)
                rng_next(rng);
        return;
    }
    vu code[NV];
    for (int v = 0; v < NV; v++) { /* loaded again, from L1: fewer live registers */
        vu x = load_f32(p + v * NL), ax = x & 0x7FFFFFFFu;
        vu mag = SR ? encode_mag_sr((vf)ax * p2, k, rng_next(rng)) : encode_mag((vf)ax * p2, k);
        if (COUNT)
            *flushed -= (vu)(mag == 0) & ~(vu)(ax == 0);
        code[v] = mag | ((x >> (31 - k->w1)) & k->signbit);
    }
    pack_bytes(narrow(code), W, o + 1);
}

/* The largest magnitude's bits in each lane position of the block at p. */
INLINE vu lane_maxima(const float *p)
{
    vu m = splat(0);
    for (int v = 0; v < NV; v++)
        m = max_u(load_f32(p + v * NL) & 0x7FFFFFFFu, m);
    return m;
}

/* Encodes nblocks blocks (element width W, mantissa bits M, kind KIND) to nearest, or if SR
 * stochastically with the random stream of key from buffer index idx; counts the flushed
 * inputs if COUNT. Two blocks at a time: their scales found together (block_maxima, then
 * 1 / X of each block in its half of p2, repeated to fill a vector). */
INLINE uint64_t encode_blocks(const float *in, size_t nblocks, uint8_t *out, int W, int M, int KIND, int COUNT, int SR,
                              uint64_t key, uint64_t idx)
{
    elem_consts k = elem_consts_of(W, M, KIND);
    in_register(&k.half), in_register(&k.k2), in_register(&k.thr), in_register(&k.magic), in_register(&k.max_code),
        in_register(&k.signbit);
    const size_t gb = 1 + 4 * (size_t)W;
    vu flushed = splat(0);
    rng_lanes rng = rng_start(key, idx);
    for (size_t b = 0; b < nblocks; b += 2) {
        const float *p = in + b * BLOCK;
        const int two = b + 1 < nblocks; /* else the last block alone, its maxima taken twice */
        vu m = lane_maxima(p);
        vu E = scale_bytes(block_maxima(m, two ? lane_maxima(p + BLOCK) : m), k.emax);
        vu p2 = (splat(254u) - E) << 23; /* 1 / X = 2^(127 - E), a normal float (unused for NaN) */
        encode_block(p, out + b * gb, E[0], (vf)__builtin_shufflevector(p2, p2, LOW_HALF_TWICE), &k, W, COUNT, SR, &rng,
                     &flushed);
        if (two)
            encode_block(p + BLOCK, out + (b + 1) * gb, E[NL / 2], (vf)__builtin_shufflevector(p2, p2, HIGH_HALF_TWICE),
                         &k, W, COUNT, SR, &rng, &flushed);
    }
    uint64_t total = 0;
    for (int i = 0; COUNT && i < NL; i++)
        total += flushed[i];
    return total;
}

/* Decodes nblocks blocks. */
INLINE void decode_blocks(const uint8_t *in, size_t nblocks, float *out, int W, int M, int KIND)
{
    const elem_consts k = elem_consts_of(W, M, KIND);
    const size_t gb = 1 + 4 * (size_t)W;
    for (size_t b = 0; b < nblocks; b++) {
        const uint8_t *g = in + b * gb;
        uint32_t E = g[0];
        vu code[NV];
        widen(unpack_bytes(g + 1, W), code);
        const vf p2 = (vf)splat(apsmpi_f2u(apsmpi_mx_scale_value(E)));
        for (int v = 0; v < NV; v++) {
            vu r = decode_mag(code[v] & k.magmask, p2, &k, M) | ((code[v] << (31 - k.w1)) & 0x80000000u);
            store_f32(out + b * BLOCK + v * NL, r);
        }
        if (__builtin_expect(E == APSMPI_MX_SCALE_NAN, 0))
            for (int j = 0; j < BLOCK; j++)
                out[b * BLOCK + j] = apsmpi_u2f(0x7FC00000u);
    }
}

/* The sum of two encoded blocks, decoded, added in float and encoded again. */
INLINE void sum_blocks(const uint8_t *a, uint8_t *io, size_t nblocks, int W, int M, int KIND)
{
    const size_t gb = 1 + 4 * (size_t)W;
    float x[BLOCK], y[BLOCK];
    for (size_t b = 0; b < nblocks; b++) {
        decode_blocks(a + b * gb, 1, x, W, M, KIND);
        decode_blocks(io + b * gb, 1, y, W, M, KIND);
        for (int v = 0; v < NV; v++)
            store_f32(x + v * NL, (vu)((vf)load_f32(x + v * NL) + (vf)load_f32(y + v * NL)));
        encode_blocks(x, 1, io + b * gb, W, M, KIND, 0, 0, 0, 0);
    }
}

/* The loops, with the element's width, mantissa bits and kind as constants. */
#define FORMAT_CASES(X)     \
    X(8, 3, APSMPI_KIND_FN) \
    X(8, 2, APSMPI_KIND_IEEE) X(6, 2, APSMPI_KIND_FINITE) X(6, 3, APSMPI_KIND_FINITE) X(4, 1, APSMPI_KIND_FINITE)
#define IS(W, M, KIND) (f->width == W && f->mbits == M && f->kind == KIND)

static size_t encode_vec(const apsmpi_format *f, const float *in, size_t nblocks, uint8_t *out, uint64_t *flushed)
{
#define ENCODE_CASE(W, M, KIND)                                                  \
    if (IS(W, M, KIND)) {                                                        \
        if (flushed)                                                             \
            *flushed += encode_blocks(in, nblocks, out, W, M, KIND, 1, 0, 0, 0); \
        else                                                                     \
            encode_blocks(in, nblocks, out, W, M, KIND, 0, 0, 0, 0);             \
        return nblocks;                                                          \
    }
    FORMAT_CASES(ENCODE_CASE)
#undef ENCODE_CASE
    return 0;
}

static size_t encode_sr_vec(const apsmpi_format *f, const float *in, size_t nblocks, uint64_t key, uint64_t idx,
                            uint8_t *out, uint64_t *flushed)
{
#define ENCODE_SR_CASE(W, M, KIND)                                                   \
    if (IS(W, M, KIND)) {                                                            \
        if (flushed)                                                                 \
            *flushed += encode_blocks(in, nblocks, out, W, M, KIND, 1, 1, key, idx); \
        else                                                                         \
            encode_blocks(in, nblocks, out, W, M, KIND, 0, 1, key, idx);             \
        return nblocks;                                                              \
    }
    FORMAT_CASES(ENCODE_SR_CASE)
#undef ENCODE_SR_CASE
    return 0;
}

static size_t decode_vec(const apsmpi_format *f, const uint8_t *in, size_t nblocks, float *out)
{
#define DECODE_CASE(W, M, KIND)                      \
    if (IS(W, M, KIND)) {                            \
        decode_blocks(in, nblocks, out, W, M, KIND); \
        return nblocks;                              \
    }
    FORMAT_CASES(DECODE_CASE)
#undef DECODE_CASE
    return 0;
}

static size_t sum_vec(const apsmpi_format *f, const uint8_t *a, uint8_t *io, size_t nblocks)
{
#define SUM_CASE(W, M, KIND)                    \
    if (IS(W, M, KIND)) {                       \
        sum_blocks(a, io, nblocks, W, M, KIND); \
        return nblocks;                         \
    }
    FORMAT_CASES(SUM_CASE)
#undef SUM_CASE
    return 0;
}

const apsmpi_mx_loops LOOPS = {LEVEL, encode_vec, encode_sr_vec, decode_vec, sum_vec};

#endif /* __x86_64__ */
