/* codec_mx.h: the host codec of the MX formats (internal to core/codec*.c): buffers of blocks, and the loops per instruction-set level. */
#ifndef APSMPI_CODEC_MX_H
#define APSMPI_CODEC_MX_H

#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/format.h"

/* The loops of one level over whole MX blocks (packing groups: the E8M0 byte, then
 * APSMPI_MX_BLOCK codes bit-packed in 4 * width bytes). Each gives the bits of core/mxconv.h
 * applied block by block, as the scalar level does, and returns how many of the nblocks
 * blocks it did from the start (a vector level does the formats it was written for; the
 * caller does the rest with the scalar level). f: an MX format. */
typedef struct apsmpi_mx_loops {
    const char *name;
    /* blocks of 32 floats at in into packing groups at out, to nearest; if flushed is not
     * NULL, adds the count of non-zero inputs whose code has a zero magnitude */
    size_t (*encode)(const apsmpi_format *f, const float *in, size_t nblocks, uint8_t *out, uint64_t *flushed);
    /* the same, stochastically: element in[j] draws apsmpi_rng_bits(key, idx + j); NULL: none */
    size_t (*encode_sr)(const apsmpi_format *f, const float *in, size_t nblocks, uint64_t key, uint64_t idx,
                        uint8_t *out, uint64_t *flushed);
    /* packing groups into 32 floats each */
    size_t (*decode)(const apsmpi_format *f, const uint8_t *in, size_t nblocks, float *out);
    /* io = the block encoding (to nearest) of decode(a) + decode(io), the addition in float */
    size_t (*sum)(const apsmpi_format *f, const uint8_t *a, uint8_t *io, size_t nblocks);
    /* encode, to nearest, with the measure of its input added to m (apsmpi_encode_measured) */
    size_t (*encode_measured)(const apsmpi_format *f, const float *in, size_t nblocks, uint8_t *out,
                              apsmpi_mx_measure *m);
} apsmpi_mx_loops;

/* The depths (apsmpi_mx_measure) of nblocks blocks at in added to m, but for the flushed count
 * (the portable level's, for stochastic rounding). */
void apsmpi_mx_count_depths(const float *in, size_t nblocks, apsmpi_mx_measure *m);

extern const apsmpi_mx_loops apsmpi_mx_loops_scalar;
#ifdef APSMPI_CODEC_X86
extern const apsmpi_mx_loops apsmpi_mx_loops_avx2;
extern const apsmpi_mx_loops apsmpi_mx_loops_avx512;
#endif

/* The loops of a level (enum apsmpi_codec_isa, not auto) that the codec found supported. */
const apsmpi_mx_loops *apsmpi_mx_loops_of(int isa);

/* apsmpi_encode, apsmpi_decode and apsmpi_sum_packed for an MX format (codec.c calls them,
 * with the caller's FTZ/DAZ modes cleared): n elements from in[0], in[0] starting a block;
 * first_index only keys the random stream of stochastic rounding (no scales come in: every
 * block takes its own). */
void apsmpi_mx_encode(const apsmpi_mx_loops *l, const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                      apsmpi_rounding r, void *out, uint64_t *flushed);
void apsmpi_mx_decode(const apsmpi_mx_loops *l, const apsmpi_format *f, const void *in, size_t n, float *out);
void apsmpi_mx_encode_measured(const apsmpi_mx_loops *l, const apsmpi_format *f, const float *in, size_t n,
                               size_t first_index, apsmpi_rounding r, void *out, apsmpi_mx_measure *m);
void apsmpi_mx_sum_packed(const apsmpi_mx_loops *l, const apsmpi_format *f, const void *in, void *inout,
                          size_t ngroups);

#endif
