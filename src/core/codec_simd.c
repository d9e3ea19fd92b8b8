/* codec_simd.c: the codec's loops for one x86 vector level (avx2 or avx512), compiled once per level with its -m flags. */
#if defined(__x86_64__) && !defined(__AVX512F__) && !defined(__AVX2__)
/* compiled alone without a level's -m flags (scripts/ci/depgraph.sh does): the avx2 level */
#pragma GCC target("avx2,f16c,fma")
#endif
#include <string.h>
#include "core/codec_loops.h"
#include "core/fpconv.h"
#include "core/prefetch.h"
#if defined(__x86_64__)
#include <immintrin.h>
#if defined(APSMPI_EMULATE_AVX512) && !defined(__AVX512F__)
/* make check-avx512-emulated: the avx512 level built for AVX2, its AVX-512 intrinsics emulated */
#include "core/avx512_emulated.h"
#endif

/* The same source gives both levels: gcc vector types of VB bytes, and the few operations
 * that need the level's own instructions (shifts that give 0 for counts of 32 and more,
 * min/max, a test of any lane). Float arithmetic is IEEE single with one rounding per
 * operation (no -ffast-math, no contraction: Makefile.am gives -ffp-contract=off). */
#if defined(__AVX512F__) || defined(APSMPI_EMULATE_AVX512)
#define VB 64
#define LOOPS apsmpi_codec_loops_avx512
#define LEVEL "avx512"
typedef __m512i vreg;
#define SRLV _mm512_srlv_epi32
#define SLLV _mm512_sllv_epi32
#define MINI _mm512_min_epi32
#define MAXI _mm512_max_epi32
#define MINU _mm512_min_epu32
#define ANY(v) (_mm512_test_epi32_mask((vreg)(v), (vreg)(v)) != 0)
#elif defined(__AVX2__)
#define VB 32
#define LOOPS apsmpi_codec_loops_avx2
#define LEVEL "avx2"
typedef __m256i vreg;
#define SRLV _mm256_srlv_epi32
#define SLLV _mm256_sllv_epi32
#define MINI _mm256_min_epi32
#define MAXI _mm256_max_epi32
#define MINU _mm256_min_epu32
#define ANY(v) (!_mm256_testz_si256((vreg)(v), (vreg)(v)))
#else
#error "codec_simd.c is compiled with -mavx2 or -mavx512f (see Makefile.am)"
#endif

#include "core/simd_lanes.h"
#include "core/simd_bytes.h"

/* Lane selections on signed 32-bit comparisons (every value compared here is below 2^31):
 * a mask register and one blend on avx512, a compare and a blendv on avx2. */
#if VB == 64
INLINE vu sel_gt(vu a, vu b, vu x, vu y) /* a > b ? x : y */
{
    return (vu)_mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask((vreg)a, (vreg)b), (vreg)y, (vreg)x);
}

INLINE vu sel_eq(vu a, vu b, vu x, vu y) /* a == b ? x : y */
{
    return (vu)_mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask((vreg)a, (vreg)b), (vreg)y, (vreg)x);
}

INLINE vu keep_nonzero(vu x, vu a) /* a != 0 ? x : 0 */
{
    return (vu)_mm512_maskz_mov_epi32(_mm512_test_epi32_mask((vreg)a, (vreg)a), (vreg)x);
}
#else
INLINE vu sel_gt(vu a, vu b, vu x, vu y)
{
    return (vu)_mm256_blendv_epi8((vreg)y, (vreg)x, _mm256_cmpgt_epi32((vreg)a, (vreg)b));
}

INLINE vu sel_eq(vu a, vu b, vu x, vu y)
{
    return (vu)_mm256_blendv_epi8((vreg)y, (vreg)x, _mm256_cmpeq_epi32((vreg)a, (vreg)b));
}

INLINE vu keep_nonzero(vu x, vu a)
{
    return (vu)_mm256_andnot_si256(_mm256_cmpeq_epi32((vreg)a, _mm256_setzero_si256()), (vreg)x);
}
#endif

INLINE vu srlv(vu a, vi n) { return (vu)SRLV((vreg)a, (vreg)n); }

INLINE vu sllv(vu a, vi n) { return (vu)SLLV((vreg)a, (vreg)n); }

INLINE vu vminu(vu a, vu b) { return (vu)MINU((vreg)a, (vreg)b); }

INLINE vi vmin(vi a, int b) { return (vi)MINI((vreg)a, (vreg)((vi){0} + b)); }

INLINE vi vmax(vi a, int b) { return (vi)MAXI((vreg)a, (vreg)((vi){0} + b)); }

/* Loads and stores of any alignment. */
INLINE vu load_f32(const float *p)
{
    vu v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Codes widened to 32-bit lanes and narrowed back (truncating: every code fits). */
#if VB == 64
INLINE vu load_c8(const uint8_t *p) { return (vu)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)); }

INLINE vu load_c16(const uint16_t *p) { return (vu)_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)); }

INLINE void store_c8(uint8_t *p, vu v) { _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8((vreg)v)); }

INLINE void store_c16(uint16_t *p, vu v) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16((vreg)v)); }
#else
INLINE vu load_c8(const uint8_t *p) { return (vu)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)); }

INLINE vu load_c16(const uint16_t *p) { return (vu)_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)); }

/* the 8 lanes as 16-bit values in the low 128 bits (packus works within 128-bit halves) */
INLINE __m128i narrow16(vu v)
{
    __m256i h = _mm256_packus_epi32((vreg)v, (vreg)v);
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(h, 0x08));
}

INLINE void store_c8(uint8_t *p, vu v)
{
    __m128i h = narrow16(v);
    _mm_storel_epi64((__m128i *)p, _mm_packus_epi16(h, h));
}

INLINE void store_c16(uint16_t *p, vu v) { _mm_storeu_si128((__m128i *)p, narrow16(v)); }
#endif

INLINE void store_f32(float *p, vu v) { memcpy(p, &v, sizeof v); }

/* ---- encode ---- */

/* A format's constants, splatted once per run. */
typedef struct enc_consts {
    vu max_code, ovf_code, nan_code;
    int emin, mbits, sh; /* sh = 23 - mbits */
    vi shv;     /* sh in every lane: shifts by a vector count (one uop on AVX-512 cores, by a scalar count two) */
    vu half;    /* 2^(sh-1) - 1 */
    vu k2;      /* (126 + emin) << mbits: float exponent field -> code exponent */
    vu half_k2; /* half - (k2 << sh), modulo 2^32: the rounding's addend with k2 taken off */
    vu thr;     /* float bits of 2^emin, the smallest normal of the format */
    vf magic;   /* 2^(emin - mbits + 23): y + magic rounds y to the subnormal quantum */
} enc_consts;

