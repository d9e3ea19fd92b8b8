/* codec_mx_portable.c: the MX formats' portable loops (the "scalar" level): plain C over blocks of 32 that a compiler vectorises (SSE2, NEON), mxconv.h for stochastic rounding. */
#include "build_config.h"
#include <string.h>
#include "core/codec_mx.h"
#include "core/flush_depth.h"
#include "core/mx_elem.h"
#include "core/mxconv.h"

/* Makefile.am builds this file with -ftree-vectorize, as codec_portable.c: every loop over a
 * block's elements is one element per iteration, selects of values instead of branches,
 * shift counts the same for every element, comparisons of values below 2^31 as signed
 * numbers. The element arithmetic is the vector levels' (codec_mx_simd.c), written element by
 * element, so that every level gives mxconv.h's bits (tests/unit/test_mx checks them against
 * the specification's reference). */

enum { BLOCK = APSMPI_MX_BLOCK };

/* The element constants of the MX format f (mx_elem.h). */
static apsmpi_mx_elem elem_of(const apsmpi_format *f) { return apsmpi_mx_elem_of(f->width, f->mbits, f->kind); }

/* ---- a block's codes to and from its 4 * w bytes, LSB first (w: 8, 6, 5 or 4) ---- */

static void pack_block(const uint32_t *c, int w, uint8_t *out)
{
    if (w == 8) {
        for (int j = 0; j < BLOCK; j++)
            out[j] = (uint8_t)c[j];
    } else if (w == 4) {
        for (int j = 0; j < BLOCK / 2; j++)
            out[j] = (uint8_t)(c[2 * j] | c[2 * j + 1] << 4);
    } else if (w == 5) { /* 8 codes in 5 bytes */
        for (int j = 0; j < BLOCK / 8; j++) {
            uint64_t v = 0;
            for (int i = 0; i < 8; i++)
                v |= (uint64_t)c[8 * j + i] << (5 * i);
            for (int i = 0; i < 5; i++)
                out[5 * j + i] = (uint8_t)(v >> (8 * i));
        }
    } else { /* 6: 4 codes in 3 bytes */
        for (int j = 0; j < BLOCK / 4; j++) {
            uint32_t v = c[4 * j] | c[4 * j + 1] << 6 | c[4 * j + 2] << 12 | c[4 * j + 3] << 18;
            out[3 * j] = (uint8_t)v;
            out[3 * j + 1] = (uint8_t)(v >> 8);
            out[3 * j + 2] = (uint8_t)(v >> 16);
        }
    }
}

static void unpack_block(const uint8_t *in, int w, uint32_t *c)
{
    if (w == 8) {
        for (int j = 0; j < BLOCK; j++)
            c[j] = in[j];
    } else if (w == 4) {
        for (int j = 0; j < BLOCK / 2; j++) {
            c[2 * j] = in[j] & 0x0Fu;
            c[2 * j + 1] = (uint32_t)in[j] >> 4;
        }
    } else if (w == 5) {
        for (int j = 0; j < BLOCK / 8; j++) {
            uint64_t v = 0;
            for (int i = 0; i < 5; i++)
                v |= (uint64_t)in[5 * j + i] << (8 * i);
            for (int i = 0; i < 8; i++)
                c[8 * j + i] = (uint32_t)(v >> (5 * i)) & 0x1Fu;
        }
    } else {
        for (int j = 0; j < BLOCK / 4; j++) {
            uint32_t v = in[3 * j] | (uint32_t)in[3 * j + 1] << 8 | (uint32_t)in[3 * j + 2] << 16;
            c[4 * j] = v & 0x3Fu;
            c[4 * j + 1] = (v >> 6) & 0x3Fu;
            c[4 * j + 2] = (v >> 12) & 0x3Fu;
            c[4 * j + 3] = v >> 18;
        }
    }
}

/* a < b ? x : y for a, b below 2^31, as a select of values (no branch) */
static inline uint32_t sel_lt(uint32_t a, uint32_t b, uint32_t x, uint32_t y)
{
    return apsmpi_sel(apsmpi_mask((int32_t)a < (int32_t)b), x, y);
}

/* ---- blocks ---- */

/* The largest magnitude's bits of the block at in. */
static uint32_t block_max(const float *in)
{
    uint32_t m = 0;
    for (int j = 0; j < BLOCK; j++) {
        uint32_t a = apsmpi_f2u(in[j]) & 0x7FFFFFFFu;
        m = a > m ? a : m;
    }
    return m;
}

/* The scale byte of the block at in (mxconv.h), from its largest magnitude's bits. */
static uint32_t block_scale(const float *in, const apsmpi_mx_elem *k)
{
    return apsmpi_mx_scale_of(block_max(in), k->emax);
}

