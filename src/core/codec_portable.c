/* codec_portable.c: the codec's portable loops (the "scalar" level): plain C that a compiler vectorises (SSE2, NEON), fpconv.h where it cannot. */
#include "core/codec_loops.h"
#include "core/fpconv.h"

/* Every loop over elements here is written for the compiler's vectoriser (Makefile.am
 * builds this file with -ftree-vectorize): one element per iteration, no table lookups,
 * no branches (selects of values only), shift counts that are the same for every element
 * (SSE2 has no per-element shifts), comparisons of values below 2^31 as signed numbers.
 * They are the x86 levels' methods (codec_simd.c) written element by element, and give
 * apsmpi_encode_one's and apsmpi_decode_one's bits, which the rare cases they do not cover
 * (scales beyond the float range, stochastic rounding) use directly. */

/* Elements per pass of a loop that counts into 32 bits or may have to redo its work. */
enum { PASS = 1024 };

/* ---- encode ---- */

/* A format's constants for the encoding loops. */
typedef struct enc_consts {
    uint32_t max_code, ovf_code, nan_code, magmask, signbit;
    int sh, w1;          /* sh = 23 - mbits; w1 = width - 1 */
    uint32_t half;       /* 2^(sh-1) - 1 */
    uint32_t k2;         /* (126 + emin) << mbits: float exponent field -> code exponent */
    uint32_t thr;        /* float bits of 2^emin, the smallest normal of the format */
    float magic;         /* 2^(emin - mbits + 23): y + magic rounds y to the subnormal quantum */
    uint32_t magic_bits; /* its bits */
} enc_consts;

static enc_consts enc_consts_of(const apsmpi_format *f)
{
    enc_consts k;
    k.max_code = f->max_code;
    k.ovf_code = f->ovf_code;
    k.nan_code = f->nan_code;
    k.w1 = f->width - 1;
    k.magmask = (1u << k.w1) - 1u;
    k.signbit = 1u << k.w1;
    k.sh = 23 - f->mbits;
    k.half = (1u << (k.sh - 1)) - 1u;
    k.k2 = (uint32_t)(126 + f->emin) << f->mbits;
    k.thr = (uint32_t)(f->emin + 127) << 23;
    k.magic_bits = (uint32_t)(f->emin - f->mbits + 23 + 127) << 23;
    k.magic = apsmpi_u2f(k.magic_bits);
    return k;
}

/* a > b ? x : y for a, b < 2^31, as a mask: a select that the compiler does not turn into a
 * branch around the float operations that compute x or y (a branch stops the vectoriser). */
static inline uint32_t sel_gt(uint32_t a, uint32_t b, uint32_t x, uint32_t y)
{
    return apsmpi_sel(apsmpi_mask((int32_t)a > (int32_t)b), x, y);
}

static inline uint32_t sel_eq(uint32_t a, uint32_t b, uint32_t x, uint32_t y) /* a == b ? x : y */
{
    return apsmpi_sel(apsmpi_mask(a == b), x, y);
}

/* The magnitude code of y = |x| * 2^s, computed in float, to nearest even, for a format with
 * ebits <= 7 (exact whenever it matters: every such format's smallest quantum is at least
 * 2^-75, so a y that fell into the float subnormals rounds to 0 either way). A normal
 * result rounds y's bits at sh bits; a subnormal one is y + magic, rounded by the addition.
 * ax: |x|'s bits, for inf and NaN. */
static inline uint32_t encode_small(uint32_t ax, float y, const enc_consts *k)
{
    uint32_t yb = apsmpi_f2u(y);
    uint32_t odd = ((yb >> k->sh) - k->k2) & 1u;
    uint32_t normal = ((yb + k->half + odd) >> k->sh) - k->k2;
    uint32_t subnormal = apsmpi_f2u(y + k->magic) - k->magic_bits;
    uint32_t code = sel_gt(k->thr, yb, subnormal, normal);
    code = sel_gt(code, k->max_code, k->ovf_code, code);
    return sel_gt(ax, 0x7F800000u, k->nan_code, code);
}

/* The same for ebits == 8 (the float's exponent range): y's bits rounded to nearest even at
 * sh bits, subnormals included. y is exact unless it is a float subnormal after a scale
 * s < 0 (the caller checks). */