INLINE enc_consts enc_consts_of(const apsmpi_format *f)
{
    enc_consts k;
    k.max_code = splat(f->max_code);
    k.ovf_code = splat(f->ovf_code);
    k.nan_code = splat(f->nan_code);
    k.emin = f->emin;
    k.mbits = f->mbits;
    k.sh = 23 - f->mbits;
    k.shv = (vi){0} + k.sh;
    k.half = splat((1u << (k.sh - 1)) - 1u);
    k.k2 = splat((uint32_t)(126 + f->emin) << f->mbits);
    k.half_k2 = k.half - (k.k2 << k.sh);
    k.thr = splat((uint32_t)(f->emin + 127) << 23);
    k.magic = (vf)splat((uint32_t)(f->emin - f->mbits + 23 + 127) << 23);
    return k;
}

/* apsmpi_encode_one's magnitude code, lane by lane, as written there: any format, any
 * input, any scale, both roundings. Shift counts of 32 and more give 0 here, as the clamps
 * of the scalar code do. */
INLINE vu encode_generic(vu x, int s, const enc_consts *k, int stochastic, vu rnd)
{
    vu ax = x & 0x7FFFFFFFu;
    vu bexp = ax >> 23;
    vu frac = ax & 0x7FFFFFu;
    vu nb = (vu) __builtin_convertvector((vi)frac, vf);
    vu zero = splat(0);
    vi e = (vi)sel_eq(bexp, zero, (nb >> 23) - 276u, bexp - 127u) + s;
    vu m = (sel_eq(bexp, zero, nb, ax) & 0x7FFFFFu) | 0x800000u;
    vi d = k->emin - e;
    vi dz = vmax(d, 0);
    vi sh = dz + k->sh;
    vu base = (vu)(dz - d) << k->mbits;
    vu n;
    if (stochastic) {
        /* n = m >> sh plus the carry out of (the fraction as 32 bits) + rnd */
        vu n0 = srlv(m, sh);
        vu fr = sel_gt((vu)sh, splat(32), srlv(m, sh - 32), sllv(m, 32 - sh));
        vu sum = fr + rnd;
        n = n0 + (((fr & rnd) | ((fr | rnd) & ~sum)) >> 31);
    } else {
        vi shc = vmin(sh, 25);
        vu odd = (base + srlv(m, shc)) & 1u;
        n = srlv(m + (sllv(splat(1), shc - 1) - 1u) + odd, shc);
    }
    vu code = base + n;
    code = sel_gt(code, k->max_code, k->ovf_code, code);
    vu special = sel_eq(frac, zero, k->ovf_code, k->nan_code);
    code = sel_eq(bexp, splat(255), special, code);
    return keep_nonzero(code, ax);
}

/* The code of y's bits yb (y a normal float, at least 2^emin: yb >= thr) rounded to nearest
 * even at sh bits, for formats with ebits <= 7: (yb + half + odd) >> sh, less k2, the
 * exponent's change. k2 is even (ebits >= 2: it is (128 - 2^(ebits-1)) << mbits), so the
 * code's parity odd is that of yb >> sh, and k2 << sh, at most thr, comes off before the
 * shift, in the addend half_k2. yb + half + 1 stays below 2^32 for any yb below 2^31. */
INLINE vu round_normal(vu yb, const enc_consts *k)
{
    vu odd = srlv(yb, k->shv) & 1u;
    return srlv(yb + k->half_k2 + odd, k->shv);
}

/* Codes above max_code (overflow, inf and NaN y) become ovf_code, which is max_code or
 * max_code + 1 in every kind of format. */
INLINE vu clamp_ovf(vu code, const enc_consts *k) { return vminu(code, k->ovf_code); }

/* Nearest, for formats with ebits <= 7, given y = |x| * 2^s computed in float (exact
 * whenever it matters: every such format's smallest quantum is at least 2^-75, so a y that
 * fell into the float subnormals rounds to 0 either way). A normal result rounds y's bits
 * to nearest even at sh bits; a subnormal one is y + magic, rounded by the addition. A NaN
 * y (positive: |x| times positive factors) rounds to a code above max_code: where ovf_code
 * is nan_code (one_special) the clamp gives it, otherwise one more select. */
INLINE vu encode_small(vu ax, vf y, const enc_consts *k, int one_special)
{
    vu yb = (vu)y;
    vu subnormal = (vu)(y + k->magic) - (vu)k->magic;
    vu code = clamp_ovf(sel_gt(k->thr, yb, subnormal, round_normal(yb, k)), k);
    return one_special ? code : sel_gt(ax, splat(0x7F800000u), k->nan_code, code);
}

/* Nearest, for formats with ebits == 8 (the float's exponent range), given y = |x| * 2^s
 * computed in float: the code is y's bits rounded to nearest even at sh bits, subnormals
 * included, inf and overflow past max_code giving ovf_code; or stochastically, the top sh
 * bits of rnd added to the sh bits cut off. y is exact unless s < 0 and y is a float
 * subnormal: those lanes are set in *slow. */
INLINE vu encode_wide(vu ax, vf y, int s, const enc_consts *k, vu *slow, int stochastic, vu rnd)
{
    vu yb = (vu)y;
    if (s < 0)
        *slow = (vu)((vi)(yb - 1u) < 0x7FFFFF);
    vu code =
        stochastic ? srlv(yb + (rnd >> (32 - k->sh)), k->shv) : srlv(yb + k->half + (srlv(yb, k->shv) & 1u), k->shv);
    return sel_gt(ax, splat(0x7F800000u), k->nan_code, clamp_ovf(code, k));
}

/* Stochastic, for formats with ebits <= 7, given y = |x| * 2^s in float (as encode_small;
 * a y in the float subnormals, inexact, still gives 0, as the exact value would: it is
 * below 2^-51 quanta). n = floor(y / quantum + rnd / 2^32), the fraction cut to 32 bits:
 * for a normal result the low sh bits of y's bits plus the top sh bits of rnd carry into
 * the code; for a subnormal one the fraction of y's significand my / 2^shl, shl > sh. */
