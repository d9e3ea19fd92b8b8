/* codec_mx_simd.c: the MX formats' loops for one x86 vector level (avx2 or avx512), compiled once per level with its -m flags. */
#if defined(__x86_64__) && !defined(__AVX512F__) && !defined(__AVX2__)
/* compiled alone without a level's -m flags (scripts/ci/depgraph.sh does): the avx2 level */
#pragma GCC target("avx2,f16c,fma")
#endif
#include <string.h>
#include "core/codec_mx.h"
#include "core/mx_elem.h"
#include "core/mxconv.h"
#include "core/prefetch.h"
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

typedef uint16_t vh __attribute__((vector_size(VB))); /* 16-bit lanes */

/* Lane selections on signed 32-bit comparisons (every value compared here is below 2^31),
 * unsigned minimum and maximum: a mask register and one blend on avx512, a compare and a
 * blendv on avx2. */
#if VB == 64
typedef __m512i vreg;

INLINE vu sel_lt(vu a, vu b, vu x, vu y) /* a < b ? x : y */
{
    return (vu)_mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask((vreg)a, (vreg)b), (vreg)y, (vreg)x);
}

INLINE vu sel_eq(vu a, vu b, vu x, vu y) /* a == b ? x : y */
{
    return (vu)_mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask((vreg)a, (vreg)b), (vreg)y, (vreg)x);
}

INLINE vu min_u(vu a, vu b) { return (vu)_mm512_min_epu32((vreg)a, (vreg)b); }

INLINE vu max_u(vu a, vu b) { return (vu)_mm512_max_epu32((vreg)a, (vreg)b); }

/* shifts by lane counts, giving 0 for counts of 32 and more */
INLINE vu srlv(vu a, vu n) { return (vu)_mm512_srlv_epi32((vreg)a, (vreg)n); }

INLINE vu sllv(vu a, vu n) { return (vu)_mm512_sllv_epi32((vreg)a, (vreg)n); }

/* a - b in each 16-bit half, taken up to 0 */
INLINE vu subs_u16(vu a, vu b) { return (vu)_mm512_subs_epu16((vreg)a, (vreg)b); }

/* NL bytes at p, sign- or zero-extended to the lanes */
INLINE vu widen_sx8(const uint8_t *p) { return (vu)_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)); }

INLINE vu widen_zx8(const uint8_t *p) { return (vu)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)); }

/* the 16 bytes at p in every 128-bit lane, and bytes chosen within each 128-bit lane */
INLINE vu bytes16_everywhere(const uint8_t *p)
{
    return (vu)_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)p));
}

INLINE vu shuffle_bytes(vu v, vu idx) { return (vu)_mm512_shuffle_epi8((vreg)v, (vreg)idx); }

/* acc + 1 in the lanes where a <= b (unsigned) and x != 0 */
INLINE vu count_le_nonzero(vu acc, vu a, vu b, vu x)
{
    __mmask16 k = _mm512_mask_test_epi32_mask(_mm512_cmple_epu32_mask((vreg)a, (vreg)b), (vreg)x, (vreg)x);
    return (vu)_mm512_mask_sub_epi32((vreg)acc, k, (vreg)acc, _mm512_set1_epi32(-1));
}

/* two blocks' lanes a, b: the low halves of both, the high halves of both; then within each
 * half of the result, lanes swapped by 4, 2 and 1 (block_maxima), and a half repeated */
#define LOW_HALVES_OF_BOTH 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define HIGH_HALVES_OF_BOTH 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define SWAP_BY_4 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11
#define SWAP_BY_2 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
#define SWAP_BY_1 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14
#define LOW_HALF_TWICE 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7
#define HIGH_HALF_TWICE 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15

/* 16-bit lanes (the packed sum's fp16 encode): the unsigned minimum; the fp16 of two vectors of
 * floats (to nearest even), lo's in the low half; 32 codes below 256 into their bytes, in order */
INLINE vh min_u16(vh a, vh b) { return (vh)_mm512_min_epu16((vreg)a, (vreg)b); }

INLINE vh fp16_of(vf lo, vf hi)
{
    return (vh)_mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtps_ph((__m512)lo, _MM_FROUND_TO_NEAREST_INT)),
                                  _mm512_cvtps_ph((__m512)hi, _MM_FROUND_TO_NEAREST_INT), 1);
}

INLINE __m256i bytes_of16(const vh *c) { return _mm512_cvtepi16_epi8((vreg)c[0]); }
#else
typedef __m256i vreg;

INLINE vu sel_lt(vu a, vu b, vu x, vu y)
{
    return (vu)_mm256_blendv_epi8((vreg)y, (vreg)x, _mm256_cmpgt_epi32((vreg)b, (vreg)a));
}

INLINE vu sel_eq(vu a, vu b, vu x, vu y)
{
    return (vu)_mm256_blendv_epi8((vreg)y, (vreg)x, _mm256_cmpeq_epi32((vreg)a, (vreg)b));
}

INLINE vu min_u(vu a, vu b) { return (vu)_mm256_min_epu32((vreg)a, (vreg)b); }

INLINE vu max_u(vu a, vu b) { return (vu)_mm256_max_epu32((vreg)a, (vreg)b); }

INLINE vu srlv(vu a, vu n) { return (vu)_mm256_srlv_epi32((vreg)a, (vreg)n); }

INLINE vu sllv(vu a, vu n) { return (vu)_mm256_sllv_epi32((vreg)a, (vreg)n); }

INLINE vu subs_u16(vu a, vu b) { return (vu)_mm256_subs_epu16((vreg)a, (vreg)b); }

INLINE vu widen_sx8(const uint8_t *p) { return (vu)_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)); }

INLINE vu widen_zx8(const uint8_t *p) { return (vu)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)); }

INLINE vu bytes16_everywhere(const uint8_t *p)
{
    return (vu)_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
}

INLINE vu shuffle_bytes(vu v, vu idx) { return (vu)_mm256_shuffle_epi8((vreg)v, (vreg)idx); }

/* (a <= b for values below 2^31: not b < a, a signed comparison) */
INLINE vu count_le_nonzero(vu acc, vu a, vu b, vu x) { return acc + ((vu)((vi)b < (vi)a) | (vu)(x == 0)) + 1u; }

#define LOW_HALVES_OF_BOTH 0, 1, 2, 3, 8, 9, 10, 11
#define HIGH_HALVES_OF_BOTH 4, 5, 6, 7, 12, 13, 14, 15
#define SWAP_BY_2 2, 3, 0, 1, 6, 7, 4, 5
#define SWAP_BY_1 1, 0, 3, 2, 5, 4, 7, 6
#define LOW_HALF_TWICE 0, 1, 2, 3, 0, 1, 2, 3
#define HIGH_HALF_TWICE 4, 5, 6, 7, 4, 5, 6, 7

INLINE vh min_u16(vh a, vh b) { return (vh)_mm256_min_epu16((vreg)a, (vreg)b); }

/* (hi's half through memory: vinserti128 from memory needs no shuffle port, from a register it
 * does, as does the conversion; the asm keeps the half in memory) */
INLINE vh fp16_of(vf lo, vf hi)
{
    __m128i high = _mm256_cvtps_ph((__m256)hi, _MM_FROUND_TO_NEAREST_INT);
    __asm__("" : "+m"(high));
    return (vh)_mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvtps_ph((__m256)lo, _MM_FROUND_TO_NEAREST_INT)),
                                       high, 1);
}

/* (packs work within 128-bit halves: c0 0-7, c1 0-7 | c0 8-15, c1 8-15, put in order) */
INLINE __m256i bytes_of16(const vh *c)
{
    return _mm256_permute4x64_epi64(_mm256_packus_epi16((vreg)c[0], (vreg)c[1]), 0xD8);
}
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
    int w1, sh, emax, emin, specials, bias;
    vu max_code, half_k2, k2, thr, magic, special_ovf, ovf_code, rebias, signbit, magmask;
    vu flush_bits; /* float bits of 2^(emin - M - 1), half the smallest subnormal: y <= it encodes as 0 */
} elem_consts;