static inline uint32_t encode_wide(uint32_t ax, float y, const enc_consts *k)
{
    uint32_t yb = apsmpi_f2u(y);
    uint32_t code = (yb + k->half + ((yb >> k->sh) & 1u)) >> k->sh;
    code = sel_gt(code, k->max_code, k->ovf_code, code);
    return sel_gt(ax, 0x7F800000u, k->nan_code, code);
}

/* 2^s as the product p2 * p2b of two normal floats, for s in [-252, 254]: |x| * p2 * p2b is
 * then exact where it matters (as codec_simd.c's scale_factors). */
static void scale_factors(int s, float *p2, float *p2b)
{
    int a = s > 127 ? s - 127 : s < -126 ? s + 126 : s, b = s - a;
    *p2 = apsmpi_u2f((uint32_t)(a + 127) << 23);
    *p2b = apsmpi_u2f((uint32_t)(b + 127) << 23);
}

/* Encodes one pass (n <= PASS) of floats with one scale s in [-252, 254], to nearest, into
 * codes of type T; returns the flushed count, or UINT32_MAX when an element needs the
 * exact path (ebits == 8, s < 0, a float subnormal product). */
#define DEFINE_ENCODE_PASS(NAME, T, WIDE)                                                                     \
    static uint32_t NAME(const enc_consts *k, const float *restrict in, size_t n, float p2, float p2b, int s, \
                         T *restrict out)                                                                     \
    {                                                                                                         \
        uint32_t flushed = 0, slow = 0;                                                                       \
        for (size_t j = 0; j < n; j++) {                                                                      \
            uint32_t x = apsmpi_f2u(in[j]);                                                                   \
            uint32_t ax = x & 0x7FFFFFFFu;                                                                    \
            float y = apsmpi_u2f(ax) * p2 * p2b;                                                              \
            uint32_t code = WIDE ? encode_wide(ax, y, k) : encode_small(ax, y, k);                            \
            if (WIDE)                                                                                         \
                slow |= apsmpi_f2u(y) - 1u < 0x7FFFFFu;                                                       \
            flushed += (code == 0) & (ax != 0);                                                               \
            out[j] = (T)(code | ((x >> (31 - k->w1)) & k->signbit));                                          \
        }                                                                                                     \
        return WIDE && s < 0 && slow ? UINT32_MAX : flushed;                                                  \
    }

DEFINE_ENCODE_PASS(encode_pass8, uint8_t, 0)
DEFINE_ENCODE_PASS(encode_pass16, uint16_t, 0)
DEFINE_ENCODE_PASS(encode_pass16_wide, uint16_t, 1)

/* fpconv.h element by element: any scale, both roundings. */
#define DEFINE_ENCODE_EXACT(NAME, T)                                                                             \
    static uint64_t NAME(const apsmpi_format *f, const float *in, size_t n, int s, int stochastic, uint64_t key, \
                         uint64_t idx, T *out)                                                                   \
    {                                                                                                            \
        const uint32_t magmask = (1u << (f->width - 1)) - 1u;                                                    \
        uint64_t flushed = 0;                                                                                    \
        for (size_t j = 0; j < n; j++) {                                                                         \
            uint32_t x = apsmpi_f2u(in[j]);                                                                      \
            uint32_t rnd = stochastic ? apsmpi_rng_bits(key, idx + j) : 0;                                       \
            uint32_t code = apsmpi_encode_one(x, s, f, stochastic, rnd);                                         \
            out[j] = (T)code;                                                                                    \
            flushed += ((code & magmask) == 0) & ((x << 1) != 0);                                                \
        }                                                                                                        \
        return flushed;                                                                                          \
    }

DEFINE_ENCODE_EXACT(encode_exact8, uint8_t)
DEFINE_ENCODE_EXACT(encode_exact16, uint16_t)

/* Codes of at most 8 bits come from formats with ebits <= 7 (1 + 8 + 0 bits is 9). */
static uint64_t encode8(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key,
                        uint64_t idx, uint8_t *out, int count)
{
    (void)count; /* counting costs little here */
    if (stochastic || s < -252 || s > 254)
        return encode_exact8(&c->f, in, n, s, stochastic, key, idx, out);
    const enc_consts k = enc_consts_of(&c->f);
    float p2, p2b;
    scale_factors(s, &p2, &p2b);
    uint64_t flushed = 0;
    for (size_t j = 0; j < n; j += PASS)
        flushed += encode_pass8(&k, in + j, n - j < PASS ? n - j : PASS, p2, p2b, s, out + j);
    return flushed;
}