INLINE vu encode_small_sr(vu ax, vf y, const enc_consts *k, vu rnd)
{
    vu yb = (vu)y;
    vu normal = ((yb + (rnd >> (32 - k->sh))) >> k->sh) - k->k2;
    vu my = (yb & 0x7FFFFFu) | 0x800000u;
    vi shl = (vi)(splat((uint32_t)(k->sh + k->emin + 127)) - (yb >> 23));
    vu fr = sel_gt((vu)shl, splat(32), srlv(my, shl - 32), sllv(my, 32 - shl));
    vu sum = fr + rnd;
    vu subnormal = srlv(my, shl) + (((fr & rnd) | ((fr | rnd) & ~sum)) >> 31);
    vu code = sel_gt(k->thr, yb, subnormal, normal);
    code = sel_gt(code, k->max_code, k->ovf_code, code);
    return sel_gt(ax, splat(0x7F800000u), k->nan_code, code);
}

/* Nearest for fp16: the F16C conversion rounds y = |x| * 2^s to nearest even, subnormals
 * and overflow to inf included; a NaN input gives the format's NaN code. */
INLINE vu encode_fp16(vu ax, vf y, const enc_consts *k)
{
#if VB == 64
    vu code = (vu)_mm512_cvtepu16_epi32(_mm512_cvtps_ph((__m512)y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
    vu code = (vu)_mm256_cvtepu16_epi32(_mm256_cvtps_ph((__m256)y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
    return sel_gt(ax, splat(0x7F800000u), k->nan_code, code);
}

static int is_fp16(const apsmpi_format *f) { return f->ebits == 5 && f->mbits == 10 && f->kind == APSMPI_KIND_IEEE; }

/* flushed, plus one in the lanes where the code is zero and the input x (bits) is not +-0 */
INLINE vu count_flushed(vu flushed, vu code, vu x)
{
#if VB == 64
    __mmask16 z = _mm512_mask_test_epi32_mask(_mm512_testn_epi32_mask((vreg)code, (vreg)code), (vreg)x,
                                              _mm512_set1_epi32(0x7FFFFFFF));
    return (vu)_mm512_mask_sub_epi32((vreg)flushed, z, (vreg)flushed, _mm512_set1_epi32(-1));
#else
    return flushed - ((vu)(code == 0) & ~(vu)((x << 1) == 0));
#endif
}

/* The ways a run is encoded; each gets its own loop. */
enum enc_path {
    PATH_SMALL,     /* nearest, ebits <= 7 */
    PATH_SMALL_ONE, /* the same where ovf_code is nan_code */
    PATH_WIDE,
    PATH_FP16,
    PATH_NEAREST,
    PATH_SMALL_SR,
    PATH_WIDE_SR,
    PATH_STOCHASTIC
};

/* The magnitude code of NL floats x (bits) along one path. */
INLINE vu encode_vec(vu x, int s, const enc_consts *k, enum enc_path path, vf p2, vf p2b, rng_lanes *r)
{
    vu ax = x & 0x7FFFFFFFu;
    vf y = (vf)ax * p2 * p2b; /* |x| * 2^s: see scale_factors */
    if (path == PATH_SMALL || path == PATH_SMALL_ONE)
        return encode_small(ax, y, k, path == PATH_SMALL_ONE);
    if (path == PATH_SMALL_SR)
        return encode_small_sr(ax, y, k, rng_next(r));
    if (path == PATH_FP16)
        return encode_fp16(ax, y, k);
    if (path == PATH_WIDE || path == PATH_WIDE_SR) {
        int sr = path == PATH_WIDE_SR;
        vu slow = splat(0), rnd = sr ? rng_next(r) : splat(0);
        vu code = encode_wide(ax, y, s, k, &slow, sr, rnd);
        if (s < 0 && __builtin_expect(ANY(slow), 0))
            return encode_generic(x, s, k, sr, rnd);
        return code;
    }
    if (path == PATH_STOCHASTIC)
        return encode_generic(x, s, k, 1, rng_next(r));
    return encode_generic(x, s, k, 0, splat(0));
}

/* 2^s as the product p2 * p2b of two normal floats, for s in [-252, 254]: |x| * p2 * p2b
 * is then exact where it matters (scaling up both products are exact or overflow to inf;
 * scaling down below -126 only results under 2^-126 can round, which the paths treat as
 * they treat any float subnormal y). */
INLINE void scale_factors(int s, vf *p2, vf *p2b)
{
    int a = s > 127 ? s - 127 : s < -126 ? s + 126 : s, b = s - a;
    *p2 = (vf)splat((uint32_t)(a + 127) << 23);
    *p2b = (vf)splat((uint32_t)(b + 127) << 23);
}

/* Encodes n floats with one scale along one path into codes of type T; the tail element by
 * element. Returns the count of non-zero inputs with a zero magnitude code. */
#define DEFINE_ENCODE_PATH(NAME, T, STORE, PATH, STORAGE)                                                       \
    STORAGE uint64_t NAME(const apsmpi_format *f, const float *in, size_t n, int s, uint64_t key, uint64_t idx, \
                          T *out, int count)                                                                    \
    {                                                                                                           \
        const enc_consts k = enc_consts_of(f);                                                                  \
        const int w1 = f->width - 1;                                                                            \
        const vu signbit = splat(1u << w1);                                                                     \
        const vi signshift = (vi){0} + (31 - w1);                                                               \
        vf p2, p2b;                                                                                             \
        scale_factors(s, &p2, &p2b);                                                                            \
        rng_lanes r = rng_start(key, idx);                                                                      \
        vu flushed = splat(0);                                                                                  \
        size_t j = 0;                                                                                           \
        for (; j + NL <= n; j += NL) {                                                                          \
            if (j + PREFETCH_AHEAD + NL <= n)                                                                   \
                prefetch_line_read(in + j + PREFETCH_AHEAD);                                                    \
            vu x = load_f32(in + j);                                                                            \
            vu code = encode_vec(x, s, &k, PATH, p2, p2b, &r);                                                  \
            if (count)                                                                                          \
                flushed = count_flushed(flushed, code, x);                                                      \
            STORE(out + j, code | (srlv(x, signshift) & signbit));                                              \
        }                                                                                                       \
        uint64_t total = 0;                                                                                     \
        for (int i = 0; i < NL; i++)                                                                            \
            total += flushed[i];                                                                                \
        for (; j < n; j++) {                                                                                    \
            uint32_t x = apsmpi_f2u(in[j]);                                                                     \
            int sr = PATH == PATH_STOCHASTIC || PATH == PATH_SMALL_SR || PATH == PATH_WIDE_SR;                  \
            uint32_t code = apsmpi_encode_one(x, s, f, sr, sr ? apsmpi_rng_bits(key, idx + j) : 0);             \
            out[j] = (T)code;                                                                                   \
            total += ((code & ((1u << w1) - 1u)) == 0) & ((x << 1) != 0);                                       \
        }                                                                                                       \
        return total;                                                                                           \
    }

#define DEFINE_ENCODE(NAME, T, STORE)                                                                                 \
    DEFINE_ENCODE_PATH(NAME##_small, T, STORE, PATH_SMALL, INLINE)                                                    \
    DEFINE_ENCODE_PATH(NAME##_small_one, T, STORE, PATH_SMALL_ONE, INLINE)                                            \
    DEFINE_ENCODE_PATH(NAME##_wide, T, STORE, PATH_WIDE, INLINE)                                                      \
    DEFINE_ENCODE_PATH(NAME##_fp16, T, STORE, PATH_FP16, INLINE)                                                      \
    DEFINE_ENCODE_PATH(NAME##_nearest, T, STORE, PATH_NEAREST, static)                                                \
    DEFINE_ENCODE_PATH(NAME##_stochastic, T, STORE, PATH_STOCHASTIC, static)                                          \
    DEFINE_ENCODE_PATH(NAME##_small_sr, T, STORE, PATH_SMALL_SR, static)                                              \
    DEFINE_ENCODE_PATH(NAME##_wide_sr, T, STORE, PATH_WIDE_SR, static)                                                \
    INLINE uint64_t NAME##_any(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key, \
                               uint64_t idx, T *out, int count)                                                       \
    {                                                                                                                 \
        const apsmpi_format *f = &c->f;                                                                               \
        if (s < -252 || s > 254)                                                                                      \
            return stochastic ? NAME##_stochastic(f, in, n, s, key, idx, out, count)                                  \
                              : NAME##_nearest(f, in, n, s, key, idx, out, count);                                    \
        if (stochastic)                                                                                               \
            return f->ebits <= 7 ? NAME##_small_sr(f, in, n, s, key, idx, out, count)                                 \
                                 : NAME##_wide_sr(f, in, n, s, key, idx, out, count);                                 \
        if (is_fp16(f))                                                                                               \
            return NAME##_fp16(f, in, n, s, key, idx, out, count);                                                    \
        if (f->ebits > 7)                                                                                             \
            return NAME##_wide(f, in, n, s, key, idx, out, count);                                                    \
        return f->ovf_code == f->nan_code ? NAME##_small_one(f, in, n, s, key, idx, out, count)                       \
                                          : NAME##_small(f, in, n, s, key, idx, out, count);                          \
    }                                                                                                                 \
    /* the nearest loops of the common scales twice, counting and not (count a constant in each) */                   \
    static uint64_t NAME(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key,       \
                         uint64_t idx, T *out, int count)                                                             \
    {                                                                                                                 \
        return count ? NAME##_any(c, in, n, s, stochastic, key, idx, out, 1)                                          \
                     : NAME##_any(c, in, n, s, stochastic, key, idx, out, 0);                                         \
    }

DEFINE_ENCODE(encode8, uint8_t, store_c8)
DEFINE_ENCODE(encode16, uint16_t, store_c16)

/* ---- decode ---- */

/* A format's constants for decoding with scale s. */
typedef struct dec_consts {
    vu magmask, max_code, ovf_code, special_ovf;
    int w1, sh;
    vi shv, signshift; /* sh and 31 - w1 in every lane (shifts by a vector count) */
    vf rebias;         /* 2^(127 - bias): the code's exponent moved into the float's, exactly */
    vf unscale;        /* 2^-s */
} dec_consts;

/* Whether decode_vec applies to scale s: 2^-s is a normal float. */
INLINE int decode_fast(int s) { return s >= -127 && s <= 126; }

INLINE dec_consts dec_consts_of(const apsmpi_format *f, int s)
{
    dec_consts k;
    k.w1 = f->width - 1;
    k.sh = 23 - f->mbits;
    k.shv = (vi){0} + k.sh;
    k.signshift = (vi){0} + (31 - k.w1);
    k.magmask = splat((1u << k.w1) - 1u);
    k.max_code = splat(f->max_code);
    k.ovf_code = splat(f->ovf_code);
    k.special_ovf = splat(f->kind == APSMPI_KIND_IEEE ? 0x7F800000u : 0x7FC00000u);
    k.rebias = (vf)splat((uint32_t)(127 - f->bias + 127) << 23);
    k.unscale = (vf)splat((uint32_t)(127 - s) << 23);
    return k;
}

/* The float of NL codes: the magnitude code shifted into the float's bit positions is the
 * value times 2^(bias - 127) (a float subnormal for the format's subnormals); times rebias
 * it is the value, exactly (every value of a format with ebits <= 7 is a normal float, and
 * with ebits == 8 rebias is 1); times 2^-s it is rounded once as apsmpi_decode_one rounds.
 * Codes above max_code give inf or the quiet NaN 0x7FC00000, with the code's sign. With
 * unbiased, neither product: the value times 2^(bias - 127), for the packed sum (sum_vec). */
INLINE vu decode_vec_as(vu code, const dec_consts *k, int one_special, int unbiased)
{
    vu c = code & k->magmask;
    vu bits = sllv(c, k->shv);
    if (!unbiased)
        bits = (vu)((vf)bits * k->rebias * k->unscale);
    vu special = one_special ? k->special_ovf : sel_eq(c, k->ovf_code, k->special_ovf, splat(0x7FC00000u));
    bits = sel_gt(c, k->max_code, special, bits);
    return bits | (sllv(code, k->signshift) & 0x80000000u);
}

INLINE vu decode_vec(vu code, const dec_consts *k) { return decode_vec_as(code, k, 0, 0); }

/* The float of NL codes divided by 2^s for s > 126, where 2^-s is no normal float: a
 * result that stays normal is the value with s taken off its exponent field; one that is
 * a float subnormal is the value's significand at exponent -126 times 2^(t - 1), t the
 * result's exponent field (one rounding, of the exact value); below that it is 0. */
INLINE vu decode_vec_down(vu code, const dec_consts *k, int s)
{
    vu c = code & k->magmask;
    vu v = (vu)((vf)(c << k->sh) * k->rebias); /* the value, exactly */
    vu e = v >> 23;
    vi t = (vi)e - s;
    vu small = (vu)((vf)((v & 0x7FFFFFu) | 0x800000u) * (vf)((vu)(t + 126) << 23));
    vu bits = sel_gt((vu)t, splat(0), v - ((vu){0} + ((uint32_t)s << 23)), splat(0));
    bits = sel_gt((vu)t, splat((uint32_t)-126), sel_gt((vu)t, splat(0), bits, small), bits);
    bits = sel_eq(e, splat(0), splat(0), bits);
    vu special = sel_eq(c, k->ovf_code, k->special_ovf, splat(0x7FC00000u));
    bits = sel_gt(c, k->max_code, special, bits);
    return bits | ((code << (31 - k->w1)) & 0x80000000u);
}

/* The decode's prefetch: its codes (at every step, though a line holds 2 or 4 steps' codes)
 * and the floats it will store, PREFETCH_AHEAD on. */
#define prefetch_ahead_decode(in, out) \
    (prefetch_line_read((in) + PREFETCH_AHEAD), prefetch_line_write((out) + PREFETCH_AHEAD))

#define DEFINE_DECODE(NAME, T, LOAD)                                                  \
    static void NAME(const apsmpi_codec *c, const T *in, size_t n, int s, float *out) \
    {                                                                                 \
        const apsmpi_format *f = &c->f;                                               \
        size_t j = 0;                                                                 \
        if (decode_fast(s)) {                                                         \
            const dec_consts k = dec_consts_of(f, s);                                 \
            for (; j + NL <= n; j += NL) {                                            \
                if (j + PREFETCH_AHEAD + NL <= n)                                     \
                    prefetch_ahead_decode(in + j, out + j);                           \
                store_f32(out + j, decode_vec(LOAD(in + j), &k));                     \
            }                                                                         \
        } else if (s > 126 && s <= 100000) {                                          \
            const dec_consts k = dec_consts_of(f, 0);                                 \
            for (; j + NL <= n; j += NL) {                                            \
                if (j + PREFETCH_AHEAD + NL <= n)                                     \
                    prefetch_ahead_decode(in + j, out + j);                           \
                store_f32(out + j, decode_vec_down(LOAD(in + j), &k, s));             \
            }                                                                         \
        }                                                                             \
        for (; j < n; j++)                                                            \
            out[j] = apsmpi_decode_one(in[j], s, f);                                  \
    }

DEFINE_DECODE(decode8, uint8_t, load_c8)
DEFINE_DECODE(decode16, uint16_t, load_c16)

/* ---- the packed sum ---- */

/* The code of the float sum x (bits), to nearest even. ebits 6 means ebits <= 7 and a format
 * whose only code above max_code is ovf_code (an FN format, or one without mantissa bits): a
 * NaN sum then becomes ovf_code by the overflow test. */
INLINE vu encode_sum(vu x, const dec_consts *dk, const enc_consts *ek, int ebits, int w1)
{
    vu ax = x & 0x7FFFFFFFu, slow, code;
    if (ebits <= 7)
        code = encode_small(ax, (vf)ax, ek, ebits == 6);
    else
        code = encode_wide(ax, (vf)ax, 0, ek, &slow, 0, ax);
    return code | (srlv(x, dk->signshift) & (1u << w1));
}

/* The code of decode(a) + decode(b), the addition in float. The values are added times
 * 2^(bias - 127) and the sum multiplied back by rebias: the same bits, as both operands are
 * exact and the scaling changes no rounding (a scaled sum below 2^-126 is a multiple of
 * 2^(-126 - mbits), a float subnormal exactly; none overflows; inf and NaN stay so). */
INLINE vu sum_vec(vu a, vu b, const dec_consts *dk, const enc_consts *ek, int ebits, int w1)
{
    vf x = ((vf)decode_vec_as(a, dk, ebits == 6, 1) + (vf)decode_vec_as(b, dk, ebits == 6, 1)) * dk->rebias;
    return encode_sum((vu)x, dk, ek, ebits, w1);
}

/* The sum's prefetch: both operands, io to be written, PREFETCH_AHEAD codes on. */
#define prefetch_ahead_sum(a, io) (prefetch_line_read((a) + PREFETCH_AHEAD), prefetch_line_write((io) + PREFETCH_AHEAD))

#define DEFINE_SUM_PATH(NAME, T, LOAD, STORE, EBITS)                                   \
    static void NAME(const apsmpi_format *f, const T *a, T *io, size_t n)              \
    {                                                                                  \
        const dec_consts dk = dec_consts_of(f, 0);                                     \
        const enc_consts ek = enc_consts_of(f);                                        \
        size_t j = 0;                                                                  \
        for (; j + NL <= n; j += NL) {                                                 \
            if (j + PREFETCH_AHEAD + NL <= n)                                          \
                prefetch_ahead_sum(a + j, io + j);                                     \
            STORE(io + j, sum_vec(LOAD(a + j), LOAD(io + j), &dk, &ek, EBITS, dk.w1)); \
        }                                                                              \
        for (; j < n; j++) {                                                           \
            float x = apsmpi_decode_one(a[j], 0, f) + apsmpi_decode_one(io[j], 0, f);  \
            io[j] = (T)apsmpi_encode_one(apsmpi_f2u(x), 0, f, 0, 0);                   \
        }                                                                              \
    }

#define DEFINE_SUM(NAME, T, LOAD, STORE)                                 \
    DEFINE_SUM_PATH(NAME##_small, T, LOAD, STORE, 7)                     \
    DEFINE_SUM_PATH(NAME##_one, T, LOAD, STORE, 6)                       \
    DEFINE_SUM_PATH(NAME##_wide, T, LOAD, STORE, 8)                      \
    static void NAME(const apsmpi_codec *c, const T *a, T *io, size_t n) \
    {                                                                    \
        if (c->f.ebits <= 7 && c->f.ovf_code == c->f.nan_code)           \
            NAME##_one(&c->f, a, io, n);                                 \
        else if (c->f.ebits <= 7)                                        \
            NAME##_small(&c->f, a, io, n);                               \
        else                                                             \
            NAME##_wide(&c->f, a, io, n);                                \
    }

DEFINE_SUM(sum8_lanes, uint8_t, load_c8, store_c8)
DEFINE_SUM(sum16_any, uint16_t, load_c16, store_c16)

/* The sum of 8-bit codes (width 8, ebits <= 7) with their decode in 16-bit lanes, 2 * NL codes
 * a pass: a code's value times 2^(bias - 127) is a float whose low 16 bits are 0 (mbits <= 6),
 * so its top half, a bfloat16, is the code sign-extended, times 2^(7 - mbits), masked to the
 * sign and the magnitude; codes above max_code become inf or NaN there. Interleaved with zeros
 * (in-lane unpacks) these are two vectors of floats, summed and encoded as sum_vec does, and
 * the codes packed back in the order the unpacks took them. */
typedef int16_t vs16 __attribute__((vector_size(VB)));

typedef struct word_consts {
    vs16 mul;     /* 2^(7 - mbits) */
    vs16 keep;    /* the sign and the magnitude's bits, once multiplied */
    vs16 max2;    /* max_code << (8 - mbits): twice the top half without its sign, at most */
    vs16 ovf2;    /* ovf_code << (8 - mbits) */
    vs16 special; /* the top half of special_ovf (inf or NaN) */
} word_consts;

INLINE vs16 splat16(int v) { return (vs16){0} + (int16_t)v; }

INLINE word_consts word_consts_of(const apsmpi_format *f, const dec_consts *dk)
{
    word_consts k;
    int up = 7 - f->mbits;
    k.mul = splat16(1 << up);
    k.keep = splat16((int)(0x8000u | (((1u << 7) - 1u) << up)));
    k.max2 = splat16((int)(f->max_code << (up + 1)));
    k.ovf2 = splat16((int)(f->ovf_code << (up + 1)));
    k.special = splat16((int)(dk->special_ovf[0] >> 16));
    return k;
}

#if VB == 64
INLINE vs16 load_sx8(const uint8_t *p) { return (vs16)_mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)p)); }

/* 2 * NL 16-bit lanes, each below 2^8, as bytes */
INLINE void store_w8(uint8_t *p, vs16 v) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi16_epi8((vreg)v)); }

INLINE void halves_to_floats(vs16 h, vf *lo, vf *hi)
{
    *lo = (vf)_mm512_unpacklo_epi16(_mm512_setzero_si512(), (vreg)h);
    *hi = (vf)_mm512_unpackhi_epi16(_mm512_setzero_si512(), (vreg)h);
}

INLINE vs16 pack_dwords(vu lo, vu hi) { return (vs16)_mm512_packus_epi32((vreg)lo, (vreg)hi); }
#else
INLINE vs16 load_sx8(const uint8_t *p) { return (vs16)_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)); }

INLINE void store_w8(uint8_t *p, vs16 v)
{
    __m256i b = _mm256_packus_epi16((vreg)v, (vreg)v);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(_mm256_permute4x64_epi64(b, 0x08)));
}

INLINE void halves_to_floats(vs16 h, vf *lo, vf *hi)
{
    *lo = (vf)_mm256_unpacklo_epi16(_mm256_setzero_si256(), (vreg)h);
    *hi = (vf)_mm256_unpackhi_epi16(_mm256_setzero_si256(), (vreg)h);
}

INLINE vs16 pack_dwords(vu lo, vu hi) { return (vs16)_mm256_packus_epi32((vreg)lo, (vreg)hi); }
#endif

/* the top halves of the unbiased floats of 2 * NL codes, sign-extended in x */
INLINE vs16 decode_halves(vs16 x, const word_consts *k, int one_special)
{
    vs16 h = (x * k->mul) & k->keep;
    vs16 twice = h + h; /* the magnitude's bits, one up, the sign gone: below 2^15 */
    vs16 special = one_special ? k->special : (vs16)((twice == k->ovf2) & k->special) | (~(twice == k->ovf2) & 0x7FC0);
    vs16 over = twice > k->max2; /* lanes of -1 or 0 */
    return (over & ((h & (int16_t)0x8000) | special)) | (~over & h);
}

#define DEFINE_SUM_WORDS(NAME, EBITS)                                                     \
    static size_t NAME(const apsmpi_format *f, const uint8_t *a, uint8_t *io, size_t n)   \
    {                                                                                     \
        const dec_consts dk = dec_consts_of(f, 0);                                        \
        const enc_consts ek = enc_consts_of(f);                                           \
        const word_consts wk = word_consts_of(f, &dk);                                    \
        size_t j = 0;                                                                     \
        for (; j + 2 * NL <= n; j += 2 * NL) {                                            \
            if (j + PREFETCH_AHEAD + 2 * NL <= n)                                         \
                prefetch_ahead_sum(a + j, io + j);                                        \
            vf a0, a1, b0, b1;                                                            \
            halves_to_floats(decode_halves(load_sx8(a + j), &wk, EBITS == 6), &a0, &a1);  \
            halves_to_floats(decode_halves(load_sx8(io + j), &wk, EBITS == 6), &b0, &b1); \
            vu c0 = encode_sum((vu)((a0 + b0) * dk.rebias), &dk, &ek, EBITS, dk.w1);      \
            vu c1 = encode_sum((vu)((a1 + b1) * dk.rebias), &dk, &ek, EBITS, dk.w1);      \
            store_w8(io + j, pack_dwords(c0, c1));                                        \
        }                                                                                 \
        return j;                                                                         \
    }

DEFINE_SUM_WORDS(sum8_words_small, 7)
DEFINE_SUM_WORDS(sum8_words_one, 6)

static void sum8(const apsmpi_codec *c, const uint8_t *a, uint8_t *io, size_t n)
{
    size_t done = 0;
    if (c->f.width == 8 && c->f.ebits <= 7)
        done = c->f.ovf_code == c->f.nan_code ? sum8_words_one(&c->f, a, io, n) : sum8_words_small(&c->f, a, io, n);
    sum8_lanes(c, a + done, io + done, n - done);
}

/* The fp16 sum with the F16C conversions, exact both ways (a NaN sum: the NaN code). */
static void sum16_fp16(const apsmpi_format *f, const uint16_t *a, uint16_t *io, size_t n)
{
    const vu nan = splat(f->nan_code);
    size_t j = 0;
    for (; j + NL <= n; j += NL) {
        if (j + PREFETCH_AHEAD + NL <= n)
            prefetch_ahead_sum(a + j, io + j);
#if VB == 64
        __m512 x = _mm512_add_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(a + j))),
                                 _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(io + j))));
        vu code = (vu)_mm512_cvtepu16_epi32(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
        __m256 x = _mm256_add_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + j))),
                                 _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(io + j))));
        vu code = (vu)_mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
        vu xb = (vu)x;
        store_c16(io + j, sel_gt(xb & 0x7FFFFFFFu, splat(0x7F800000u), nan | ((xb >> 16) & 0x8000u), code));
    }
    for (; j < n; j++) {
        float x = apsmpi_decode_one(a[j], 0, f) + apsmpi_decode_one(io[j], 0, f);
        io[j] = (uint16_t)apsmpi_encode_one(apsmpi_f2u(x), 0, f, 0, 0);
    }
}