INLINE elem_consts elem_consts_of(int W, int M, int kind)
{
    const apsmpi_mx_elem e = apsmpi_mx_elem_of(W, M, kind);
    /* half - (k2 << sh): the rounding's addend with the exponent's change k2 taken off (encode_mag) */
    const uint32_t half_k2 = e.half - (e.k2 << e.sh);
    elem_consts k = {e.w1,
                     e.sh,
                     e.emax,
                     e.emin,
                     e.specials,
                     127 - (int)(e.rebias >> 23),
                     splat(e.max_code),
                     splat(half_k2),
                     splat(e.k2),
                     splat(e.thr),
                     splat(e.magic),
                     splat(e.special_ovf),
                     splat(e.ovf_code),
                     splat(e.rebias),
                     splat(e.signbit),
                     splat(e.magmask),
                     splat((uint32_t)(e.emin - M - 1 + 127) << 23)};
    return k;
}

/* Keeps the constant vector at p (of any lane width) in a register through the loops on
 * avx512 (32 registers): gcc would otherwise make the element constants again inside the
 * loop, a broadcast each on the shuffle port, several a block. An empty asm that may change
 * it: the compiler cannot rematerialize it. (Not in the emulated avx512 level: no register of
 * AVX2 holds 64 bytes.) */
#if VB == 64 && !defined(APSMPI_EMULATE_AVX512)
#define in_register(p) __extension__({ __asm__("" : "+v"(*(p))); })
#else
#define in_register(p) ((void)(p))
#endif

/* Keeps the constants at p in memory on avx2 (16 registers), where gcc would make them again
 * inside the loop, each two moves and a broadcast on the shuffle port, and a load folded into
 * the operation that uses it costs nothing more: the same empty asm, on memory. Only for the
 * packed sum's fp16 encode (with add_scaled, x1.05-1.11: results/codec/mx_sum_fma.md); the
 * float encode's element constants, so kept, lost x0.95-0.98. */
#if VB == 32
#define in_memory(p) __extension__({ __asm__("" : "+m"(*(p))); })
#else
#define in_memory(p) ((void)(p))
#endif

/* The saturated magnitude codes of y = |x| / X, computed in float (exact unless y is a float
 * subnormal, which is far below every element's smallest subnormal and gives 0 either way):
 * a normal element rounds y's bits to nearest even at sh bits, a subnormal one is y + magic
 * rounded by the addition. The normal one is (yb + half + odd) >> sh less k2, the exponent's
 * change; k2 is even (ebits >= 2: (128 - 2^(ebits-1)) << M), so odd, the code's parity, is
 * that of yb >> sh, and k2 << sh (at most thr - 2^23, so yb >= thr stays above it) comes off
 * before the shift, in the addend half_k2. */
INLINE vu encode_mag(vf y, const elem_consts *k)
{
#if VB == 32
    /* avx2, without a selection (its blend is two uops or more): the normal code of max(y,
     * 2^emin), 1 << M below 2^emin, is at least the subnormal one there, and above it at most
     * the count of quanta Q = 2^(emin - M) in y rounded, which y + magic gives (an element at
     * 2^t of 2^emin codes (t + 1) 2^M + f, counting 2^t (2^M + f) quanta, equal at t = 0,
     * where both round at Q); the smaller is the code. (avx512's compare into a mask and masked
     * subtraction are faster than that maximum and minimum.) */
    vu yb = max_u((vu)y, k->thr);
    vu normal = (yb + k->half_k2 + ((yb >> k->sh) & 1u)) >> k->sh;
    vu subnormal = (vu)(y + (vf)k->magic) - k->magic;
    return min_u(min_u(normal, subnormal), k->max_code);
#else
    vu yb = (vu)y;
    vu normal = (yb + k->half_k2 + ((yb >> k->sh) & 1u)) >> k->sh;
    vu subnormal = (vu)(y + (vf)k->magic) - k->magic;
    return min_u(sel_lt(yb, k->thr, subnormal, normal), k->max_code);
#endif
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

/* ---- blocks: scales, codes and their bytes ---- */

/* The scale bytes of lanes holding blocks' largest magnitudes (float bits below 2^31), as
 * apsmpi_mx_scale_of gives them, but for inf or NaN: floor(log2 amax) - emax + 127 taken up to
 * 0 is the exponent field less emax, taken up to 0 (an amax with exponent field 0, zero or a
 * float subnormal, gives 0 as there: 0 - emax < 0 for every element format's emax >= 1); a
 * field below 256 leaves 16-bit lanes' high halves 0, so a saturating 16-bit subtraction does
 * it. Inf or NaN (field 255) gives 255 - emax: is_nan_scale tells it, and the block's byte is
 * then APSMPI_MX_SCALE_NAN. */
INLINE vu scale_bytes(vu amax, int emax) { return subs_u16(amax >> 23, splat((uint32_t)emax)); }

INLINE int is_nan_scale(uint32_t E, int emax) { return E == 255u - (uint32_t)emax; }

/* How a block's NV vectors of codes hold its 32 elements: in order (vector v elements v * NL
 * to v * NL + NL - 1), or as the packed sum's 4-bit and 8-bit decodes leave them
 * (block_values): vectors 2i and 2i+1 the even and the odd elements 2 i NL + 2j and 2 i NL +
 * 2j + 1 in lane j, for 4 bits the low and the high nibbles of the bytes i NL to i NL + NL -
 * 1, for 8 bits the low and the high bytes of the 16-bit words i NL to i NL + NL - 1. */
enum code_layout { IN_ORDER = 0, NIBBLES = 1, EVEN_ODD = 2 };

/* A block's NV vectors of codes (each below 2^W), in order, into its 4 * W bytes at o. */
INLINE void store_codes(const vu *code, int W, uint8_t *o)
{
#if VB == 64
    /* packs work within 128-bit lanes: lane L's first dword holds codes 4L-4L+3, its second
     * codes 16+4L-19+4L; one permutation puts the dwords in order */
    __m512i b = _mm512_packus_epi16(_mm512_packus_epi32((vreg)code[0], (vreg)code[1]), _mm512_setzero_si512());
    b = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), b);
    pack_bytes(_mm512_castsi512_si256(b), W, o);
#else
    pack_bytes(narrow(code), W, o);
#endif
}

/* The codes (magnitude and sign) of the floats x (bits) of a block of scale byte E, given 1 / X
 * in every lane of p2, to nearest or (SR) stochastically from the random stream rng; with
 * COUNT, the non-zero inputs flushed to zero counted into *flushed: nearest rounding gives a
 * zero magnitude exactly to y <= 2^(emin - M - 1). */
INLINE vu code_of(vu x, vf p2, const elem_consts *k, int COUNT, int SR, rng_lanes *rng, vu *flushed)
{
    vu ax = x & 0x7FFFFFFFu;
    vf y = (vf)ax * p2;
    vu mag;
    if (SR) {
        mag = encode_mag_sr(y, k, rng_next(rng));
        if (COUNT)
            *flushed -= (vu)(mag == 0) & ~(vu)(ax == 0);
    } else {
        mag = encode_mag(y, k);
        if (COUNT)
            *flushed = count_le_nonzero(*flushed, (vu)y, k->flush_bits, ax);
    }
    return mag | ((x >> (31 - k->w1)) & k->signbit);
}

/* A NaN block's 1 + 4 W bytes at o: the NaN scale byte and zero codes. */
INLINE void write_nan_block(uint8_t *o, int W)
{
    o[0] = (uint8_t)APSMPI_MX_SCALE_NAN;
    memset(o + 1, 0, 4 * (size_t)W);
}