static uint64_t encode16(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key,
                         uint64_t idx, uint16_t *out, int count)
{
    (void)count; /* counting costs little here */
    if (stochastic || s < -252 || s > 254)
        return encode_exact16(&c->f, in, n, s, stochastic, key, idx, out);
    const enc_consts k = enc_consts_of(&c->f);
    float p2, p2b;
    scale_factors(s, &p2, &p2b);
    uint64_t flushed = 0;
    for (size_t j = 0; j < n; j += PASS) {
        size_t len = n - j < PASS ? n - j : PASS;
        uint32_t got = c->f.ebits == 8 ? encode_pass16_wide(&k, in + j, len, p2, p2b, s, out + j)
                                       : encode_pass16(&k, in + j, len, p2, p2b, s, out + j);
        flushed += got != UINT32_MAX ? got : encode_exact16(&c->f, in + j, len, s, 0, 0, 0, out + j);
    }
    return flushed;
}

/* ---- decode ---- */

/* A format's constants for decoding with scale s, for s in [-127, 126] (2^-s a normal float). */
typedef struct dec_consts {
    uint32_t magmask, max_code, ovf_code, special_ovf;
    int sh, w1;
    float rebias;  /* 2^(127 - bias): the code's exponent moved into the float's, exactly */
    float unscale; /* 2^-s */
} dec_consts;

static dec_consts dec_consts_of(const apsmpi_format *f, int s)
{
    dec_consts k;
    k.w1 = f->width - 1;
    k.sh = 23 - f->mbits;
    k.magmask = (1u << k.w1) - 1u;
    k.max_code = f->max_code;
    k.ovf_code = f->ovf_code;
    k.special_ovf = f->kind == APSMPI_KIND_IEEE ? 0x7F800000u : 0x7FC00000u;
    k.rebias = apsmpi_u2f((uint32_t)(127 - f->bias + 127) << 23);
    k.unscale = apsmpi_u2f((uint32_t)(127 - s) << 23);
    return k;
}

/* The float bits of a code divided by 2^s: the magnitude code shifted into the float's bit
 * positions is the value times 2^(bias - 127); times rebias it is the value, exactly (every
 * value of a format with ebits <= 7 is a normal float, and with ebits == 8 rebias is 1);
 * times 2^-s it is rounded once, as apsmpi_decode_one rounds. Codes above max_code give inf
 * or the quiet NaN 0x7FC00000, with the code's sign. */
static inline uint32_t decode_bits(uint32_t code, const dec_consts *k)
{
    uint32_t c = code & k->magmask;
    uint32_t bits = apsmpi_f2u(apsmpi_u2f(c << k->sh) * k->rebias * k->unscale);
    uint32_t special = sel_eq(c, k->ovf_code, k->special_ovf, 0x7FC00000u);
    bits = sel_gt(c, k->max_code, special, bits);
    return bits | ((code << (31 - k->w1)) & 0x80000000u);
}

static void decode16(const apsmpi_codec *c, const uint16_t *restrict in, size_t n, int s, float *restrict out)
{
    if (s < -127 || s > 126) {
        for (size_t j = 0; j < n; j++)
            out[j] = apsmpi_decode_one(in[j], s, &c->f);
        return;
    }
    const dec_consts k = dec_consts_of(&c->f, s);
    for (size_t j = 0; j < n; j++)
        out[j] = apsmpi_u2f(decode_bits(in[j], &k));
}

/* Codes of at most 8 bits: the codec's table of their floats (apsmpi_codec.dec, 2^width
 * entries) times 2^-s, rounded once as decode_bits rounds. Without a gather (SSE2, NEON) a
 * lookup per element is faster than decode_bits' arithmetic (results/codec_replaced.md). The
 * table's inf and quiet NaN entries come out of the multiplication unchanged (x86; aarch64
 * with FPCR.DN clear, as codec.c's calls run). */
