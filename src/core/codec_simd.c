/* codec_simd.c: the codec's loops for one x86 vector level (avx2 or avx512), compiled once per level with its -m flags. */
#include <immintrin.h>
#include <string.h>
#include "core/codec_kernels.h"
#include "core/fpconv.h"

/* The same source gives both levels: gcc vector types of VB bytes, and the few operations
 * that need the level's own instructions (shifts that give 0 for counts of 32 and more,
 * min/max, a test of any lane). Float arithmetic is IEEE single with one rounding per
 * operation (no -ffast-math, no contraction: Makefile.am gives -ffp-contract=off). */
#if defined(__AVX512F__)
#define VB 64
#define KERNELS apsmpi_codec_kernels_avx512
#define LEVEL "avx512"
typedef __m512i vreg;
#define SRLV _mm512_srlv_epi32
#define SLLV _mm512_sllv_epi32
#define MINI _mm512_min_epi32
#define MAXI _mm512_max_epi32
#define ANY(v) (_mm512_test_epi32_mask((vreg)(v), (vreg)(v)) != 0)
/* the high halves of 2 x 8 64-bit lanes, in lane order */
#define HIGH_HALVES 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#elif defined(__AVX2__)
#define VB 32
#define KERNELS apsmpi_codec_kernels_avx2
#define LEVEL "avx2"
typedef __m256i vreg;
#define SRLV _mm256_srlv_epi32
#define SLLV _mm256_sllv_epi32
#define MINI _mm256_min_epi32
#define MAXI _mm256_max_epi32
#define ANY(v) (!_mm256_testz_si256((vreg)(v), (vreg)(v)))
#define HIGH_HALVES 1, 3, 5, 7, 9, 11, 13, 15
#else
#error "codec_simd.c is compiled with -mavx2 or -mavx512f (see Makefile.am)"
#endif

enum { NL = VB / 4 }; /* 32-bit lanes per vector */

typedef uint32_t vu __attribute__((vector_size(VB)));
typedef int32_t vi __attribute__((vector_size(VB)));
typedef float vf __attribute__((vector_size(VB)));
typedef uint64_t vq __attribute__((vector_size(VB)));
typedef uint8_t vb __attribute__((vector_size(NL)));
typedef uint16_t vh __attribute__((vector_size(2 * NL)));

#define INLINE static inline __attribute__((always_inline))

INLINE vu splat(uint32_t x)
{
    return (vu){0} + x;
}

INLINE vu sel(vu mask, vu a, vu b)
{
    return (a & mask) | (b & ~mask);
}

INLINE vu srlv(vu a, vi n)
{
    return (vu)SRLV((vreg)a, (vreg)n);
}

INLINE vu sllv(vu a, vi n)
{
    return (vu)SLLV((vreg)a, (vreg)n);
}

INLINE vi vmin(vi a, int b)
{
    return (vi)MINI((vreg)a, (vreg)((vi){0} + b));
}

INLINE vi vmax(vi a, int b)
{
    return (vi)MAXI((vreg)a, (vreg)((vi){0} + b));
}

/* Loads and stores of any alignment. */
INLINE vu load_f32(const float *p)
{
    vu v;
    memcpy(&v, p, sizeof v);
    return v;
}

INLINE vu load_c8(const uint8_t *p)
{
    vb v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, vu);
}

INLINE vu load_c16(const uint16_t *p)
{
    vh v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, vu);
}

INLINE void store_c8(uint8_t *p, vu v)
{
    vb b = __builtin_convertvector(v, vb);
    memcpy(p, &b, sizeof b);
}

INLINE void store_c16(uint16_t *p, vu v)
{
    vh h = __builtin_convertvector(v, vh);
    memcpy(p, &h, sizeof h);
}

INLINE void store_f32(float *p, vu v)
{
    memcpy(p, &v, sizeof v);
}

/* ---- encode ---- */

