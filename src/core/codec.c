/* codec.c: buffer encode/decode between float and bit-packed low-precision codes, and the packed sum. */
#include <stdlib.h>
#include <string.h>
#include "core/codec.h"
#include "core/fpconv.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "apsmpi's packed wire format is written with little-endian stores"
#endif

/* Hot loops are compiled twice, for AVX2 and for the baseline, and chosen at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((target_clones("avx2", "default")))
#else
#define HOT
#endif
#define INLINE static inline __attribute__((always_inline))

enum { CHUNK = 1024 }; /* elements staged as 16-bit codes on the generic-width paths */

struct apsmpi_codec {
    apsmpi_format f;
    float *dec;    /* 2^width entries: the float of every code, unscaled */
    uint8_t *sum;  /* width <= 8: 2^(2 width) entries, sum[(a << width) | b] = a (+) b */
};

const apsmpi_format *apsmpi_codec_format(const apsmpi_codec *c)
{
    return &c->f;
}

void apsmpi_codec_free(apsmpi_codec *c)
{
    if (c == NULL)
        return;
    free(c->dec);
    free(c->sum);
    free(c);
}

/* The code of decode(a) + decode(b), the addition in float, rounded to nearest even. */
static uint32_t code_add(const apsmpi_codec *c, uint32_t a, uint32_t b)
{
    float x = c->dec[a] + c->dec[b];
    return apsmpi_encode_one(apsmpi_f2u(x), 0, &c->f, 0, 0);
}

apsmpi_codec *apsmpi_codec_create(const apsmpi_format *f)
{
    apsmpi_codec *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->f = *f;
    size_t ncodes = (size_t)1 << f->width;
    c->dec = malloc(ncodes * sizeof *c->dec);
    if (c->dec == NULL)
        goto fail;
    for (size_t k = 0; k < ncodes; k++)
        c->dec[k] = apsmpi_decode_one((uint32_t)k, 0, f);
    if (f->width <= 8) {
        c->sum = malloc(ncodes * ncodes);
        if (c->sum == NULL)
            goto fail;
        for (size_t a = 0; a < ncodes; a++)
            for (size_t b = 0; b < ncodes; b++)
                c->sum[(a << f->width) | b] = (uint8_t)code_add(c, (uint32_t)a, (uint32_t)b);
    }
    return c;
fail:
    apsmpi_codec_free(c);
    return NULL;
}

/* ---- bit packing: groups of g codes of w bits in g*w/8 bytes, LSB first ---- */

/* Packs ngroups groups of codes (g = 8 / 4 / 2 / 1 per group) of width w into out. A group
 * of up to 64 bits is assembled in a uint64_t, a wider one (9 to 15 bits, 8 codes) in two. */
INLINE void pack_w(const uint16_t *codes, size_t ngroups, uint8_t *out, int w, int g)
{
    int gb = g * w / 8;
    for (size_t k = 0; k < ngroups; k++) {
        const uint16_t *cd = codes + k * g;
        uint64_t lo = 0, hi = 0;
        for (int j = 0; j < g; j++) {
            int at = j * w;
            if (at < 64)
                lo |= (uint64_t)cd[j] << at;
            if (at + w > 64)
                hi |= (uint64_t)cd[j] >> (at < 64 ? 64 - at : 0) << (at > 64 ? at - 64 : 0);
        }
        memcpy(out + k * gb, &lo, gb < 8 ? gb : 8);
        if (gb > 8)
            memcpy(out + k * gb + 8, &hi, gb - 8);
    }
}

/* The little-endian number in the nbytes (at most 8) bytes at p, built in a register (a
 * memcpy into a wider variable would stall on store forwarding). */
INLINE uint64_t load_le(const uint8_t *p, int nbytes)
{
    uint64_t v = 0;
    for (int b = 0; b < nbytes; b++)
        v |= (uint64_t)p[b] << (8 * b);
    return v;
}

/* Unpacks ngroups groups of width w from in into codes. */
INLINE void unpack_w(const uint8_t *in, size_t ngroups, uint16_t *codes, int w, int g)
{
    int gb = g * w / 8;
    uint64_t mask = (1u << w) - 1u;
    for (size_t k = 0; k < ngroups; k++) {
        uint64_t lo = load_le(in + k * gb, gb < 8 ? gb : 8);
        uint64_t hi = gb > 8 ? load_le(in + k * gb + 8, gb - 8) : 0;
        uint16_t *cd = codes + k * g;
        for (int j = 0; j < g; j++) {
            int at = j * w;
            uint64_t v = at < 64 ? lo >> at : 0;
            if (at + w > 64)
                v |= at < 64 ? hi << (64 - at) : hi >> (at - 64);
            cd[j] = (uint16_t)(v & mask);
        }
    }
}