/* Encodes one block (x: its floats' bits, in order) of scale byte E into its 1 + 4 W bytes at
 * o: a NaN scale with zero codes (the random stream moving on by the block), else the scale
 * byte E and the codes of x. */
INLINE void encode_block(const vu *x, uint8_t *o, uint32_t E, vf p2, const elem_consts *k, int W, int COUNT, int SR,
                         rng_lanes *rng, vu *flushed)
{
    if (__builtin_expect(is_nan_scale(E, k->emax), 0)) {
        write_nan_block(o, W);
        for (int v = 0; SR && v < NV; v++)
            rng_next(rng);
        return;
    }
    o[0] = (uint8_t)E;
    vu code[NV];
    for (int v = 0; v < NV; v++)
        code[v] = code_of(x[v], p2, k, COUNT, SR, rng, flushed);
    store_codes(code, W, o + 1);
}

/* The largest magnitude's bits in each lane position of a block's floats x. */
INLINE vu lane_maxima(const vu *x)
{
    vu m = x[0] & 0x7FFFFFFFu;
    for (int v = 1; v < NV; v++)
        m = max_u(x[v] & 0x7FFFFFFFu, m);
    return m;
}

/* The scales of two blocks x0 and x1 (floats' bits), or of x0 alone where !two, found
 * together: each block's largest value's exponent field (top) and scale byte E, and in every
 * lane of factor[i] the power of two 2^(127 - E - shift) for block i (a normal float for every
 * shift used here, but for a NaN block's E, unused): 1 / X for shift 0. */
typedef struct pair_scales {
    uint32_t top[2], E[2];
    vf factor[2];
} pair_scales;

INLINE pair_scales scales_of_pair(const vu *x0, const vu *x1, int two, int emax, int shift)
{
    vu m = lane_maxima(x0);
    vu amax = block_maxima(m, two ? lane_maxima(x1) : m), top = amax >> 23, E = scale_bytes(amax, emax);
    vu p2 = (splat((uint32_t)(254 - shift)) - E) << 23;
    pair_scales ps = {
        {top[0], top[NL / 2]},
        {E[0], E[NL / 2]},
        {(vf)__builtin_shufflevector(p2, p2, LOW_HALF_TWICE), (vf)__builtin_shufflevector(p2, p2, HIGH_HALF_TWICE)}};
    return ps;
}

/* Encodes two blocks, x0 and x1 (floats' bits in order), into their packing groups at o (gb
 * bytes each), or x0 alone where !two (scales_of_pair). */
INLINE void encode_pair(const vu *x0, const vu *x1, int two, uint8_t *o, size_t gb, const elem_consts *k, int W,
                        int COUNT, int SR, rng_lanes *rng, vu *flushed)
{
    const pair_scales ps = scales_of_pair(x0, x1, two, k->emax, 0);
    encode_block(x0, o, ps.E[0], ps.factor[0], k, W, COUNT, SR, rng, flushed);
    if (two)
        encode_block(x1, o + gb, ps.E[1], ps.factor[1], k, W, COUNT, SR, rng, flushed);
}

/* The prefetch distance in blocks (core/prefetch.h says why). */
enum { AHEAD = PREFETCH_AHEAD / BLOCK };

INLINE void load_block(const float *p, vu *x)
{
    for (int v = 0; v < NV; v++)
        x[v] = load_f32(p + v * NL);
}

INLINE uint64_t lanes_total(vu c)
{
    uint64_t total = 0;
    for (int i = 0; i < NL; i++)
        total += c[i];
    return total;
}

/* Encodes nblocks blocks (element width W, mantissa bits M, kind KIND) to nearest, or if SR
 * stochastically with the random stream of key from buffer index idx; returns the flushed
 * inputs if COUNT. Two blocks at a time (encode_pair). */
INLINE uint64_t encode_blocks(const float *in, size_t nblocks, uint8_t *out, int W, int M, int KIND, int COUNT, int SR,
                              uint64_t key, uint64_t idx)
{
    elem_consts k = elem_consts_of(W, M, KIND);
    in_register(&k.half_k2), in_register(&k.thr), in_register(&k.magic), in_register(&k.max_code),
        in_register(&k.signbit);
    const size_t gb = 1 + 4 * (size_t)W;
    vu flushed = splat(0);
    rng_lanes rng = rng_start(key, idx);
    vu x0[NV], x1[NV];
    size_t b = 0;
    for (; b + 2 <= nblocks; b += 2) {
        if (b + AHEAD + 2 <= nblocks)
            prefetch_read(in + (b + AHEAD) * BLOCK, 2 * BLOCK * sizeof(float));
        load_block(in + b * BLOCK, x0);
        load_block(in + (b + 1) * BLOCK, x1);
        encode_pair(x0, x1, 1, out + b * gb, gb, &k, W, COUNT, SR, &rng, &flushed);
    }
    if (b < nblocks) { /* the last block alone, its maxima taken twice */
        load_block(in + b * BLOCK, x0);
        encode_pair(x0, x0, 0, out + b * gb, gb, &k, W, COUNT, SR, &rng, &flushed);
    }
    return COUNT ? lanes_total(flushed) : 0;
}

/* ---- the measured encode (apsmpi_mx_measure) ---- */

/* APSMPI_FORMAT=auto's measure in the encode's pass. A block of scale byte E with 1 <= E (not
 * clamped: X = 2^(top - 127 - emax) for its top, the largest value's exponent field) and top >=
 * D + 1 for every depth D counted holds a value v at depth d >= D (apsmpi_mx_measure) exactly
 * when |v| <= 2^(top - 127 - D), that is y = |v| / X <= 2^(emax - D) (for a float subnormal v
 * both hold: d = top - 1 >= D, |v| < 2^-126 <= 2^(top - 127 - D); the product y, exact but
 * where it is a float subnormal far below 2^(emax - D), keeps the order); the codec flushes v
 * exactly when y <= 2^(emin - M - 1); and with E <= 127 (X <= 1) y is 0 only for v = 0. Each
 * of those is cf <= a constant for cf = ceil(log2 y) + 127, the exponent field of y rounded up:
 * (yb + 2^23 - 1) >> 23 (0 for y = 0). So for a pair of blocks both of which are such ("fast")
 * the loop takes cf - 128 of every lane, narrows four vectors of them to bytes with saturating
 * packs (nothing saturates: -128 <= cf - 128 <= emax), and counts the bytes at or below each
 * constant, 64 at a time (avx512: a compare into a mask, a masked subtraction) or 32 (avx2: a
 * signed compare and a subtraction); the byte counters go into 64-bit sums (vpsadbw) before any
 * can wrap. Every other block (clamped, small, large, NaN, or a last block alone) is counted
 * from its inputs as apsmpi_flush_depths counts: d = top - 1 - ((|v| bits - 1) >> 23) for v
 * != 0, the flushed ones by code_of. */
enum { T_ZERO, T_FLUSH, T_DEPTH, NT = T_DEPTH + APSMPI_DEPTH_BINS };

typedef struct measure_state {
    uint32_t fast_lo;     /* the smallest fast scale byte (fast: fast_lo <= E <= 127) */
    vreg at_most[NT];     /* the bytes' thresholds (avx2: plus one, for a signed less-than) */
    vreg count[NT];       /* byte counters since the last spill */
    vq total[NT];         /* their sums */
    int groups;           /* groups of 4 vectors counted since the last spill */
    int flush_slot;       /* T_FLUSH, or T_DEPTH + i where depth i is the format's own flush depth */
    uint64_t fast_blocks; /* blocks counted the fast way */
    vu exact_nonzero, exact_flushed, exact_deep[APSMPI_DEPTH_BINS]; /* the others' counts */
    vu depth[APSMPI_DEPTH_BINS];
} measure_state;