/* The bf16 sum: a code is the top half of its float; the sum's bits rounded to nearest
 * even at 16 bits, a carry running into the exponent and to inf (as codec_portable.c). */
static void sum16_bf16(const apsmpi_format *f, const uint16_t *a, uint16_t *io, size_t n)
{
    const vu nan = splat(f->nan_code);
    size_t j = 0;
    for (; j + NL <= n; j += NL) {
        if (j + PREFETCH_AHEAD + NL <= n)
            prefetch_ahead_sum(a + j, io + j);
        vu u = (vu)((vf)(load_c16(a + j) << 16) + (vf)(load_c16(io + j) << 16));
        vu rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
        store_c16(io + j, sel_gt(u & 0x7FFFFFFFu, splat(0x7F800000u), nan | ((u >> 16) & 0x8000u), rounded));
    }
    for (; j < n; j++) {
        float x = apsmpi_decode_one(a[j], 0, f) + apsmpi_decode_one(io[j], 0, f);
        io[j] = (uint16_t)apsmpi_encode_one(apsmpi_f2u(x), 0, f, 0, 0);
    }
}

static void sum16(const apsmpi_codec *c, const uint16_t *a, uint16_t *io, size_t n)
{
    if (c->f.ebits == 8 && c->f.mbits == 7 && c->f.kind == APSMPI_KIND_IEEE)
        sum16_bf16(&c->f, a, io, n);
    else if (is_fp16(&c->f))
        sum16_fp16(&c->f, a, io, n);
    else
        sum16_any(c, a, io, n);
}