/* A block's counts of apsmpi_mx_measure (but the flushed one), one element at a time: a value
 * of bits a (sign cleared) lies apsmpi_value_depth (core/flush_depth.h) below top. */
typedef struct depth_counts {
    uint32_t nonzero, deep[APSMPI_DEPTH_BINS];
} depth_counts;

static inline void count_depth(uint32_t a, int32_t top, const int32_t *depth, depth_counts *c)
{
    int32_t d = apsmpi_value_depth(a, top);
    uint32_t z = a != 0;
    c->nonzero += z;
    for (int i = 0; i < APSMPI_DEPTH_BINS; i++)
        c->deep[i] += z & (d >= depth[i]);
}

static void add_depth_counts(const depth_counts *c, apsmpi_mx_measure *m)
{
    m->count[APSMPI_COUNT_NONZERO] += c->nonzero;
    for (int i = 0; i < APSMPI_DEPTH_BINS; i++)
        m->count[APSMPI_COUNT_DEEP + i] += c->deep[i];
}

void apsmpi_mx_count_depths(const float *in, size_t nblocks, apsmpi_mx_measure *m)
{
    for (size_t b = 0; b < nblocks; b++) {
        uint32_t bits[BLOCK];
        memcpy(bits, in + b * BLOCK, sizeof bits);
        apsmpi_block_depth_counts(bits, BLOCK, &m->bins, m->count);
    }
}

/* One block into its packing group at out, to nearest (the vector levels' encode_mag: a
 * normal element rounds y's bits at sh bits, a subnormal one is y + magic, rounded by the
 * addition; saturated at max_code); returns the non-zero inputs whose code is zero. With m,
 * the block's depths are counted into it in the same loop (apsmpi_mx_measure). */
static inline __attribute__((always_inline)) uint32_t encode_block(const float *in, const apsmpi_mx_elem *k,
                                                                   uint8_t *out, apsmpi_mx_measure *m)
{
    uint32_t amax = block_max(in), E = apsmpi_mx_scale_of(amax, k->emax), codes[BLOCK], flushed = 0;
    const int32_t top = apsmpi_block_top(amax);
    const int32_t depth[APSMPI_DEPTH_BINS] = {m ? m->bins.depth[0] : 0, m ? m->bins.depth[1] : 0,
                                              m ? m->bins.depth[2] : 0, m ? m->bins.depth[3] : 0};
    depth_counts c = {0, {0}};
    out[0] = (uint8_t)E;
    if (E == APSMPI_MX_SCALE_NAN) {
        memset(out + 1, 0, 4 * (size_t)(k->w1 + 1));
        for (int j = 0; m && j < BLOCK; j++)
            count_depth(apsmpi_f2u(in[j]) & 0x7FFFFFFFu, top, depth, &c);
        if (m)
            add_depth_counts(&c, m);
        return 0;
    }
    const float p2 = apsmpi_u2f((254u - E) << 23); /* 1 / X = 2^(127 - E), a normal float */
    const float magic = apsmpi_u2f(k->magic);
    for (int j = 0; j < BLOCK; j++) {
        uint32_t x = apsmpi_f2u(in[j]), ax = x & 0x7FFFFFFFu;
        float y = apsmpi_u2f(ax) * p2;
        uint32_t yb = apsmpi_f2u(y);
        uint32_t normal = ((yb + k->half + ((yb >> k->sh) & 1u)) >> k->sh) - k->k2;
        uint32_t subnormal = apsmpi_f2u(y + magic) - k->magic;
        uint32_t mag = sel_lt(yb, k->thr, subnormal, normal);
        mag = mag < k->max_code ? mag : k->max_code;
        flushed += (mag == 0) & (ax != 0);
        codes[j] = mag | ((x >> (31 - k->w1)) & k->signbit);
        if (m)
            count_depth(ax, top, depth, &c);
    }
    pack_block(codes, k->w1 + 1, out + 1);
    if (m)
        add_depth_counts(&c, m);
    return flushed;
}

/* The same, stochastically, element by element (mxconv.h); element j draws (key, idx + j). */
static uint32_t encode_block_sr(const apsmpi_format *f, const float *in, const apsmpi_mx_elem *k, uint64_t key,
                                uint64_t idx, uint8_t *out)
{
    uint32_t E = block_scale(in, k), codes[BLOCK], flushed = 0;
    for (int j = 0; j < BLOCK; j++) {
        uint32_t x = apsmpi_f2u(in[j]);
        codes[j] =
            E == APSMPI_MX_SCALE_NAN ? 0 : apsmpi_mx_encode_one(x, E, f, 1, apsmpi_rng_bits(key, idx + (uint64_t)j));
        /* a NaN block's elements are NaN, not flushed */
        flushed += ((codes[j] & k->magmask) == 0) & ((x << 1) != 0) & (E != APSMPI_MX_SCALE_NAN);
    }
    out[0] = (uint8_t)E;
    pack_block(codes, k->w1 + 1, out + 1);
    return flushed;
}