INLINE vreg bytes_splat(int v)
{
#if VB == 64
    return _mm512_set1_epi8((char)v);
#else
    return _mm256_set1_epi8((char)v);
#endif
}

INLINE void measure_start(measure_state *ms, const apsmpi_mx_measure *m, const elem_consts *k, int M)
{
    memset(ms, 0, sizeof *ms);
    int deepest = 0, at_most[NT];
    at_most[T_ZERO] = -128;
    at_most[T_FLUSH] = k->emin - M - 2;
    for (int i = 0; i < APSMPI_DEPTH_BINS; i++) {
        int D = m->bins.depth[i] < 255 ? m->bins.depth[i] : 255; /* 255 and above: none (d <= 254) */
        ms->depth[i] = splat((uint32_t)D);
        if (D < 255)
            deepest = D > deepest ? D : deepest;
        /* a depth the fast blocks cannot reach counts their zeros, which are taken off */
        at_most[T_DEPTH + i] = D < 255 && k->emax - D - 1 >= -128 ? k->emax - D - 1 : -128;
    }
    /* the format's own depth (apsmpi_format_flush_depth) has the flush bound: one count less */
    ms->flush_slot = T_FLUSH;
    for (int i = APSMPI_DEPTH_BINS - 1; i >= 0; i--)
        if (m->bins.depth[i] == k->emax - k->emin + M + 1)
            ms->flush_slot = T_DEPTH + i;
    int lo = deepest + 1 - k->emax;
    ms->fast_lo = (uint32_t)(lo > 1 ? lo : 1);
    for (int t = 0; t < NT; t++)
        ms->at_most[t] = bytes_splat(VB == 64 ? at_most[t] : at_most[t] + 1);
}

INLINE void measure_spill(measure_state *ms)
{
    for (int t = 0; t < NT; t++) {
#if VB == 64
        ms->total[t] += (vq)_mm512_sad_epu8(ms->count[t], _mm512_setzero_si512());
        ms->count[t] = _mm512_setzero_si512();
#else
        ms->total[t] += (vq)_mm256_sad_epu8(ms->count[t], _mm256_setzero_si256());
        ms->count[t] = _mm256_setzero_si256();
#endif
    }
    ms->groups = 0;
}

/* cf - 128 (above) of the lanes y */
INLINE vu ceil_field_less_128(vf y) { return (vu)((vi)((vu)y + (0x7FFFFFu - (128u << 23))) >> 23); }

/* Counts 4 vectors of cf - 128: one pair of blocks on avx512, one block on avx2. */
INLINE void measure_group(measure_state *ms, const vu *cf)
{
#if VB == 64
    vreg b =
        _mm512_packs_epi16(_mm512_packs_epi32((vreg)cf[0], (vreg)cf[1]), _mm512_packs_epi32((vreg)cf[2], (vreg)cf[3]));
    for (int t = 0; t < NT; t++)
        if (t != T_FLUSH || ms->flush_slot == T_FLUSH)
            ms->count[t] = _mm512_mask_sub_epi8(ms->count[t], _mm512_cmple_epi8_mask(b, ms->at_most[t]), ms->count[t],
                                                _mm512_set1_epi8(-1));
#else
    vreg b =
        _mm256_packs_epi16(_mm256_packs_epi32((vreg)cf[0], (vreg)cf[1]), _mm256_packs_epi32((vreg)cf[2], (vreg)cf[3]));
    for (int t = 0; t < NT; t++)
        if (t != T_FLUSH || ms->flush_slot == T_FLUSH)
            ms->count[t] = _mm256_sub_epi8(ms->count[t], _mm256_cmpgt_epi8(ms->at_most[t], b));
#endif
    if (++ms->groups == 255)
        measure_spill(ms);
}

/* A block (x: its floats' bits, top: its largest value's exponent field) counted from its inputs. */
INLINE void measure_exact(measure_state *ms, const vu *x, uint32_t top)
{
    for (int v = 0; v < NV; v++) {
        vu a = x[v] & 0x7FFFFFFFu, g = (a - 1u) >> 23; /* zero: 511, past every depth's top - D */
        ms->exact_nonzero -= (vu)(a != 0);
        for (int i = 0; i < APSMPI_DEPTH_BINS; i++) /* d >= D: g <= top - 1 - D */
            ms->exact_deep[i] -= (vu)((vi)g < (vi)(splat(top) - ms->depth[i]));
    }
}

INLINE void measure_finish(measure_state *ms, apsmpi_mx_measure *m)
{
    measure_spill(ms);
    uint64_t c[NT];
    for (int t = 0; t < NT; t++) {
        c[t] = 0;
        for (int i = 0; i < VB / 8; i++)
            c[t] += ms->total[t][i];
    }
    m->count[APSMPI_COUNT_NONZERO] += ms->fast_blocks * BLOCK - c[T_ZERO] + lanes_total(ms->exact_nonzero);
    m->count[APSMPI_COUNT_FLUSHED] += c[ms->flush_slot] - c[T_ZERO] + lanes_total(ms->exact_flushed);
    for (int i = 0; i < APSMPI_DEPTH_BINS; i++)
        m->count[APSMPI_COUNT_DEEP + i] += c[T_DEPTH + i] - c[T_ZERO] + lanes_total(ms->exact_deep[i]);
}

/* encode_pair's two blocks (or x0 alone where !two), measured. */
INLINE void encode_pair_measured(const vu *x0, const vu *x1, int two, uint8_t *o, size_t gb, const elem_consts *k,
                                 int W, measure_state *ms)
{
    const pair_scales ps = scales_of_pair(x0, x1, two, k->emax, 0);
    const vf p2a = ps.factor[0], p2b = ps.factor[1];
    const uint32_t E0 = ps.E[0], E1 = ps.E[1], span = 127u - ms->fast_lo;
    if (two && E0 - ms->fast_lo <= span && E1 - ms->fast_lo <= span) {
        vu cf[2 * NV];
        encode_block(x0, o, E0, p2a, k, W, 0, 0, NULL, NULL);
        encode_block(x1, o + gb, E1, p2b, k, W, 0, 0, NULL, NULL);
        for (int v = 0; v < NV; v++) {
            cf[v] = ceil_field_less_128((vf)(x0[v] & 0x7FFFFFFFu) * p2a);
            cf[NV + v] = ceil_field_less_128((vf)(x1[v] & 0x7FFFFFFFu) * p2b);
        }
        for (int g = 0; g < 2 * NV; g += 4)
            measure_group(ms, cf + g);
        ms->fast_blocks += 2;
        return;
    }
    encode_block(x0, o, E0, p2a, k, W, 1, 0, NULL, &ms->exact_flushed);
    measure_exact(ms, x0, ps.top[0]);
    if (two) {
        encode_block(x1, o + gb, E1, p2b, k, W, 1, 0, NULL, &ms->exact_flushed);
        measure_exact(ms, x1, ps.top[1]);
    }
}

/* encode_blocks to nearest, measured into m. */
INLINE void encode_blocks_measured(const float *in, size_t nblocks, uint8_t *out, int W, int M, int KIND,
                                   apsmpi_mx_measure *m)
{
    elem_consts k = elem_consts_of(W, M, KIND);
    in_register(&k.half_k2), in_register(&k.thr), in_register(&k.magic), in_register(&k.max_code),
        in_register(&k.signbit);
    const size_t gb = 1 + 4 * (size_t)W;
    measure_state ms;
    measure_start(&ms, m, &k, M);
    vu x0[NV], x1[NV];
    size_t b = 0;
    for (; b + 2 <= nblocks; b += 2) {
        if (b + AHEAD + 2 <= nblocks)
            prefetch_read(in + (b + AHEAD) * BLOCK, 2 * BLOCK * sizeof(float));
        load_block(in + b * BLOCK, x0);
        load_block(in + (b + 1) * BLOCK, x1);
        encode_pair_measured(x0, x1, 1, out + b * gb, gb, &k, W, &ms);
    }
    if (b < nblocks) {
        load_block(in + b * BLOCK, x0);
        encode_pair_measured(x0, x0, 0, out + b * gb, gb, &k, W, &ms);
    }
    measure_finish(&ms, m);
}