static void decode8(const apsmpi_codec *c, const uint8_t *restrict in, size_t n, int s, float *restrict out)
{
    if (s < -127 || s > 126) {
        for (size_t j = 0; j < n; j++)
            out[j] = apsmpi_decode_one(in[j], s, &c->f);
        return;
    }
    const float *restrict tab = c->dec;
    const float unscale = apsmpi_u2f((uint32_t)(127 - s) << 23);
    for (size_t j = 0; j < n; j++)
        out[j] = tab[in[j]] * unscale;
}

/* ---- the packed sum ---- */

/* io[k] = sum[(a[k] << w) | io[k]]: one lookup in a table of 2^(2w) bytes per element, which
 * for codes of at most 8 bits is faster than the arithmetic below on SSE2 and NEON. Inlined
 * into sum8 twice, so that the 8-bit loop shifts by a constant (faster than a shift by a
 * variable: e4m3 1.18 -> 1.34 G elements/s here, results/codec_replaced.md's two runs). */
static inline __attribute__((always_inline)) void sum_lookup(const uint8_t *restrict tab, int w,
                                                             const uint8_t *restrict a, uint8_t *restrict io, size_t n)
{
    for (size_t k = 0; k < n; k++)
        io[k] = tab[((size_t)a[k] << w) | io[k]];
}

static void sum8(const apsmpi_codec *c, const uint8_t *restrict a, uint8_t *restrict io, size_t n)
{
    if (c->f.width == 8)
        sum_lookup(c->sum, 8, a, io, n);
    else
        sum_lookup(c->sum, c->f.width, a, io, n);
}

/* The packed sum for bf16 (e8m7), whose code is the upper half of the float: decoding is a
 * shift, and encoding rounds the lower half to nearest even, a carry running into the
 * exponent and past the largest finite value to inf exactly as apsmpi_encode_one does; a
 * NaN becomes the format's NaN code with its sign. */
static void sum_bf16(const uint16_t *restrict a, uint16_t *restrict io, size_t n, uint32_t nan_code)
{
    for (size_t k = 0; k < n; k++) {
        uint32_t u = apsmpi_f2u(apsmpi_u2f((uint32_t)a[k] << 16) + apsmpi_u2f((uint32_t)io[k] << 16));
        uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
        uint32_t nan = nan_code | ((u >> 16) & 0x8000u);
        io[k] = (uint16_t)sel_gt(u & 0x7FFFFFFFu, 0x7F800000u, nan, rounded);
    }
}

/* decode(a) + decode(b) in float, encoded to nearest even: the decode and encode above with
 * no scale (a NaN sum gives the NaN code, its sign the hardware's choice). */
#define DEFINE_SUM16(NAME, WIDE)                                                                                 \
    static void NAME(const apsmpi_format *f, const uint16_t *restrict a, uint16_t *restrict io, size_t n)        \
    {                                                                                                            \
        const dec_consts dk = dec_consts_of(f, 0);                                                               \
        const enc_consts ek = enc_consts_of(f);                                                                  \
        for (size_t j = 0; j < n; j++) {                                                                         \
            uint32_t x = apsmpi_f2u(apsmpi_u2f(decode_bits(a[j], &dk)) + apsmpi_u2f(decode_bits(io[j], &dk)));   \
            uint32_t ax = x & 0x7FFFFFFFu;                                                                       \
            uint32_t code = WIDE ? encode_wide(ax, apsmpi_u2f(ax), &ek) : encode_small(ax, apsmpi_u2f(ax), &ek); \
            io[j] = (uint16_t)(code | ((x >> (31 - ek.w1)) & ek.signbit));                                       \
        }                                                                                                        \
    }

DEFINE_SUM16(sum16_small, 0)
DEFINE_SUM16(sum16_wide, 1)

static void sum16(const apsmpi_codec *c, const uint16_t *restrict a, uint16_t *restrict io, size_t n)
{
    const apsmpi_format *f = &c->f;
    if (f->ebits == 8 && f->mbits == 7 && f->kind == APSMPI_KIND_IEEE)
        sum_bf16(a, io, n, f->nan_code);
    else if (f->ebits == 8)
        sum16_wide(f, a, io, n);
    else
        sum16_small(f, a, io, n);
}

const codec_loops apsmpi_codec_loops_scalar = {"scalar", encode8, encode16, decode8, decode16,
                                               sum8,     sum16,   NULL,     NULL,    NULL};