/* Instantiates pack/unpack with the width and group size as constants for every width 3..16
 * (the group size as apsmpi_group_elems computes it). */
#define WIDTH_CASES(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)
#define GROUP_OF(W) ((W) % 8 == 0 ? 1 : (W) % 4 == 0 ? 2 : (W) % 2 == 0 ? 4 : 8)

static void pack_codes(const uint16_t *codes, size_t ngroups, uint8_t *out, int w)
{
    switch (w) {
#define PACK_CASE(W) case W: pack_w(codes, ngroups, out, W, GROUP_OF(W)); return;
        WIDTH_CASES(PACK_CASE)
#undef PACK_CASE
    }
}

static void unpack_codes(const uint8_t *in, size_t ngroups, uint16_t *codes, int w)
{
    switch (w) {
#define UNPACK_CASE(W) case W: unpack_w(in, ngroups, codes, W, GROUP_OF(W)); return;
        WIDTH_CASES(UNPACK_CASE)
#undef UNPACK_CASE
    }
}

/* ---- encode ---- */

/* Encodes one run of n floats with one scale into codes of type T; returns how many
 * non-zero inputs became a zero magnitude. idx is the buffer index of in[0]. */
#define DEFINE_ENCODE_RUN(NAME, T, STOCH)                                                     \
    HOT static uint64_t NAME(const apsmpi_format *fp, const float *restrict in, size_t n,     \
                             int s, uint64_t key, uint64_t idx, T *restrict out)              \
    {                                                                                         \
        const apsmpi_format f = *fp;                                                          \
        const uint32_t magmask = (1u << (f.width - 1)) - 1u;                                  \
        uint64_t flushed = 0;                                                                 \
        for (size_t j = 0; j < n; j++) {                                                      \
            uint32_t x = apsmpi_f2u(in[j]);                                                   \
            uint32_t rnd = STOCH ? apsmpi_rng_bits(key, idx + j) : 0;                         \
            uint32_t code = apsmpi_encode_one(x, s, &f, STOCH, rnd);                          \
            out[j] = (T)code;                                                                 \
            flushed += ((code & magmask) == 0) & ((x << 1) != 0);                             \
        }                                                                                     \
        return flushed;                                                                       \
    }

DEFINE_ENCODE_RUN(encode_run8, uint8_t, 0)
DEFINE_ENCODE_RUN(encode_run8_sr, uint8_t, 1)
DEFINE_ENCODE_RUN(encode_run16, uint16_t, 0)
DEFINE_ENCODE_RUN(encode_run16_sr, uint16_t, 1)

/* Scale of the block that holds buffer index i. */
static inline int scale_at(apsmpi_scales sc, size_t i)
{
    return sc.scale ? sc.scale[i / sc.block_len] : 0;
}

/* Number of elements from buffer index i, at most n, that share i's block. */
static inline size_t run_len(apsmpi_scales sc, size_t i, size_t n)
{
    if (sc.scale == NULL)
        return n;
    size_t left = sc.block_len - i % sc.block_len;
    return left < n ? left : n;
}

/* Encodes n floats into codes of one or two bytes each, run by run of equal scale. */
static uint64_t encode_codes(const apsmpi_codec *c, const float *in, size_t n, size_t first,
                             apsmpi_scales sc, int stochastic, uint64_t key, void *out)
{
    int bytes = c->f.width <= 8 ? 1 : 2;
    uint64_t flushed = 0;
    for (size_t i = 0; i < n;) {
        size_t len = run_len(sc, first + i, n - i);
        int s = scale_at(sc, first + i);
        void *o = (uint8_t *)out + i * (size_t)bytes;
        if (bytes == 1)
            flushed += stochastic ? encode_run8_sr(&c->f, in + i, len, s, key, first + i, o)
                                  : encode_run8(&c->f, in + i, len, s, key, first + i, o);
        else
            flushed += stochastic ? encode_run16_sr(&c->f, in + i, len, s, key, first + i, o)
                                  : encode_run16(&c->f, in + i, len, s, key, first + i, o);
        i += len;
    }
    return flushed;
}