/* A format's constants, splatted once per run. */
typedef struct enc_consts {
    vu max_code, ovf_code, nan_code;
    int emin, mbits, sh;   /* sh = 23 - mbits */
    vu half;               /* 2^(sh-1) - 1 */
    vu k2;                 /* (126 + emin) << mbits: float exponent field -> code exponent */
    vu thr;                /* float bits of 2^emin, the smallest normal of the format */
    vf magic;              /* 2^(emin - mbits + 23): y + magic rounds y to the subnormal quantum */
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
    k.half = splat((1u << (k.sh - 1)) - 1u);
    k.k2 = splat((uint32_t)(126 + f->emin) << f->mbits);
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
    vu nb = (vu)__builtin_convertvector((vi)frac, vf);
    vu sub = (vu)(bexp == 0);
    vi e = (vi)sel(sub, (nb >> 23) - 276u, bexp - 127u) + s;
    vu m = (sel(sub, nb, ax) & 0x7FFFFFu) | 0x800000u;
    vi d = k->emin - e;
    vi dz = vmax(d, 0);
    vi sh = dz + k->sh;
    vu base = (vu)(dz - d) << k->mbits;
    vu n;
    if (stochastic) {
        vu n0 = srlv(m, sh);
        vu fr = sel((vu)(sh <= 32), sllv(m, 32 - sh), srlv(m, sh - 32));
        n = n0 + ((vu)(fr + rnd < fr) & 1u);
    } else {
        vi shc = vmin(sh, 25);
        vu odd = (base + srlv(m, shc)) & 1u;
        n = srlv(m + (sllv(splat(1), shc - 1) - 1u) + odd, shc);
    }
    vu code = base + n;
    code = sel((vu)(code > k->max_code), k->ovf_code, code);
    vu special = sel((vu)(frac != 0), k->nan_code, k->ovf_code);
    code = sel((vu)(bexp == 255), special, code);
    return code & (vu)(ax != 0);
}

/* Nearest, for formats with ebits <= 7, given y = |x| * 2^s computed in float (exact
 * whenever it matters: every such format's smallest quantum is at least 2^-75, so a y that
 * fell into the float subnormals rounds to 0 either way). A normal result rounds y's bits
 * to nearest even at sh bits; a subnormal one is y + magic, rounded by the addition. */
INLINE vu encode_small(vu ax, vf y, const enc_consts *k)
{
    vu yb = (vu)y;
    vu odd = ((yb >> k->sh) - k->k2) & 1u;
    vu normal = ((yb + k->half + odd) >> k->sh) - k->k2;
    vu subnormal = (vu)(y + k->magic) - (vu)k->magic;
    vu code = sel((vu)(yb < k->thr), subnormal, normal);
    code = sel((vu)(code > k->max_code), k->ovf_code, code);
    return sel((vu)(ax > 0x7F800000u), k->nan_code, code);
}

/* Nearest, for formats with ebits == 8 (the float's exponent range): the code is the float
 * bits of x * 2^s rounded to nearest even at sh bits, subnormals included. The scale is
 * added to the exponent field; *slow is set where that is not exact (a float subnormal
 * input, or a result outside the normal range) and s != 0. */
INLINE vu encode_wide(vu ax, int s, const enc_consts *k, vu *slow)
{
    vu bexp = ax >> 23;
    vi t = (vi)bexp + s;
    *slow = s == 0 ? splat(0) : (vu)((t < 1) | (t > 254) | (bexp == 0)) & (vu)(bexp != 255) & (vu)(ax != 0);
    vu yb = ax + (((vu){0} + (uint32_t)s) << 23);
    vu code = (yb + k->half + ((yb >> k->sh) & 1u)) >> k->sh;
    code = sel((vu)(code > k->max_code), k->ovf_code, code);
    vu special = sel((vu)((ax & 0x7FFFFFu) != 0), k->nan_code, k->ovf_code);
    return sel((vu)(bexp == 255), special, code);
}

/* The random bits of NL consecutive elements: lanes of the splitmix64 stream, two vectors
 * of 64-bit counters, key + (index + 1) * gamma. */
typedef struct rng_lanes {
    vq c0, c1, step;
} rng_lanes;