/* ---- the packed sum ---- */

/* The packed sum decodes both blocks of a pair into registers, adds them and encodes the sums
 * (encode_pair16, through fp16), two blocks of each operand at a time. Its decode gives each element's value
 * exactly as a normal float (a float subnormal would cost a microcode assist in the product
 * that scales it, some 100 cycles a vector), possibly times 2^-off, a constant:
 *   - on avx512, W 4 and 5: the value itself (off = 0) from a table (vpermps, 16 entries:
 *     W 4's codes, sign included; vpermt2ps, 32: W 5's codes, sign included, packed_lanes);
 *     W 6 goes as avx2 (below): a table of its 32 magnitudes and its sign taken from the
 *     code's lane cost more than the conversion (results/codec/mx_loops_zen4.md: x1.08-1.09
 *     on Zen 4; llvm-mca for Ice Lake: ports 0 and 5 less busy);
 *   - else (W 6 and 8, and avx2): the F16C conversion of the fp16 whose sign, exponent and mantissa
 *     bits are the code's: an element of ebits <= 5 and M <= 10 placed in an fp16 is its value
 *     times 2^(bias - 15) (off = 15 - bias), its subnormals included, and every fp16 is a
 *     normal float. The codes come to 16-bit lanes with their sign at bit 15 (W 8: the bytes
 *     sign-extended and shifted; W 5 and 6: the two bytes at the code's bit by a byte shuffle,
 *     then a multiplication by 2^(16 - W - offset); W 4: a byte's low or high nibble), and an
 *     arithmetic shift right by 5 - ebits and a mask make the fp16.
 * Then io's values are scaled to a's block: the sum is taken divided by a's scale
 * (sum_pair_fast says why that is exact), which the scale bytes written take back. A pair
 * outside that window, with a NaN scale byte among them, or with an element's NaN code (E4M3,
 * which fp16 has not), goes through decode_group (sum_pair_exact). */
typedef struct sum_consts {
    vu pick[NV];  /* W 5: the byte shuffles that give each code a 32-bit lane (packed_lanes) */
    vu down;      /* W 5: a lane's code down to bit 0 */
    vu pick16[2]; /* W 6, and avx2 W 5: the 2 bytes at each code's bit, two 16-code halves in 16-bit lanes */
    vu mul;       /* W 6, and avx2 W 5: 2^(16 - W - offset) in each 16-bit lane */
    vf table[2];  /* avx512: the values of the codes (W 4 and 5, sign included) */
    vu fp16_mask; /* the sign and the magnitude's bits of an fp16 (in both 16-bit halves) */
} sum_consts;

/* The value of magnitude code c, exactly (a normal float: every element value is one). */
static inline float unit_value(uint32_t c, const apsmpi_mx_elem *e)
{
    uint32_t ex = c >> e->mbits, m = c & ((1u << e->mbits) - 1u);
    if (ex == 0)
        return (float)m * apsmpi_u2f((uint32_t)(e->emin - e->mbits + 127) << 23);
    return apsmpi_u2f(((ex + 127u - (127u - (e->rebias >> 23))) << 23) | m << e->sh);
}

INLINE sum_consts sum_consts_of(int W, int M, int KIND)
{
    const apsmpi_mx_elem e = apsmpi_mx_elem_of(W, M, KIND);
    sum_consts c;
    memset(&c, 0, sizeof c);
    uint32_t mask = 0x8000u | e.magmask << (10 - M);
    c.fp16_mask = splat(mask | mask << 16);
#if VB == 64
    for (int j = 0; (W == 4 || W == 5) && j < 2 * NL; j++) { /* the sign in the table: 16 or 32 codes */
        const uint32_t code = (uint32_t)j, sign = 1u << (W - 1);
        c.table[j / NL][j % NL] =
            j < 2 * (int)sign ? (code & sign ? -1.0f : 1.0f) * unit_value(code & (sign - 1u), &e) : 0.0f;
    }
#endif
    for (int h = 0; (W == 6 || (VB == 32 && W == 5)) && h < 2; h++)
        for (int j = 0; j < 16; j++) { /* 16-bit lane j of half h: code 16h + j, of 16 bytes loaded at 4 W h - 16 h */
            uint32_t bit = (uint32_t)(W * (16 * h + j)), base = h ? 4u * (uint32_t)W - 16u : 0u;
            uint32_t at = bit / 8 - base, next = bit / 8 + 1 < 4u * (uint32_t)W ? at + 1 : 0x80u;
            c.pick16[h][j / 2] |= (at | next << 8) << (16 * (j % 2));
            c.mul[j / 2] |= (1u << (16 - W - bit % 8)) << (16 * (j % 2));
        }
    /* element i: the 2 bytes at bit W i, of 16 loaded at 0 (i < 16) or at 4 W - 16 */
    for (int v = 0; W == 5 && v < NV; v++)
        for (int j = 0; j < NL; j++) {
            uint32_t bit = (uint32_t)(W * (v * NL + j)), base = v * NL >= 16 ? 4u * (uint32_t)W - 16u : 0u;
            uint32_t at = bit / 8 - base, next = bit / 8 + 1 < 4u * (uint32_t)W ? at + 1 : 0x80u;
            c.pick[v][j] = at | next << 8 | 0x8080u << 16;
            c.down[j] = bit % 8;
        }
    return c;
}

/* the low 256 bits of a vector of either level */
#if VB == 64
#define LOW256(v) _mm512_castsi512_si256((vreg)(v))
#else
#define LOW256(v) ((__m256i)(v))
#endif

/* the fp16 of 16 codes in 16-bit lanes, each at the top of its lane (the packed sum's decode, above) */
INLINE __m256i fp16_of_top(__m256i top, const sum_consts *sc, int ebits)
{
    return _mm256_and_si256(_mm256_srai_epi16(top, 5 - ebits), LOW256(sc->fp16_mask));
}

#if VB == 64
/* The floats of 16 fp16 */
INLINE vf from_fp16(__m256i h) { return (vf)_mm512_cvtph_ps(h); }
#else
/* The floats of the 32 fp16 in h[0] and h[1]: x[v] those of the v-th 16 bytes of the two, or
 * where evens_odds the low half of h[0], of h[1], then the high halves. Through memory:
 * vcvtph2ps from memory loads its 16 bytes, from a register it needs the shuffle port
 * besides, and the high halves an extract there too (the asm keeps the compiler from
 * forwarding the store into registers). */
INLINE void floats_of_fp16(const __m256i *h, int evens_odds, vf *x)
{
    __m256i buf[2] = {h[0], h[1]};
    __asm__("" : "+m"(buf));
    const __m128i *piece = (const __m128i *)buf;
    for (int v = 0; v < NV; v++)
        x[v] = (vf)_mm256_cvtph_ps(_mm_loadu_si128(piece + (evens_odds ? v % 2 * 2 + v / 2 : v)));
}
#endif

/* The codes of a bit-packed block (W 5) at c, each in a 32-bit lane (in order) with the
 * bits that follow it: the 2 bytes at its bit (sum_consts' pick), the code at bit down. */
INLINE void packed_lanes(const uint8_t *c, int W, const sum_consts *sc, vu *raw)
{
    for (int v = 0; v < NV; v++)
        raw[v] = shuffle_bytes(bytes16_everywhere(c + (v * NL >= 16 ? 4 * W - 16 : 0)), sc->pick[v]);
}

/* ---- decode ---- */

