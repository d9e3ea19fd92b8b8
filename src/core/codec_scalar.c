/* codec_scalar.c: the codec's portable loops (the "scalar" level): fpconv.h element by element, lookup tables. */
#include "core/codec_loops.h"
#include "core/fpconv.h"

/* Encodes one run of n floats with one scale into codes of type T. */
#define DEFINE_ENCODE_RUN(NAME, T, STOCH)                                                                  \
    static uint64_t NAME(const apsmpi_format *fp, const float *restrict in, size_t n, int s, uint64_t key, \
                         uint64_t idx, T *restrict out)                                                    \
    {                                                                                                      \
        const apsmpi_format f = *fp;                                                                       \
        const uint32_t magmask = (1u << (f.width - 1)) - 1u;                                               \
        uint64_t flushed = 0;                                                                              \
        for (size_t j = 0; j < n; j++) {                                                                   \
            uint32_t x = apsmpi_f2u(in[j]);                                                                \
            uint32_t rnd = STOCH ? apsmpi_rng_bits(key, idx + j) : 0;                                      \
            uint32_t code = apsmpi_encode_one(x, s, &f, STOCH, rnd);                                       \
            out[j] = (T)code;                                                                              \
            flushed += ((code & magmask) == 0) & ((x << 1) != 0);                                          \
        }                                                                                                  \
        return flushed;                                                                                    \
    }

DEFINE_ENCODE_RUN(encode_run8, uint8_t, 0)
DEFINE_ENCODE_RUN(encode_run8_sr, uint8_t, 1)
DEFINE_ENCODE_RUN(encode_run16, uint16_t, 0)
DEFINE_ENCODE_RUN(encode_run16_sr, uint16_t, 1)

static uint64_t encode8(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key,
                        uint64_t idx, uint8_t *out)
{
    return stochastic ? encode_run8_sr(&c->f, in, n, s, key, idx, out) : encode_run8(&c->f, in, n, s, key, idx, out);
}

static uint64_t encode16(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key,
                         uint64_t idx, uint16_t *out)
{
    return stochastic ? encode_run16_sr(&c->f, in, n, s, key, idx, out) : encode_run16(&c->f, in, n, s, key, idx, out);
}

/* Decodes n codes of type T with one scale through the table: tab[code] times 2^-s, one
 * correctly rounded multiplication when 2^-s is a normal float, else fpconv.h's decode. */
#define DEFINE_DECODE(NAME, T)                                                                          \
    static void NAME(const apsmpi_codec *c, const T *restrict in, size_t n, int s, float *restrict out) \
    {                                                                                                   \
        if (s < -127 || s > 126) {                                                                      \
            for (size_t j = 0; j < n; j++)                                                              \
                out[j] = apsmpi_decode_one(in[j], s, &c->f);                                            \
            return;                                                                                     \
        }                                                                                               \
        const float *restrict tab = c->dec;                                                             \
        float p2 = apsmpi_u2f((uint32_t)(127 - s) << 23);                                               \
        for (size_t j = 0; j < n; j++)                                                                  \
            out[j] = tab[in[j]] * p2;                                                                   \
    }

DEFINE_DECODE(decode8, uint8_t)
DEFINE_DECODE(decode16, uint16_t)

/* io[k] = sum[(a[k] << w) | io[k]]: one table lookup per element. */
static void sum8(const apsmpi_codec *c, const uint8_t *restrict a, uint8_t *restrict io, size_t n)
{
    const uint8_t *restrict tab = c->sum;
    int w = c->f.width;
    for (size_t k = 0; k < n; k++)
        io[k] = tab[((size_t)a[k] << w) | io[k]];
}

/* The float of a code, unscaled, without tables or branches (so that it vectorises):
 * the same value as apsmpi_decode_one(code, 0, f), NaN payloads aside. With ebits < 8 every
 * finite value is a normal float: the exact float of the integer significand with its
 * exponent field moved; with ebits == 8 the code is the top of the float's bits. */
static inline float decode_unscaled(uint32_t code, const apsmpi_format *f)
{
    uint32_t sign = (code >> (f->width - 1)) << 31;
    uint32_t c = code & ((1u << (f->width - 1)) - 1u);
    uint32_t mmask = (1u << f->mbits) - 1u;
    uint32_t ef = c >> f->mbits;
    uint32_t normal = apsmpi_mask(ef != 0);
    uint32_t sig = (c & mmask) | ((mmask + 1u) & normal);
    uint32_t k = apsmpi_sel(normal, ef - (uint32_t)f->bias, (uint32_t)f->emin) - (uint32_t)f->mbits;
    uint32_t bits = (apsmpi_f2u((float)(int32_t)sig) + (k << 23)) & apsmpi_mask(sig != 0);
    uint32_t special =
        apsmpi_sel(apsmpi_mask(c == f->ovf_code && f->kind == APSMPI_KIND_IEEE), 0x7F800000u, 0x7FC00000u);
    bits = apsmpi_sel(apsmpi_mask(c > f->max_code), special, bits);
    bits = f->ebits == 8 ? c << (23 - f->mbits) : bits;
    return apsmpi_u2f(bits | sign);
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
        io[k] = (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
    }
}

static void sum16(const apsmpi_codec *c, const uint16_t *restrict a, uint16_t *restrict io, size_t n)
{
    const apsmpi_format f = c->f;
    if (f.ebits == 8 && f.mbits == 7 && f.kind == APSMPI_KIND_IEEE) {
        sum_bf16(a, io, n, f.nan_code);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        float x = decode_unscaled(a[k], &f) + decode_unscaled(io[k], &f);
        io[k] = (uint16_t)apsmpi_encode_one(apsmpi_f2u(x), 0, &f, 0, 0);
    }
}

const codec_loops apsmpi_codec_loops_scalar = {"scalar", encode8, encode16, decode8, decode16,
                                               sum8,     sum16,   NULL,     NULL,    NULL};