void apsmpi_encode(const apsmpi_codec *c, const float *in, size_t n, size_t first_index,
                   apsmpi_scales sc, apsmpi_rounding r, void *out, uint64_t *flushed)
{
    int w = c->f.width;
    uint64_t key = apsmpi_rng_key(r.seed, r.call);
    size_t g = apsmpi_group_elems(&c->f);
    size_t padded = apsmpi_groups_for(&c->f, n) * g;
    uint64_t nflushed = 0;
    if (w == 8 || w == 16) {
        nflushed = encode_codes(c, in, n, first_index, sc, r.stochastic, key, out);
        if (padded > n)
            memset((uint8_t *)out + n * (size_t)(w / 8), 0, (padded - n) * (size_t)(w / 8));
    } else {
        uint16_t codes[CHUNK];
        uint8_t code8[CHUNK];
        for (size_t i = 0; i < padded; i += CHUNK) {
            size_t len = padded - i < CHUNK ? padded - i : CHUNK;
            size_t real = i < n ? (n - i < len ? n - i : len) : 0;
            if (real == 0) {
            } else if (w < 8) {
                nflushed += encode_codes(c, in + i, real, first_index + i, sc, r.stochastic, key, code8);
                for (size_t j = 0; j < real; j++)
                    codes[j] = code8[j];
            } else {
                nflushed += encode_codes(c, in + i, real, first_index + i, sc, r.stochastic, key, codes);
            }
            memset(codes + real, 0, (len - real) * sizeof codes[0]);
            pack_codes(codes, len / g, (uint8_t *)out + i / g * apsmpi_group_bytes(&c->f), w);
        }
    }
    if (flushed)
        *flushed += nflushed;
}

/* ---- decode ---- */

/* Decodes one run of n codes of type T with one scale through the table: tab[code] times
 * 2^-s, which is one correctly rounded multiplication when 2^-s is a normal float. */
#define DEFINE_DECODE_RUN(NAME, T)                                                            \
    HOT static void NAME(const float *restrict tab, const T *restrict in, size_t n, float p2, \
                         float *restrict out)                                                 \
    {                                                                                         \
        for (size_t j = 0; j < n; j++)                                                        \
            out[j] = tab[in[j]] * p2;                                                         \
    }

DEFINE_DECODE_RUN(decode_run8, uint8_t)
DEFINE_DECODE_RUN(decode_run16, uint16_t)

/* Decodes n codes of one or two bytes each, run by run of equal scale. */
static void decode_codes(const apsmpi_codec *c, const void *in, size_t n, size_t first,
                         apsmpi_scales sc, float *out)
{
    int bytes = c->f.width <= 8 ? 1 : 2;
    for (size_t i = 0; i < n;) {
        size_t len = run_len(sc, first + i, n - i);
        int s = scale_at(sc, first + i);
        const uint8_t *p8 = (const uint8_t *)in + i;
        const uint16_t *p16 = (const uint16_t *)in + i;
        if (s >= -127 && s <= 126) {
            float p2 = apsmpi_u2f((uint32_t)(127 - s) << 23);
            if (bytes == 1)
                decode_run8(c->dec, p8, len, p2, out + i);
            else
                decode_run16(c->dec, p16, len, p2, out + i);
        } else {
            for (size_t j = 0; j < len; j++)
                out[i + j] = apsmpi_decode_one(bytes == 1 ? p8[j] : p16[j], s, &c->f);
        }
        i += len;
    }
}

void apsmpi_decode(const apsmpi_codec *c, const void *in, size_t n, size_t first_index,
                   apsmpi_scales sc, float *out)
{
    int w = c->f.width;
    if (w == 8 || w == 16) {
        decode_codes(c, in, n, first_index, sc, out);
        return;
    }
    size_t g = apsmpi_group_elems(&c->f);
    uint16_t codes[CHUNK];
    uint8_t code8[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t len = n - i < CHUNK ? n - i : CHUNK;
        size_t ng = (len + g - 1) / g;
        unpack_codes((const uint8_t *)in + i / g * apsmpi_group_bytes(&c->f), ng, codes, w);
        if (w < 8) {
            for (size_t j = 0; j < len; j++)
                code8[j] = (uint8_t)codes[j];
            decode_codes(c, code8, len, first_index + i, sc, out + i);
        } else {
            decode_codes(c, codes, len, first_index + i, sc, out + i);
        }
    }
}

/* ---- the packed sum ---- */

/* io[k] = sum[(a[k] << w) | io[k]]: one table lookup per element, codes of at most 8 bits. */
HOT static void sum_run_table(const uint8_t *restrict tab, int w, const uint8_t *restrict a,
                              uint8_t *restrict io, size_t n)
{
    for (size_t k = 0; k < n; k++)
        io[k] = tab[((size_t)a[k] << w) | io[k]];
}