/* The packing group at in into 32 floats (the vector levels' decode_mag: the code moved into
 * a float's bit positions and rebiased, a subnormal one's 2^emin taken off, times the scale). */
static void decode_block(const uint8_t *in, const apsmpi_mx_elem *k, float *out)
{
    uint32_t codes[BLOCK], E = in[0];
    const float p2 = apsmpi_mx_scale_value(E);
    unpack_block(in + 1, k->w1 + 1, codes);
    for (int j = 0; j < BLOCK; j++) {
        uint32_t c = codes[j] & k->magmask, sub = apsmpi_mask(c < (1u << k->mbits));
        float v = apsmpi_u2f((c << k->sh) + k->rebias + (sub & (1u << 23))) - apsmpi_u2f(sub & k->thr);
        uint32_t r = apsmpi_f2u(v * p2);
        if (k->specials) /* E4M3's NaN code, E5M2's inf and NaN codes */
            r = apsmpi_sel(apsmpi_mask(c > k->max_code), c == k->ovf_code ? k->special_ovf : 0x7FC00000u, r);
        out[j] = apsmpi_u2f(r | ((codes[j] << (31 - k->w1)) & 0x80000000u));
    }
    if (E == APSMPI_MX_SCALE_NAN)
        for (int j = 0; j < BLOCK; j++)
            out[j] = apsmpi_u2f(0x7FC00000u);
}

/* ---- the level's loops ---- */

static size_t encode_scalar(const apsmpi_format *f, const float *in, size_t nblocks, uint8_t *out, uint64_t *flushed)
{
    const apsmpi_mx_elem k = elem_of(f);
    size_t gb = apsmpi_group_bytes(f);
    uint64_t n = 0;
    for (size_t b = 0; b < nblocks; b++)
        n += encode_block(in + b * BLOCK, &k, out + b * gb, NULL);
    if (flushed)
        *flushed += n;
    return nblocks;
}

static size_t encode_sr_scalar(const apsmpi_format *f, const float *in, size_t nblocks, uint64_t key, uint64_t idx,
                               uint8_t *out, uint64_t *flushed)
{
    const apsmpi_mx_elem k = elem_of(f);
    size_t gb = apsmpi_group_bytes(f);
    uint64_t n = 0;
    for (size_t b = 0; b < nblocks; b++)
        n += encode_block_sr(f, in + b * BLOCK, &k, key, idx + b * BLOCK, out + b * gb);
    if (flushed)
        *flushed += n;
    return nblocks;
}

static size_t decode_scalar(const apsmpi_format *f, const uint8_t *in, size_t nblocks, float *out)
{
    const apsmpi_mx_elem k = elem_of(f);
    size_t gb = apsmpi_group_bytes(f);
    for (size_t b = 0; b < nblocks; b++)
        decode_block(in + b * gb, &k, out + b * BLOCK);
    return nblocks;
}

static size_t sum_scalar(const apsmpi_format *f, const uint8_t *a, uint8_t *io, size_t nblocks)
{
    const apsmpi_mx_elem k = elem_of(f);
    size_t gb = apsmpi_group_bytes(f);
    float x[BLOCK], y[BLOCK];
    for (size_t b = 0; b < nblocks; b++) {
        decode_block(a + b * gb, &k, x);
        decode_block(io + b * gb, &k, y);
        for (int j = 0; j < BLOCK; j++)
            x[j] += y[j];
        encode_block(x, &k, io + b * gb, NULL);
    }
    return nblocks;
}

static size_t encode_measured_scalar(const apsmpi_format *f, const float *in, size_t nblocks, uint8_t *out,
                                     apsmpi_mx_measure *m)
{
    const apsmpi_mx_elem k = elem_of(f);
    size_t gb = apsmpi_group_bytes(f);
    for (size_t b = 0; b < nblocks; b++)
        m->count[APSMPI_COUNT_FLUSHED] += encode_block(in + b * BLOCK, &k, out + b * gb, m);
    return nblocks;
}

const apsmpi_mx_loops apsmpi_mx_loops_scalar = {"scalar",      encode_scalar, encode_sr_scalar,
                                                decode_scalar, sum_scalar,    encode_measured_scalar};
