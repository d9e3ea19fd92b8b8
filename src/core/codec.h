/* codec.h: buffer-level conversion between float and a packed low-precision format, and the packed sum. */
#ifndef APSMPI_CODEC_H
#define APSMPI_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include "core/flush_depth.h"
#include "core/format.h"

/* A format together with the lookup tables built for it once. Immutable after creation:
 * safe to use from several threads at once. */
typedef struct apsmpi_codec apsmpi_codec;

apsmpi_codec *apsmpi_codec_create(const apsmpi_format *f); /* NULL on allocation failure */

/* The instruction-set levels of the codec's loops. Every level gives the same bits; auto is
 * the fastest one this build and this CPU have, chosen once. APSMPI_CODEC_ISA forces one. */
enum apsmpi_codec_isa { APSMPI_ISA_AUTO = 0, APSMPI_ISA_SCALAR, APSMPI_ISA_AVX2, APSMPI_ISA_AVX512, APSMPI_ISA_COUNT };
int apsmpi_codec_isa_parse(
    const char *name); /* "auto", "scalar", "avx2" (with F16C and FMA), "avx512" (F, BW, VL, DQ); -1 if none */
const char *apsmpi_codec_isa_name(int isa);
int apsmpi_codec_isa_supported(int isa); /* compiled in and the CPU has it */
int apsmpi_codec_isa_best(void);         /* what auto means here */
/* A codec whose loops are those of the level isa; NULL if unsupported or out of memory. */
apsmpi_codec *apsmpi_codec_create_isa(const apsmpi_format *f, int isa);
const char *apsmpi_codec_isa_of(const apsmpi_codec *c); /* the level it runs: never "auto" */
void apsmpi_codec_free(apsmpi_codec *c);
const apsmpi_format *apsmpi_codec_format(const apsmpi_codec *c);

/* Rounding of the encoder. Stochastic rounding draws 32 random bits per element from a
 * counter-based generator keyed by (seed, call, element index): the same inputs give the
 * same bits on every run, on every rank and on the CPU and GPU alike. */
typedef struct apsmpi_rounding {
    int stochastic; /* 0: round to nearest, ties to even; 1: stochastic */
    uint64_t seed;
    uint64_t call; /* a per-call counter, so successive calls draw different bits */
} apsmpi_rounding;

/* Power-of-two scales, one per block of block_len elements of a buffer. Element i of the
 * whole buffer is multiplied by 2^scale[i / block_len] before encoding and divided by it
 * after decoding. scale == NULL means no scaling. */
typedef struct apsmpi_scales {
    const int16_t *scale;
    size_t block_len;
} apsmpi_scales;

/* Encodes in[0..n) into packed groups at out: apsmpi_groups_for(f, n) groups, the tail of
 * the last one filled with zero codes. first_index is the index of in[0] in the whole
 * buffer: it selects the blocks' scales and the random stream. If flushed is not NULL, the
 * number of non-zero inputs whose code is zero is added to it. An MX format
 * (core/mx_format.h) takes no scales (sc is not read): each block of 32 elements from in[0]
 * is encoded with its own E8M0 scale, which its packing group carries. */
void apsmpi_encode(const apsmpi_codec *c, const float *in, size_t n, size_t first_index, apsmpi_scales sc,
                   apsmpi_rounding r, void *out, uint64_t *flushed);

/* APSMPI_FORMAT=auto's measure of an MX format's encoding (core/width_controller.h fills the
 * depths from its ladder and adds the counts to its apsmpi_flush_measure), exact, over every
 * block of 32 from in[0], in flush_depth.h's counters (the GPU's measuring encode counts the
 * same, in the same order): the non-zero inputs (APSMPI_COUNT_NONZERO); those whose code is
 * zero, as apsmpi_encode counts them (APSMPI_COUNT_FLUSHED); and for each depth D =
 * bins.depth[i], those whose depth below their block's top is at least D (APSMPI_COUNT_DEEP +
 * i), d = field(max |block|) - field(|v|) - (v's mantissa != 0) with field the float's
 * exponent field (apsmpi_flush_depths' d: floor(log2 max) - ceil(log2 |v|) for normal floats).
 * A depth above 254 counts nothing. */
typedef struct apsmpi_mx_measure {
    apsmpi_depth_bins bins;                  /* in: the depths D, 1 .. 256 */
    uint64_t count[APSMPI_MEASURE_COUNTERS]; /* added to */
} apsmpi_mx_measure;

/* apsmpi_encode of an MX format (the codec's format must be one) with its measure added to m,
 * in the same pass over the input: the same bytes as apsmpi_encode, the same counts at every
 * instruction-set level. */
void apsmpi_encode_measured(const apsmpi_codec *c, const float *in, size_t n, size_t first_index, apsmpi_rounding r,
                            void *out, apsmpi_mx_measure *m);

/* Decodes n elements from packed groups at in into out, dividing by the scales (an MX
 * format: by the scales its groups carry). The result is rounded once, to float, as an exact
 * division would be. */
void apsmpi_decode(const apsmpi_codec *c, const void *in, size_t n, size_t first_index, apsmpi_scales sc, float *out);

/* The reduction: inout[k] = encode_nearest(decode(in[k]) + decode(inout[k])) for every
 * element of ngroups packed groups, the addition in float (an MX format: each block's sum
 * encoded with a scale of its own). */
void apsmpi_sum_packed(const apsmpi_codec *c, const void *in, void *inout, size_t ngroups);

#endif