/* ---- bit packing: 8 codes of w bits (3 <= w <= 15) are w bytes, LSB first ----
 * Done with 256-bit instructions (both levels have them), 8 codes at a time, leaving to the
 * caller the last codes whose 16-byte loads would pass the end of the buffer. */

/* The byte shuffle and the shifts that take 8 codes out of 16 bytes into 32-bit lanes: lane
 * j takes bytes j*w/8 .. +2 (each 128-bit half of the vector holds the same 16 bytes). */
typedef struct unpack_consts {
    __m256i shuffle, shift, mask;
} unpack_consts;

static unpack_consts unpack_consts_of(int w)
{
    uint8_t shuffle[32];
    uint32_t shift[8];
    for (int j = 0; j < 8; j++) {
        for (int b = 0; b < 4; b++) {
            int src = j * w / 8 + b;
            shuffle[4 * j + b] = src < 16 && b < 3 ? (uint8_t)src : 0x80;
        }
        shift[j] = (uint32_t)(j * w % 8);
    }
    unpack_consts k;
    k.shuffle = _mm256_loadu_si256((const __m256i *)shuffle);
    k.shift = _mm256_loadu_si256((const __m256i *)shift);
    k.mask = _mm256_set1_epi32((1 << w) - 1);
    return k;
}