INLINE rng_lanes rng_start(uint64_t key, uint64_t idx)
{
    rng_lanes r;
    for (int i = 0; i < NL / 2; i++) {
        r.c0[i] = key + (idx + 1 + (uint64_t)i) * APSMPI_RNG_GAMMA;
        r.c1[i] = key + (idx + 1 + (uint64_t)(i + NL / 2)) * APSMPI_RNG_GAMMA;
    }
    r.step = (vq){0} + (uint64_t)NL * APSMPI_RNG_GAMMA;
    return r;
}

INLINE vq mix64_vec(vq z)
{
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z;
}

INLINE vu rng_next(rng_lanes *r)
{
    vu lo = (vu)mix64_vec(r->c0), hi = (vu)mix64_vec(r->c1);
    r->c0 += r->step;
    r->c1 += r->step;
    return __builtin_shufflevector(lo, hi, HIGH_HALVES);
}

/* The magnitude code of NL floats x (bits), nearest or stochastic. p2 = 2^s as a float
 * when the fast paths apply (s in [-126, 127]). */
INLINE vu encode_vec(vu x, int s, const enc_consts *k, int ebits, int fast, vf p2, int stochastic, vu rnd)
{
    if (stochastic || !fast)
        return encode_generic(x, s, k, stochastic, rnd);
    vu ax = x & 0x7FFFFFFFu;
    if (ebits <= 7)
        return encode_small(ax, (vf)ax * p2, k);
    vu slow;
    vu code = encode_wide(ax, s, k, &slow);
    if (__builtin_expect(ANY(slow), 0))
        return encode_generic(x, s, k, 0, rnd);
    return code & (vu)(ax != 0);
}

/* Encodes n floats with one scale into codes of BYTES bytes; the tail element by element. */
#define DEFINE_ENCODE(NAME, T, STORE)                                                              \
    static uint64_t NAME(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic,  \
                         uint64_t key, uint64_t idx, T *out)                                       \
    {                                                                                              \
        const apsmpi_format *f = &c->f;                                                            \
        const enc_consts k = enc_consts_of(f);                                                     \
        const int w1 = f->width - 1, fast = s >= -126 && s <= 127;                                 \
        const vf p2 = (vf)splat((uint32_t)(fast ? s + 127 : 127) << 23);                           \
        rng_lanes r = rng_start(key, idx);                                                         \
        vu flushed = splat(0), rnd = splat(0);                                                     \
        size_t j = 0;                                                                              \
        for (; j + NL <= n; j += NL) {                                                             \
            vu x = load_f32(in + j);                                                               \
            if (stochastic)                                                                        \
                rnd = rng_next(&r);                                                                \
            vu code = f->ebits <= 7 ? encode_vec(x, s, &k, 7, fast, p2, stochastic, rnd)           \
                                    : encode_vec(x, s, &k, 8, fast, p2, stochastic, rnd);          \
            flushed -= (vu)(code == 0) & (vu)((x << 1) != 0);                                      \
            STORE(out + j, code | (x >> 31) << w1);                                                \
        }                                                                                          \
        uint64_t total = 0;                                                                        \
        for (int i = 0; i < NL; i++)                                                               \
            total += flushed[i];                                                                   \
        for (; j < n; j++) {                                                                       \
            uint32_t x = apsmpi_f2u(in[j]);                                                        \
            uint32_t code = apsmpi_encode_one(x, s, f, stochastic, stochastic ? apsmpi_rng_bits(key, idx + j) : 0); \
            out[j] = (T)code;                                                                      \
            total += ((code & ((1u << w1) - 1u)) == 0) & ((x << 1) != 0);                          \
        }                                                                                          \
        return total;                                                                              \
    }

DEFINE_ENCODE(encode8, uint8_t, store_c8)
DEFINE_ENCODE(encode16, uint16_t, store_c16)

/* ---- decode ---- */

/* A format's constants for decoding with scale s. */
typedef struct dec_consts {
    vu magmask, max_code, ovf_code, special_ovf;
    int w1, sh;
    vf rebias; /* 2^(127 - bias): the code's exponent moved into the float's, exactly */
    vf unscale; /* 2^-s */
} dec_consts;