/* The floats (bits) of the packing group g, exactly as mxconv.h decodes them, in order. */
INLINE void decode_group(const uint8_t *g, vu *out, const elem_consts *k, const sum_consts *sc, int W, int M)
{
    uint32_t E = g[0];
    vu code[NV];
    if (W == 5) { /* (simd_bytes.h does not unpack width 5) */
        packed_lanes(g + 1, W, sc, code);
        for (int v = 0; v < NV; v++)
            code[v] = srlv(code[v], sc->down) & 0x1Fu;
    } else {
        widen(unpack_bytes(g + 1, W), code);
    }
    const vf p2 = (vf)splat(apsmpi_f2u(apsmpi_mx_scale_value(E)));
    for (int v = 0; v < NV; v++)
        out[v] = decode_mag(code[v] & k->magmask, p2, k, M) | ((code[v] << (31 - k->w1)) & 0x80000000u);
    if (__builtin_expect(E == APSMPI_MX_SCALE_NAN, 0))
        for (int v = 0; v < NV; v++)
            out[v] = splat(0x7FC00000u);
}

/* Decodes nblocks blocks. */
INLINE void decode_blocks(const uint8_t *in, size_t nblocks, float *out, int W, int M, int KIND)
{
    const elem_consts k = elem_consts_of(W, M, KIND);
    const sum_consts sc = sum_consts_of(W, M, KIND);
    const size_t gb = 1 + 4 * (size_t)W;
    for (size_t b = 0; b < nblocks; b++) {
        if (b + AHEAD < nblocks) {
            prefetch_read(in + (b + AHEAD) * gb, gb);
            prefetch_write(out + (b + AHEAD) * BLOCK, BLOCK * sizeof(float));
        }
        vu x[NV];
        decode_group(in + b * gb, x, &k, &sc, W, M);
        for (int v = 0; v < NV; v++)
            store_f32(out + b * BLOCK + v * NL, x[v]);
    }
}

/* Codes 16 i to 16 i + 15 of a bit-packed block (W 5 or 6) at c, each at the top of a 16-bit
 * lane: the 2 bytes at its bit (sum_consts' pick16), multiplied up by 2^(16 - W - bit % 8). */
INLINE __m256i packed_codes_at_top(const uint8_t *c, const sum_consts *sc, int W, int i)
{
    const __m256i bytes = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(c + (4 * W - 16) * i)));
    return _mm256_mullo_epi16(_mm256_shuffle_epi8(bytes, LOW256(sc->pick16[i])), LOW256(sc->mul));
}

/* The values of a block's codes at c in the fast layout, times 2^-off (off = 15 - bias for
 * the fp16 conversion, 0 for a table), and for a table where !unit times q (a power of two, a
 * normal float: the table multiplied by q before the lookups). The fp16 conversion's values
 * are never scaled here: sum_pair_fast scales them in its addition (add_scaled). */
INLINE void block_values(const uint8_t *c, vf q, int unit, const elem_consts *k, const sum_consts *sc, int W, int M,
                         vf *x)
{
    const int ebits = W - 1 - M;
    (void)k;
#if VB == 64
    if (W == 4) {
        const __m512 t = (__m512)(unit ? sc->table[0] : sc->table[0] * q);
        vu raw = widen_zx8(c);
        x[0] = (vf)_mm512_permutexvar_ps((vreg)raw, t);
        x[1] = (vf)_mm512_permutexvar_ps((vreg)(raw >> 4), t);
        return;
    }
    if (W == 6) { /* in order, as avx2's */
        for (int i = 0; i < 2; i++)
            x[i] = from_fp16(fp16_of_top(packed_codes_at_top(c, sc, W, i), sc, ebits));
        return;
    }
    /* W 5: 32 entries (the index's low 5 bits), its codes */
    if (W == 5) {
        const __m512 t0 = (__m512)(unit ? sc->table[0] : sc->table[0] * q);
        const __m512 t1 = (__m512)(unit ? sc->table[1] : sc->table[1] * q);
        vu raw[NV];
        packed_lanes(c, W, sc, raw);
        for (int v = 0; v < NV; v++) {
            vu i = srlv(raw[v], sc->down);
            x[v] = (vf)_mm512_permutex2var_ps(t0, (vreg)i, t1);
        }
        return;
    }
    /* W 8: the code bytes as 16-bit words, the low bytes moved up: the even and the odd codes,
     * each at the top of its lane (EVEN_ODD) */
    x[0] = from_fp16(fp16_of_top(_mm256_slli_epi16(_mm256_loadu_si256((const __m256i *)c), 8), sc, ebits));
    x[1] = from_fp16(fp16_of_top(_mm256_loadu_si256((const __m256i *)c), sc, ebits));
#else
    __m256i h[2];
    if (W == 4) { /* even and odd elements */
        __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)c));
        h[0] = fp16_of_top(_mm256_slli_epi16(w, 12), sc, ebits);
        h[1] = fp16_of_top(_mm256_slli_epi16(w, 8), sc, ebits);
    } else if (W == 8) { /* the even and the odd codes of each 16 bytes, as on avx512, both halves at once */
        __m256i w = _mm256_loadu_si256((const __m256i *)c);
        h[0] = fp16_of_top(_mm256_slli_epi16(w, 8), sc, ebits);
        h[1] = fp16_of_top(w, sc, ebits);
    } else {
        for (int i = 0; i < 2; i++) /* W 5 and 6 */
            h[i] = fp16_of_top(packed_codes_at_top(c, sc, W, i), sc, ebits);
    }
    floats_of_fp16(h, W == 4 || W == 8, x); /* W 4 and 8: the even, then the odd codes */
#endif
}

/* E4M3's room below its NaN code (magnitude 0x7F, the only one above max_code) in each of a
 * block's 32 code bytes at c: 0x7F less the magnitude, 0 for the NaN code. */
INLINE __m256i room_below_nan(const uint8_t *c)
{
    return _mm256_andnot_si256(_mm256_loadu_si256((const __m256i *)c), _mm256_set1_epi8(0x7F));
}

/* Whether no code of a pair's blocks (or the first alone) at a and io is E4M3's NaN code: no
 * byte of the rooms' minimum is 0. */
INLINE int no_nan_code(const uint8_t *a, const uint8_t *io, int two, size_t gb)
{
    __m256i m = _mm256_min_epu8(room_below_nan(a + 1), room_below_nan(io + 1));
    if (two)
        m = _mm256_min_epu8(m, _mm256_min_epu8(room_below_nan(a + gb + 1), room_below_nan(io + gb + 1)));
    __m256i zero = _mm256_cmpeq_epi8(m, _mm256_setzero_si256());
    return _mm256_testz_si256(zero, zero);
}

/* The sums of the blocks of a pair (or the first alone) decoded exactly, in order. */
INLINE void sum_pair_exact(const uint8_t *a, const uint8_t *io, int two, size_t gb, const elem_consts *k,
                           const sum_consts *sc, int W, int M, vu *s0, vu *s1)
{
    for (int blk = 0; blk < 1 + two; blk++) {
        vu x[NV], y[NV], *s = blk ? s1 : s0;
        decode_group(a + blk * gb, x, k, sc, W, M);
        decode_group(io + blk * gb, y, k, sc, W, M);
        for (int v = 0; v < NV; v++)
            s[v] = (vu)((vf)x[v] + (vf)y[v]);
    }
}

/* The scale bytes A (of a's block) and B (of io's) for which sum_pair_fast holds: both
 * within [64, 190] and at most 60 apart. */
INLINE int in_window(uint32_t A, uint32_t B) { return A - 64u <= 126u && B - 64u <= 126u && A - B + 60u <= 120u; }

/* Whether block_values scales io's values by a table multiplied once (avx512, W 4 and 5);
 * else sum_pair_fast scales them in the addition, x + y q with one rounding (a fused
 * multiply-add: y q is exact, so this is the rounded x + y q of a multiplication and an
 * addition, one operation fewer a vector) */