INLINE __m256i unpack8(const uint8_t *in, const unpack_consts *k)
{
    __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)in));
    v = _mm256_shuffle_epi8(v, k->shuffle);
    return _mm256_and_si256(_mm256_srlv_epi32(v, k->shift), k->mask);
}

/* The w bytes (3 <= w <= 15, w != 8) of the 128-bit number hi:lo at out, exactly: two
 * stores of the largest power of two S <= w bytes, at 0 and at w - S. */
INLINE void store_exact(uint8_t *out, uint64_t lo, uint64_t hi, int w)
{
    if (w > 8) {
        uint64_t t = (lo >> (8 * (w - 8))) | (hi << (64 - 8 * (w - 8)));
        memcpy(out, &lo, 8);
        memcpy(out + w - 8, &t, 8);
    } else if (w >= 4) {
        uint32_t a = (uint32_t)lo, b = (uint32_t)(lo >> (8 * (w - 4)));
        memcpy(out, &a, 4);
        memcpy(out + w - 4, &b, 4);
    } else {
        uint16_t a = (uint16_t)lo, b = (uint16_t)(lo >> (8 * (w - 2)));
        memcpy(out, &a, 2);
        memcpy(out + w - 2, &b, 2);
    }
}

/* 8 codes in 32-bit lanes into the w bytes at out. */
INLINE void pack8(__m256i v, uint8_t *out, int w)
{
    /* pairs: code 2i | code 2i+1 << w in each 64-bit lane (codes are below 2^w <= 2^(32-w)) */
    __m256i pairs = _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi64x(0xFFFFFFFF)), _mm256_srli_epi64(v, 32 - w));
    /* quads: 4 codes in the low 64 bits of each 128-bit half */
    __m256i quads = _mm256_or_si256(pairs, _mm256_sll_epi64(_mm256_srli_si256(pairs, 8), _mm_cvtsi32_si128(2 * w)));
    uint64_t l = (uint64_t)_mm256_extract_epi64(quads, 0), h = (uint64_t)_mm256_extract_epi64(quads, 2);
    store_exact(out, l | h << (4 * w), h >> (64 - 4 * w), w);
}