/* The float of a code, unscaled, without tables or branches (so that it vectorises):
 * the same value as apsmpi_decode_one(code, 0, f), NaN payloads aside. With ebits < 8 every
 * finite value is a normal float: the exact float of the integer significand with its
 * exponent field moved; with ebits == 8 the code is the top of the float's bits. */
INLINE float decode_unscaled(uint32_t code, const apsmpi_format *f)
{
    uint32_t sign = (code >> (f->width - 1)) << 31;
    uint32_t c = code & ((1u << (f->width - 1)) - 1u);
    uint32_t mmask = (1u << f->mbits) - 1u;
    uint32_t ef = c >> f->mbits;
    uint32_t normal = apsmpi_mask(ef != 0);
    uint32_t sig = (c & mmask) | ((mmask + 1u) & normal);
    uint32_t k = apsmpi_sel(normal, ef - (uint32_t)f->bias, (uint32_t)f->emin) - (uint32_t)f->mbits;
    uint32_t bits = (apsmpi_f2u((float)(int32_t)sig) + (k << 23)) & apsmpi_mask(sig != 0);
    uint32_t special = apsmpi_sel(apsmpi_mask(c == f->ovf_code && f->kind == APSMPI_KIND_IEEE),
                                  0x7F800000u, 0x7FC00000u);
    bits = apsmpi_sel(apsmpi_mask(c > f->max_code), special, bits);
    bits = f->ebits == 8 ? c << (23 - f->mbits) : bits;
    return apsmpi_u2f(bits | sign);
}

/* io[k] = encode_nearest(decode(a[k]) + decode(io[k])) for 16-bit codes. */
HOT static void sum_run16(const apsmpi_format *fp, const uint16_t *restrict a, uint16_t *restrict io,
                          size_t n)
{
    const apsmpi_format f = *fp;
    for (size_t k = 0; k < n; k++) {
        float x = decode_unscaled(a[k], &f) + decode_unscaled(io[k], &f);
        io[k] = (uint16_t)apsmpi_encode_one(apsmpi_f2u(x), 0, &f, 0, 0);
    }
}

/* The sum of n codes staged in 16-bit arrays, in place in io. */
static void sum_codes16(const apsmpi_codec *c, const uint16_t *a, uint16_t *io, size_t n)
{
    if (c->sum == NULL) {
        sum_run16(&c->f, a, io, n);
        return;
    }
    for (size_t k = 0; k < n; k++)
        io[k] = c->sum[((size_t)a[k] << c->f.width) | io[k]];
}

/* The packed sum for bf16 (e8m7), whose code is the upper half of the float: decoding is a
 * shift, and encoding rounds the lower half to nearest even, a carry running into the
 * exponent and past the largest finite value to inf exactly as apsmpi_encode_one does; a
 * NaN becomes the format's NaN code with its sign. Several times faster than sum_run16. */
HOT static void sum_run_bf16(const uint16_t *restrict a, uint16_t *restrict io, size_t n, uint32_t nan_code)
{
    for (size_t k = 0; k < n; k++) {
        uint32_t u = apsmpi_f2u(apsmpi_u2f((uint32_t)a[k] << 16) + apsmpi_u2f((uint32_t)io[k] << 16));
        uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
        uint32_t nan = nan_code | ((u >> 16) & 0x8000u);
        io[k] = (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
    }
}

static int is_bf16(const apsmpi_format *f)
{
    return f->ebits == 8 && f->mbits == 7 && f->kind == APSMPI_KIND_IEEE;
}

void apsmpi_sum_packed(const apsmpi_codec *c, const void *in, void *inout, size_t ngroups)
{
    int w = c->f.width;
    if (is_bf16(&c->f)) {
        sum_run_bf16(in, inout, ngroups, c->f.nan_code);
        return;
    }
    if (w == 8) {
        sum_run_table(c->sum, w, in, inout, ngroups);
        return;
    }
    if (w == 16) {
        sum_run16(&c->f, in, inout, ngroups);
        return;
    }
    size_t g = apsmpi_group_elems(&c->f), gb = apsmpi_group_bytes(&c->f);
    size_t chunk_groups = CHUNK / g;
    uint16_t a[CHUNK], b[CHUNK];
    for (size_t k = 0; k < ngroups; k += chunk_groups) {
        size_t ng = ngroups - k < chunk_groups ? ngroups - k : chunk_groups;
        const uint8_t *pa = (const uint8_t *)in + k * gb;
        uint8_t *pb = (uint8_t *)inout + k * gb;
        unpack_codes(pa, ng, a, w);
        unpack_codes(pb, ng, b, w);
        sum_codes16(c, a, b, ng * g);
        pack_codes(b, ng, pb, w);
    }
}