#define SCALED_TABLE(W) (VB == 64 && ((W) == 4 || (W) == 5))

#if VB == 64
INLINE vf add_scaled(vf x, vf y, vf q) { return (vf)_mm512_fmadd_ps((__m512)y, (__m512)q, (__m512)x); }
#else
INLINE vf add_scaled(vf x, vf y, vf q) { return (vf)_mm256_fmadd_ps((__m256)y, (__m256)q, (__m256)x); }
#endif

/* The sums of the blocks of a pair divided by a's scales 2^(A - 127) and by 2^off, in the fast
 * layout, and the scale byte offsets that make encode_pair16's bytes those of the sums. decode_group
 * gives the values va X_a and vb X_b exactly (normal floats), and their sum z rounded once;
 * here va + vb 2^(B - A) (both terms normal floats, exact) rounded once is z / X_a rounded,
 * which is the rounded z divided by X_a, exactly, while neither leaves the normal floats: in
 * the window a non-zero z is a multiple of the smaller block's quantum, 2^(emin - M) times
 * 2^(min(A, B) - 127) >= 2^-79, z / X_a one of 2^(emin - M) 2^(min(A, B) - A) >= 2^-76 (and
 * divided by 2^off of 2^-91), all below 2^81. So encoding them finds the same codes, with a
 * scale byte less by A - 127 + off (neither clamped: a non-zero block's largest value is above
 * 2^-92 either way), but for an all-zero block, whose byte is 0
 * either way. */
INLINE void sum_pair_fast(const uint8_t *a, const uint8_t *io, int two, size_t gb, const elem_consts *k,
                          const sum_consts *sc, int W, int M, vu *s0, vu *s1, int *eoff)
{
    const int off = SCALED_TABLE(W) ? 0 : 15 - k->bias;
    for (int blk = 0; blk < 1 + two; blk++) {
        vf x[NV], y[NV];
        vu *s = blk ? s1 : s0;
        const uint8_t *ga = a + blk * gb, *gi = io + blk * gb;
        const vf q = (vf)splat((gi[0] + 127u - ga[0]) << 23); /* 2^(B - A) */
        eoff[blk] = (int)ga[0] - 127 + off;
        block_values(ga + 1, q, 1, k, sc, W, M, x);
        block_values(gi + 1, q, !SCALED_TABLE(W), k, sc, W, M, y);
        for (int v = 0; v < NV; v++)
            s[v] = (vu)(SCALED_TABLE(W) ? x[v] + y[v] : add_scaled(x[v], y[v], q));
    }
}

/* The packed sum's encode of the sums s0 and s1 (as encode_pair's, to nearest, no count) through
 * fp16: the sums times 2^(-14 - emin) / X, converted to fp16 (F16C, to nearest even), put the
 * element's smallest normal at fp16's and its subnormal quantum Q = 2^(emin - M) at 2^sh of
 * fp16's (sh = 10 - M), so that the code of a magnitude is its fp16's bits rounded to nearest
 * even at sh bits (one shift for every code: both formats' fields run on from subnormals to
 * normals), saturated at max_code: 16-bit lanes, half the work of the float encode. It finds
 * the float encode's codes (M <= 3 here): rounding first to fp16 changes a rounding to the
 * element only where it lands on a midpoint m of the element's grid from s != m, which needs s
 * within half an fp16 step of m. A sum s = x + y (rounded to a float) of the two blocks'
 * values, each of M + 1 significant bits, is that close to m only when the smaller, y, is
 * large enough to move x off the grid toward m, at least 2^-(M + 2) of x's binade, and then x
 * and y are multiples of 2^-(2 M + 2) of the sum's binade, at most 9 bits down, and s is an
 * fp16 exactly (Figueroa's bound for double rounding of a sum, 11 >= 2 (M + 1) + 1 bits).
 * Below 2^emin the step is fixed: a sum's scale byte E is at most max(A, B) + 1, and above
 * max(A, B) only where A and B are at most M + 1 apart, so every value is a multiple
 * of fp16's step there, Q 2^-sh <= Q 2^-(M + 2), and the conversion exact. The scale bytes and
 * NaN blocks are as encode_pair's, the layouts the decode's. test_mx's test_sum_every_pair
 * tries every pair of codes at every distance of the window against the scalar level. */

/* The constants of codes_of_fp16, made once a loop (and kept in registers on avx512) */
typedef struct fp16_consts {
    vh magmask, half, one, max_code, signbit;
} fp16_consts;

INLINE vh splat16(uint32_t x) { return (vh){0} + (uint16_t)x; }

INLINE fp16_consts fp16_consts_of(const elem_consts *k, int W, int M)
{
    fp16_consts c = {splat16(0x7FFFu), splat16((1u << (9 - M)) - 1u), splat16(1u), splat16(k->max_code[0]),
                     splat16(1u << (W - 1))};
    in_register(&c.magmask), in_register(&c.half), in_register(&c.one), in_register(&c.max_code),
        in_register(&c.signbit);
    in_memory(&c);
    return c;
}

/* the codes of fp16 h (its sign and magnitude) as above */
INLINE vh codes_of_fp16(vh h, const fp16_consts *c, int W, int M)
{
    const int sh = 10 - M;
    const vh mag = h & c->magmask;
    const vh r = (mag + c->half + ((mag >> sh) & c->one)) >> sh;
    return min_u16(r, c->max_code) | ((h >> (16 - W)) & c->signbit);
}

/* A block's scale byte (E, of the sums, plus eoff) and its codes' bytes b (at o, 1 + 4 W bytes) */
INLINE void write_block16(uint8_t *o, uint32_t E, int eoff, __m256i b, const elem_consts *k, int W)
{
    if (__builtin_expect(is_nan_scale(E, k->emax), 0)) {
        write_nan_block(o, W);
        return;
    }
    o[0] = (uint8_t)(E ? E + (uint32_t)eoff : 0);
    if (W == 4)
        _mm_storeu_si128((__m128i *)(o + 1), _mm256_castsi256_si128(b));
    else
        pack_bytes(b, W, o + 1);
}

INLINE void encode_pair16(const vu *s0, const vu *s1, int two, uint8_t *o, size_t gb, const int *eoff,
                          const pair_scales *scales, const elem_consts *k, const fp16_consts *k16, int W, int M,
                          int layout)
{
    const vf p2a = scales->factor[0], p2b = scales->factor[1];
    const uint32_t E0 = scales->E[0], E1 = scales->E[1];
    vf y0[NV], y1[NV];
    for (int v = 0; v < NV; v++) {
        y0[v] = (vf)s0[v] * p2a;
        y1[v] = two ? (vf)s1[v] * p2b : y0[v];
    }
    if (layout == NIBBLES) { /* the low and the high nibbles' codes, both blocks' bytes in one register */
        vh c[2];
#if VB == 64
        c[0] = codes_of_fp16(fp16_of(y0[0], y1[0]), k16, W, M) | codes_of_fp16(fp16_of(y0[1], y1[1]), k16, W, M) << 4;
#else
        for (int b = 0; b < 2; b++) {
            const vf *y = b ? y1 : y0;
            c[b] = codes_of_fp16(fp16_of(y[0], y[2]), k16, W, M) | codes_of_fp16(fp16_of(y[1], y[3]), k16, W, M) << 4;
        }
#endif
        __m256i bytes = bytes_of16(c);
        write_block16(o, E0, eoff[0], bytes, k, W);
        if (two)
            write_block16(o + gb, E1, eoff[1], _mm256_permute2x128_si256(bytes, bytes, 1), k, W);
        return;
    }
    if (layout == EVEN_ODD) { /* W 8: the even codes in the low bytes of words, the odd in the high */
#if VB == 64
        vh c = codes_of_fp16(fp16_of(y0[0], y1[0]), k16, W, M) | codes_of_fp16(fp16_of(y0[1], y1[1]), k16, W, M) << 8;
        write_block16(o, E0, eoff[0], _mm512_castsi512_si256((vreg)c), k, W);
        if (two)
            write_block16(o + gb, E1, eoff[1], _mm512_extracti64x4_epi64((vreg)c, 1), k, W);
#else
        for (int b = 0; b < 1 + two; b++) {
            const vf *y = b ? y1 : y0;
            vh c = codes_of_fp16(fp16_of(y[0], y[2]), k16, W, M) | codes_of_fp16(fp16_of(y[1], y[3]), k16, W, M) << 8;
            write_block16(o + b * gb, b ? E1 : E0, eoff[b], (vreg)c, k, W);
        }
#endif
        return;
    }
    for (int b = 0; b < 1 + two; b++) {
        const vf *y = b ? y1 : y0;
        vh c[NV / 2];
        for (int i = 0; i < NV / 2; i++)
            c[i] = codes_of_fp16(fp16_of(y[2 * i], y[2 * i + 1]), k16, W, M);
        write_block16(o + b * gb, b ? E1 : E0, eoff[b], bytes_of16(c), k, W);
    }
}