/* Whether decode_vec applies to scale s: 2^-s is a normal float. */
INLINE int decode_fast(int s)
{
    return s >= -127 && s <= 126;
}

INLINE dec_consts dec_consts_of(const apsmpi_format *f, int s)
{
    dec_consts k;
    k.w1 = f->width - 1;
    k.sh = 23 - f->mbits;
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
 * with ebits == 8 rebias is 1); times 2^-s it is rounded once as apsmpi_decode_one rounds. Codes
 * above max_code give inf or the quiet NaN 0x7FC00000, with the code's sign. */
INLINE vu decode_vec(vu code, const dec_consts *k)
{
    vu c = code & k->magmask;
    vu bits = (vu)((vf)(c << k->sh) * k->rebias * k->unscale);
    vu special = sel((vu)(c == k->ovf_code), k->special_ovf, splat(0x7FC00000u));
    bits = sel((vu)(c > k->max_code), special, bits);
    return bits | (code >> k->w1) << 31;
}

#define DEFINE_DECODE(NAME, T, LOAD)                                                          \
    static void NAME(const apsmpi_codec *c, const T *in, size_t n, int s, float *out)         \
    {                                                                                         \
        const apsmpi_format *f = &c->f;                                                       \
        size_t j = 0;                                                                         \
        if (decode_fast(s)) {                                                              \
            const dec_consts k = dec_consts_of(f, s);                                         \
            for (; j + NL <= n; j += NL)                                                      \
                store_f32(out + j, decode_vec(LOAD(in + j), &k));                             \
        }                                                                                     \
        for (; j < n; j++)                                                                    \
            out[j] = apsmpi_decode_one(in[j], s, f);                                          \
    }

DEFINE_DECODE(decode8, uint8_t, load_c8)
DEFINE_DECODE(decode16, uint16_t, load_c16)

/* ---- the packed sum ---- */

/* The code of decode(a) + decode(b), the addition in float, to nearest even. */
INLINE vu sum_vec(vu a, vu b, const dec_consts *dk, const enc_consts *ek, int ebits, int w1)
{
    vu x = (vu)((vf)decode_vec(a, dk) + (vf)decode_vec(b, dk));
    vu ax = x & 0x7FFFFFFFu, slow, code;
    if (ebits <= 7)
        code = encode_small(ax, (vf)ax, ek);
    else
        code = encode_wide(ax, 0, ek, &slow) & (vu)(ax != 0);
    return code | (x >> 31) << w1;
}

#define DEFINE_SUM(NAME, T, LOAD, STORE)                                                      \
    static void NAME(const apsmpi_codec *c, const T *a, T *io, size_t n)                      \
    {                                                                                         \
        const apsmpi_format *f = &c->f;                                                       \
        const dec_consts dk = dec_consts_of(f, 0);                                            \
        const enc_consts ek = enc_consts_of(f);                                               \
        size_t j = 0;                                                                         \
        for (; j + NL <= n; j += NL) {                                                        \
            vu code = f->ebits <= 7 ? sum_vec(LOAD(a + j), LOAD(io + j), &dk, &ek, 7, dk.w1)  \
                                    : sum_vec(LOAD(a + j), LOAD(io + j), &dk, &ek, 8, dk.w1); \
            STORE(io + j, code);                                                              \
        }                                                                                     \
        for (; j < n; j++) {                                                                  \
            float x = apsmpi_decode_one(a[j], 0, f) + apsmpi_decode_one(io[j], 0, f);         \
            io[j] = (T)apsmpi_encode_one(apsmpi_f2u(x), 0, f, 0, 0);                          \
        }                                                                                     \
    }

DEFINE_SUM(sum8, uint8_t, load_c8, store_c8)
DEFINE_SUM(sum16, uint16_t, load_c16, store_c16)

const codec_kernels KERNELS = {LEVEL, encode8, encode16, decode8, decode16, sum8, sum16};