/* Widths 4 and 6, which simd_bytes.h packs 32 codes at a time by multiply-adds and one
 * shuffle: units of 8 byte-held codes, 4 at a time, into their packed bytes, and back; W a
 * constant; returns the units done. */
INLINE size_t pack_by_32(const uint8_t *codes, size_t units, uint8_t *out, int W)
{
    size_t done = 0;
    for (; done + 4 <= units; done += 4)
        pack_bytes(_mm256_loadu_si256((const __m256i *)(codes + 8 * done)), W, out + done * (size_t)W);
    return done;
}

INLINE size_t unpack_by_32(const uint8_t *in, size_t units, uint8_t *codes, int W)
{
    size_t done = 0;
    for (; done + 4 <= units; done += 4)
        _mm256_storeu_si256((__m256i *)(codes + 8 * done), unpack_bytes(in + done * (size_t)W, W));
    return done;
}

/* Codes held unpacked: one per byte (w < 8) or per uint16_t (w > 8): n codes, a multiple of 8. */
static size_t pack_codes_vec(const void *codes, size_t n, uint8_t *out, int w)
{
    size_t units = n / 8, done = 0;
    if (w == 6)
        done = pack_by_32(codes, units, out, 6);
    else if (w == 4)
        done = pack_by_32(codes, units, out, 4);
    for (; done < units; done++) {
        __m256i v = w < 8
                        ? _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)((const uint8_t *)codes + 8 * done)))
                        : _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)codes + 8 * done)));
        pack8(v, out + done * (size_t)w, w);
    }
    return done * 8;
}