/* Whether the packed sum of a pair of blocks (or the first alone) at pa and pi may take the
 * fast way (sum_pair_fast): both pairs of scale bytes in the window, and for E4M3 no NaN code. */
INLINE int pair_is_fast(const uint8_t *pa, const uint8_t *pi, int two, size_t gb, int KIND)
{
    int fast = in_window(pa[0], pi[0]) && (!two || in_window(pa[gb], pi[gb]));
    if (KIND == APSMPI_KIND_FN && fast)
        fast = no_nan_code(pa, pi, two, gb);
    return fast;
}

/* One pair of blocks (or the first alone) of the packed sum, the exact way. */
INLINE void sum_pair_slow(const uint8_t *pa, uint8_t *pi, int two, size_t gb, const elem_consts *k,
                          const sum_consts *sc, int W, int M)
{
    vu s0[NV], s1[NV];
    sum_pair_exact(pa, pi, two, gb, k, sc, W, M, s0, s1);
    encode_pair(s0, s1, two, pi, gb, k, W, 0, 0, NULL, NULL);
}

/* A pair's sums found the fast way, with their scale byte offsets, and its encode. */
typedef struct fast_sums {
    vu s0[NV], s1[NV];
    int eoff[2];
    pair_scales scales; /* 2^(127 - E - 14 - emin): the sums' scales for the fp16 encode */
} fast_sums;

/* The sums of a fast pair (sum_pair_fast) and their scales. */
INLINE void fast_sums_of(const uint8_t *a, const uint8_t *io, int two, size_t gb, const elem_consts *k,
                         const sum_consts *sc, int W, int M, fast_sums *f)
{
    sum_pair_fast(a, io, two, gb, k, sc, W, M, f->s0, f->s1, f->eoff);
    f->scales = scales_of_pair(f->s0, f->s1, two, k->emax, 14 + k->emin);
}

INLINE void encode_fast_sums(const fast_sums *f, int two, uint8_t *pi, size_t gb, const elem_consts *k,
                             const fp16_consts *k16, int W, int M)
{
    const int layout = W == 4 ? NIBBLES : W == 8 ? EVEN_ODD : IN_ORDER;
    encode_pair16(f->s0, f->s1, two, pi, gb, f->eoff, &f->scales, k, k16, W, M, layout);
}

/* One pair of blocks (or the first alone) of the packed sum. */
INLINE void sum_pair(const uint8_t *pa, uint8_t *pi, int two, size_t gb, const elem_consts *k, const sum_consts *sc,
                     const fp16_consts *k16, int W, int M, int KIND)
{
    if (__builtin_expect(pair_is_fast(pa, pi, two, gb, KIND), 1)) {
        fast_sums f;
        fast_sums_of(pa, pi, two, gb, k, sc, W, M, &f);
        encode_fast_sums(&f, two, pi, gb, k, k16, W, M);
    } else {
        sum_pair_slow(pa, pi, two, gb, k, sc, W, M);
    }
}

/* io = the blocks' encoding of decode(a) + decode(io), the addition in float, nblocks blocks.
 * Software-pipelined: a fast pair's decode, addition and sums' scales come before the encode
 * of the pair before it. The scales (a horizontal maximum a block, then the power of two that
 * every fp16 conversion waits for) are the long chain's slowest link; found a pair early, the
 * core has them before the encode that needs them (on a Zen 4 core, at avx512 x1.08-1.29 over
 * the loop not pipelined, at avx2 x1.00-1.08 over pipelining only the decode and addition:
 * results/codec/mx_loops_zen4.md; a third stage, the scales a pair later still, spilled
 * registers and lost, x0.69-0.84 at the 6-bit sums). An encode writes only its own pair's
 * blocks, which no later decode reads. */
INLINE void sum_blocks(const uint8_t *a, uint8_t *io, size_t nblocks, int W, int M, int KIND)
{
    elem_consts k = elem_consts_of(W, M, KIND);
    in_register(&k.half_k2), in_register(&k.thr), in_register(&k.magic), in_register(&k.max_code),
        in_register(&k.signbit);
    const sum_consts sc = sum_consts_of(W, M, KIND);
    const fp16_consts k16 = fp16_consts_of(&k, W, M);
    const size_t gb = 1 + 4 * (size_t)W;
    size_t b = 0;
    fast_sums waiting = {0}; /* a fast pair's sums, to be encoded into io at block pb where any */
    int any = 0;
    size_t pb = 0;
    for (; b + 2 <= nblocks; b += 2) {
        const uint8_t *pa = a + b * gb;
        uint8_t *pi = io + b * gb;
        if (b + AHEAD + 2 <= nblocks) {
            prefetch_read(pa + AHEAD * gb, 2 * gb);
            prefetch_write(pi + AHEAD * gb, 2 * gb);
        }
        const int fast = pair_is_fast(pa, pi, 1, gb, KIND);
        fast_sums next;
        if (__builtin_expect(fast, 1))
            fast_sums_of(pa, pi, 1, gb, &k, &sc, W, M, &next);
        if (any)
            encode_fast_sums(&waiting, 1, io + pb * gb, gb, &k, &k16, W, M);
        any = fast, pb = b;
        if (__builtin_expect(fast, 1))
            waiting = next;
        else
            sum_pair_slow(pa, pi, 1, gb, &k, &sc, W, M);
    }
    if (any)
        encode_fast_sums(&waiting, 1, io + pb * gb, gb, &k, &k16, W, M);
    if (b < nblocks) /* the last block alone */
        sum_pair(a + b * gb, io + b * gb, 0, gb, &k, &sc, &k16, W, M, KIND);
}

/* The loops, with the element's width, mantissa bits and kind as constants. */
#define FORMAT_CASES(X)       \
    X(8, 3, APSMPI_KIND_FN)   \
    X(8, 2, APSMPI_KIND_IEEE) \
    X(6, 2, APSMPI_KIND_FINITE) X(6, 3, APSMPI_KIND_FINITE) X(5, 1, APSMPI_KIND_FINITE) X(4, 1, APSMPI_KIND_FINITE)
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

static size_t encode_measured_vec(const apsmpi_format *f, const float *in, size_t nblocks, uint8_t *out,
                                  apsmpi_mx_measure *m)
{
#define MEASURED_CASE(W, M, KIND)                                \
    if (IS(W, M, KIND)) {                                        \
        encode_blocks_measured(in, nblocks, out, W, M, KIND, m); \
        return nblocks;                                          \
    }
    FORMAT_CASES(MEASURED_CASE)
#undef MEASURED_CASE
    return 0;
}

const apsmpi_mx_loops LOOPS = {LEVEL, encode_vec, encode_sr_vec, decode_vec, sum_vec, encode_measured_vec};

#endif /* __x86_64__ */
