/* codec_mx.c: the MX formats' buffer codec (blocks, the tail, the level's loops) and its portable loops (the "scalar" level). */
#include "build_config.h"
#include <string.h>
#include "core/codec_mx.h"
#include "core/mxconv.h"

enum { BLOCK = APSMPI_MX_BLOCK };

/* ---- the scalar level: core/mxconv.h element by element ---- */

/* The 32 codes (width w <= 8) of a block LSB first into its 4 * w bytes. */
static void pack_block(const uint32_t *codes, int w, uint8_t *out)
{
    uint64_t acc = 0;
    int bits = 0;
    for (int j = 0; j < BLOCK; j++) {
        acc |= (uint64_t)codes[j] << bits;
        bits += w;
        while (bits >= 8) {
            *out++ = (uint8_t)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
}

static void unpack_block(const uint8_t *in, int w, uint32_t *codes)
{
    uint64_t acc = 0;
    int bits = 0;
    for (int j = 0; j < BLOCK; j++) {
        while (bits < w) {
            acc |= (uint64_t)*in++ << bits;
            bits += 8;
        }
        codes[j] = (uint32_t)acc & ((1u << w) - 1u);
        acc >>= w;
        bits -= w;
    }
}

/* The largest magnitude's bits of a block (inf and NaN above every finite value). */
static uint32_t block_amax(const float *in)
{
    uint32_t m = 0;
    for (int j = 0; j < BLOCK; j++) {
        uint32_t a = apsmpi_f2u(in[j]) & 0x7FFFFFFFu;
        m = a > m ? a : m;
    }
    return m;
}

/* One block into its packing group; stochastic with bits from (key, idx + j). */
static uint64_t encode_block(const apsmpi_format *f, const float *in, int stochastic, uint64_t key, uint64_t idx,
                             uint8_t *out)
{
    uint32_t E = apsmpi_mx_scale_of(block_amax(in), f->emax), codes[BLOCK];
    uint32_t magmask = (1u << (f->width - 1)) - 1u;
    uint64_t flushed = 0;
    for (int j = 0; j < BLOCK; j++) {
        uint32_t x = apsmpi_f2u(in[j]);
        uint32_t rnd = stochastic ? apsmpi_rng_bits(key, idx + (uint64_t)j) : 0;
        codes[j] = E == APSMPI_MX_SCALE_NAN ? 0 : apsmpi_mx_encode_one(x, E, f, stochastic, rnd);
        /* a NaN block's elements are NaN, not flushed */
        flushed += ((codes[j] & magmask) == 0) & ((x << 1) != 0) & (E != APSMPI_MX_SCALE_NAN);
    }
    out[0] = (uint8_t)E;
    pack_block(codes, f->width, out + 1);
    return flushed;
}

static size_t encode_scalar(const apsmpi_format *f, const float *in, size_t nblocks, uint8_t *out, uint64_t *flushed)
{
    size_t gb = apsmpi_group_bytes(f);
    uint64_t n = 0;
    for (size_t b = 0; b < nblocks; b++)
        n += encode_block(f, in + b * BLOCK, 0, 0, 0, out + b * gb);
    if (flushed)
        *flushed += n;
    return nblocks;
}

static size_t encode_sr_scalar(const apsmpi_format *f, const float *in, size_t nblocks, uint64_t key, uint64_t idx,
                               uint8_t *out, uint64_t *flushed)
{
    size_t gb = apsmpi_group_bytes(f);
    uint64_t n = 0;
    for (size_t b = 0; b < nblocks; b++)
        n += encode_block(f, in + b * BLOCK, 1, key, idx + b * BLOCK, out + b * gb);
    if (flushed)
        *flushed += n;
    return nblocks;
}

static void decode_block(const apsmpi_format *f, const uint8_t *in, float *out)
{
    uint32_t codes[BLOCK];
    unpack_block(in + 1, f->width, codes);
    for (int j = 0; j < BLOCK; j++)
        out[j] = apsmpi_mx_decode_one(codes[j], in[0], f);
}

static size_t decode_scalar(const apsmpi_format *f, const uint8_t *in, size_t nblocks, float *out)
{
    size_t gb = apsmpi_group_bytes(f);
    for (size_t b = 0; b < nblocks; b++)
        decode_block(f, in + b * gb, out + b * BLOCK);
    return nblocks;
}

static size_t sum_scalar(const apsmpi_format *f, const uint8_t *a, uint8_t *io, size_t nblocks)
{
    size_t gb = apsmpi_group_bytes(f);
    float x[BLOCK], y[BLOCK];
    for (size_t b = 0; b < nblocks; b++) {
        decode_block(f, a + b * gb, x);
        decode_block(f, io + b * gb, y);
        for (int j = 0; j < BLOCK; j++)
            x[j] += y[j];
        encode_block(f, x, 0, 0, 0, io + b * gb);
    }
    return nblocks;
}

const apsmpi_mx_loops apsmpi_mx_loops_scalar = {"scalar", encode_scalar, encode_sr_scalar, decode_scalar, sum_scalar};

const apsmpi_mx_loops *apsmpi_mx_loops_of(int isa)
{
    switch (isa) {
#ifdef APSMPI_CODEC_X86
    case APSMPI_ISA_AVX2:
        return &apsmpi_mx_loops_avx2;
    case APSMPI_ISA_AVX512:
        return &apsmpi_mx_loops_avx512;
#endif
    default:
        return &apsmpi_mx_loops_scalar;
    }
}

/* ---- buffers: whole blocks through the level's loops (the scalar level finishes what they
 * leave), a partial last block here ---- */

void apsmpi_mx_encode(const apsmpi_mx_loops *l, const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                      apsmpi_rounding r, void *out, uint64_t *flushed)
{
    size_t full = n / BLOCK, rest = n % BLOCK, gb = apsmpi_group_bytes(f), done;
    uint64_t key = apsmpi_rng_key(r.seed, r.call);
    uint8_t *o = out;

    if (r.stochastic) {
        done = l->encode_sr ? l->encode_sr(f, in, full, key, first_index, o, flushed) : 0;
        encode_sr_scalar(f, in + done * BLOCK, full - done, key, first_index + done * BLOCK, o + done * gb, flushed);
    } else {
        done = l->encode(f, in, full, o, flushed);
        encode_scalar(f, in + done * BLOCK, full - done, o + done * gb, flushed);
    }
    if (rest) { /* the tail of the last block: zeros, which take no part in its maximum */
        float tail[BLOCK] = {0};
        memcpy(tail, in + full * BLOCK, rest * sizeof *tail);
        uint64_t n_tail = encode_block(f, tail, r.stochastic, key, first_index + full * BLOCK, o + full * gb);
        if (flushed)
            *flushed += n_tail;
    }
}

void apsmpi_mx_decode(const apsmpi_mx_loops *l, const apsmpi_format *f, const void *in, size_t n, float *out)
{
    size_t full = n / BLOCK, rest = n % BLOCK, gb = apsmpi_group_bytes(f);
    const uint8_t *p = in;
    size_t done = l->decode(f, p, full, out);

    decode_scalar(f, p + done * gb, full - done, out + done * BLOCK);
    if (rest) {
        float tail[BLOCK];
        decode_block(f, p + full * gb, tail);
        memcpy(out + full * BLOCK, tail, rest * sizeof *tail);
    }
}

void apsmpi_mx_sum_packed(const apsmpi_mx_loops *l, const apsmpi_format *f, const void *in, void *inout, size_t ngroups)
{
    size_t gb = apsmpi_group_bytes(f), done = l->sum(f, in, inout, ngroups);
    sum_scalar(f, (const uint8_t *)in + done * gb, (uint8_t *)inout + done * gb, ngroups - done);
}
