/* reference.h: an independent, slow reference for the codec tests (shares no code with fpconv.h/codec.c). */
#ifndef APSMPI_TEST_REFERENCE_H
#define APSMPI_TEST_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* A format described only by its fields, with the table of its finite non-negative values. */
typedef struct ref_format {
    int ebits, mbits, fn; /* fn: OCP E4M3FN-style (no inf, all-ones code is the only NaN) */
    int width;
    uint32_t max_code; /* largest finite magnitude code */
    uint32_t ovf_code; /* what overflow gives: inf, or NaN for fn */
    uint32_t nan_code; /* canonical NaN magnitude code (inf when mbits == 0 and not fn) */
    double *values;    /* values[c] for magnitude codes c = 0..max_code, increasing */
    double beyond;     /* the next value above the largest finite one, if the exponent
                           * range were unbounded */
} ref_format;

int ref_format_init(ref_format *r, int ebits, int mbits, int fn); /* 0, or -1 */
void ref_format_free(ref_format *r);

/* The value of a code (sign bit included): a double, inf or NaN. */
double ref_value(const ref_format *r, uint32_t code);
/* value(code) / 2^s rounded once to float. */
float ref_decode(const ref_format *r, uint32_t code, int s);
/* x * 2^s to nearest, ties to the even code; overflow after rounding to ovf_code. */
uint32_t ref_encode_nearest(const ref_format *r, float x, int s);
/* x * 2^s stochastically with random bits rnd: rounds up iff rnd + floor(p * 2^32) >= 2^32,
 * p = (|v| - a) / (b - a) for the neighbours a <= |v| < b. */
uint32_t ref_encode_stochastic(const ref_format *r, float x, int s, uint32_t rnd);
/* For finite x*2^s: the neighbour codes lo <= |x*2^s| < hi (magnitude codes; hi may be
 * max_code + 1 meaning overflow) and the exact probability of rounding up. */
double ref_round_up_probability(const ref_format *r, float x, int s, uint32_t *lo, uint32_t *hi);
/* The documented counter-based random bits of (seed, call, index). */
uint32_t ref_rng_bits(uint64_t seed, uint64_t call, uint64_t index);

/* Writes n codes of width w LSB-first into out (whole groups; tail padded with zero codes),
 * bit by bit; returns the number of bytes written. */
size_t ref_pack(const uint32_t *codes, size_t n, int w, size_t group_elems, uint8_t *out);
/* Reads code k of width w from a bit stream. */
uint32_t ref_unpack_one(const uint8_t *in, size_t k, int w);

#endif