static size_t unpack_codes_vec(const uint8_t *in, size_t n, void *codes, int w)
{
    size_t units = n / 8, done = 0;
    if (w == 6)
        done = unpack_by_32(in, units, codes, 6);
    else if (w == 4)
        done = unpack_by_32(in, units, codes, 4);
    const unpack_consts k = unpack_consts_of(w);
    for (; done < units && done * (size_t)w + 16 <= units * (size_t)w; done++) {
        __m256i v = unpack8(in + done * (size_t)w, &k);
        __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        if (w < 8)
            _mm_storel_epi64((__m128i *)((uint8_t *)codes + 8 * done), _mm_packus_epi16(h, h));
        else
            _mm_storeu_si128((__m128i *)((uint16_t *)codes + 8 * done), h);
    }
    return done * 8;
}

/* NL codes from NL / 8 units of w bytes, and back. */
INLINE vu unpack_vec(const uint8_t *in, int w, const unpack_consts *k)
{
#if VB == 64
    return (vu)_mm512_inserti64x4(_mm512_castsi256_si512(unpack8(in, k)), unpack8(in + w, k), 1);
#else
    (void)w;
    return (vu)unpack8(in, k);
#endif
}

INLINE void pack_vec(vu v, uint8_t *out, int w)
{
#if VB == 64
    pack8(_mm512_castsi512_si256((vreg)v), out, w);
    pack8(_mm512_extracti64x4_epi64((vreg)v, 1), out + w, w);
#else
    pack8((vreg)v, out, w);
#endif
}

/* The packed sum of bit-packed codes without staging: unpack, sum, pack NL codes at a time
 * in place (stores of exactly the codes' bytes, so the bytes ahead are read unchanged). */
#define DEFINE_SUM_PACKED_PATH(NAME, EBITS)                                                                           \
    static size_t NAME(const apsmpi_format *f, const uint8_t *a, uint8_t *io, size_t n)                               \
    {                                                                                                                 \
        const int w = f->width;                                                                                       \
        const size_t step = NL / 8 * (size_t)w, total = n / 8 * (size_t)w;                                            \
        if (total + (size_t)w < 16 + step)                                                                            \
            return 0;                                                                                                 \
        const size_t nvec = (total + (size_t)w - 16) / step;                                                          \
        const unpack_consts uk = unpack_consts_of(w);                                                                 \
        const dec_consts dk = dec_consts_of(f, 0);                                                                    \
        const enc_consts ek = enc_consts_of(f);                                                                       \
        for (size_t v = 0; v < nvec; v++) {                                                                           \
            vu code =                                                                                                 \
                sum_vec(unpack_vec(a + v * step, w, &uk), unpack_vec(io + v * step, w, &uk), &dk, &ek, EBITS, dk.w1); \
            pack_vec(code, io + v * step, w);                                                                         \
        }                                                                                                             \
        return nvec * NL;                                                                                             \
    }

/* The same for widths 4 and 6, packed 32 codes at a time (pack_by_32), reading and writing
 * exactly the 4 * w bytes of each 32 codes; w = W, a constant. */
#define DEFINE_SUM_PACKED32_PATH(NAME, EBITS, W)                                        \
    static size_t NAME(const apsmpi_format *f, const uint8_t *a, uint8_t *io, size_t n) \
    {                                                                                   \
        const int w = W;                                                                \
        const dec_consts dk = dec_consts_of(f, 0);                                      \
        const enc_consts ek = enc_consts_of(f);                                         \
        const size_t units = n / 32;                                                    \
        for (size_t u = 0; u < units; u++) {                                            \
            vu ca[32 / NL], cb[32 / NL];                                                \
            widen(unpack_bytes(a + u * 4 * (size_t)w, w), ca);                          \
            widen(unpack_bytes(io + u * 4 * (size_t)w, w), cb);                         \
            for (int i = 0; i < 32 / NL; i++)                                           \
                cb[i] = sum_vec(ca[i], cb[i], &dk, &ek, EBITS, dk.w1);                  \
            pack_bytes(narrow(cb), w, io + u * 4 * (size_t)w);                          \
        }                                                                               \
        return units * 32;                                                              \
    }

DEFINE_SUM_PACKED_PATH(sum_packed_small, 7)
DEFINE_SUM_PACKED_PATH(sum_packed_one, 6)
DEFINE_SUM_PACKED_PATH(sum_packed_wide, 8)
DEFINE_SUM_PACKED32_PATH(sum_packed6_small, 7, 6)
DEFINE_SUM_PACKED32_PATH(sum_packed6_one, 6, 6)
DEFINE_SUM_PACKED32_PATH(sum_packed4_small, 7, 4)
DEFINE_SUM_PACKED32_PATH(sum_packed4_one, 6, 4)

static size_t sum_packed_vec(const apsmpi_codec *c, const uint8_t *a, uint8_t *io, size_t n)
{
    int one = c->f.ovf_code == c->f.nan_code;
    if (c->f.width == 6)
        return one ? sum_packed6_one(&c->f, a, io, n) : sum_packed6_small(&c->f, a, io, n);
    if (c->f.width == 4)
        return one ? sum_packed4_one(&c->f, a, io, n) : sum_packed4_small(&c->f, a, io, n);
    if (c->f.ebits <= 7 && one)
        return sum_packed_one(&c->f, a, io, n);
    return c->f.ebits <= 7 ? sum_packed_small(&c->f, a, io, n) : sum_packed_wide(&c->f, a, io, n);
}

const codec_loops LOOPS = {LEVEL, encode8, encode16,       decode8,          decode16,
                           sum8,  sum16,   pack_codes_vec, unpack_codes_vec, sum_packed_vec};

#endif /* __x86_64__ */
