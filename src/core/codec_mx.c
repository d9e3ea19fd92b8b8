/* codec_mx.c: the MX formats' buffer codec: whole blocks through a level's loops, the scalar level (codec_mx_portable.c) for the rest and the tail. */
#include "build_config.h"
#include <string.h>
#include "core/codec_mx.h"
#include "core/mxconv.h"

enum { BLOCK = APSMPI_MX_BLOCK };

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
        apsmpi_mx_loops_scalar.encode_sr(f, in + done * BLOCK, full - done, key, first_index + done * BLOCK,
                                         o + done * gb, flushed);
    } else {
        done = l->encode(f, in, full, o, flushed);
        apsmpi_mx_loops_scalar.encode(f, in + done * BLOCK, full - done, o + done * gb, flushed);
    }
    if (rest) { /* the tail of the last block: zeros, which do not raise its maximum */
        float tail[BLOCK] = {0};
        memcpy(tail, in + full * BLOCK, rest * sizeof *tail);
        if (r.stochastic)
            apsmpi_mx_loops_scalar.encode_sr(f, tail, 1, key, first_index + full * BLOCK, o + full * gb, flushed);
        else
            apsmpi_mx_loops_scalar.encode(f, tail, 1, o + full * gb, flushed);
    }
}

void apsmpi_mx_encode_measured(const apsmpi_mx_loops *l, const apsmpi_format *f, const float *in, size_t n,
                               size_t first_index, apsmpi_rounding r, void *out, apsmpi_mx_measure *m)
{
    size_t full = n / BLOCK, rest = n % BLOCK, gb = apsmpi_group_bytes(f), done;
    uint8_t *o = out;

    if (r.stochastic) { /* the flushed count is the stochastic encode's; the depths do not depend on it */
        apsmpi_mx_encode(l, f, in, n, first_index, r, out, &m->count[APSMPI_COUNT_FLUSHED]);
        apsmpi_mx_count_depths(in, full, m);
    } else {
        done = l->encode_measured(f, in, full, o, m);
        apsmpi_mx_loops_scalar.encode_measured(f, in + done * BLOCK, full - done, o + done * gb, m);
    }
    if (rest) { /* the tail of the last block: zeros, which count neither as non-zero nor as deep */
        float tail[BLOCK] = {0};
        memcpy(tail, in + full * BLOCK, rest * sizeof *tail);
        if (r.stochastic)
            apsmpi_mx_count_depths(tail, 1, m);
        else
            apsmpi_mx_loops_scalar.encode_measured(f, tail, 1, o + full * gb, m);
    }
}

void apsmpi_mx_decode(const apsmpi_mx_loops *l, const apsmpi_format *f, const void *in, size_t n, float *out)
{
    size_t full = n / BLOCK, rest = n % BLOCK, gb = apsmpi_group_bytes(f);
    const uint8_t *p = in;
    size_t done = l->decode(f, p, full, out);

    apsmpi_mx_loops_scalar.decode(f, p + done * gb, full - done, out + done * BLOCK);
    if (rest) {
        float tail[BLOCK];
        apsmpi_mx_loops_scalar.decode(f, p + full * gb, 1, tail);
        memcpy(out + full * BLOCK, tail, rest * sizeof *tail);
    }
}

void apsmpi_mx_sum_packed(const apsmpi_mx_loops *l, const apsmpi_format *f, const void *in, void *inout, size_t ngroups)
{
    size_t gb = apsmpi_group_bytes(f), done = l->sum(f, in, inout, ngroups);
    apsmpi_mx_loops_scalar.sum(f, (const uint8_t *)in + done * gb, (uint8_t *)inout + done * gb, ngroups - done);
}
