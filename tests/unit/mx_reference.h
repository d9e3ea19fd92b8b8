/* mx_reference.h: an independent, slow reference of the OCP MX v1.0 formats for the tests (shares no code with mxconv.h, fpconv.h or codec_mx*.c). */
#ifndef APSMPI_TEST_MX_REFERENCE_H
#define APSMPI_TEST_MX_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* An element format as the specification describes it: fields, bias, which codes are special,
 * and the constants it states (largest normal, smallest subnormal), with the value of every
 * magnitude code computed from the definition in double. */
typedef struct mxref_elem {
    const char *mx_name; /* the apsmpi name of the MX format with this element */
    int ebits, mbits, bias;
    int nan_all_ones;  /* FP8 E4M3: S.1111.111 is NaN, nothing is inf */
    int ieee_specials; /* FP8 E5M2: exponent all ones is inf (mantissa 0) or NaN */
    double stated_max, stated_min_subnormal;
    int width;         /* 1 + ebits + mbits */
    int emax;          /* exponent of the largest normal */
    uint32_t max_mag;  /* magnitude code of the largest finite value */
    double value[128]; /* value[c] of magnitude code c, NAN / INFINITY for special codes */
} mxref_elem;

/* The five element formats: 0 FP8 E4M3, 1 FP8 E5M2, 2 FP6 E3M2, 3 FP6 E2M3, 4 FP4 E2M1. */
enum { MXREF_NFORMATS = 6 };
const mxref_elem *mxref_format(int i);

/* The value of a code (sign bit included). */
double mxref_value(const mxref_elem *e, uint32_t code);

/* The scale of a block of 32 floats: X = 2^(floor(log2 max|v|) - emax), at least 2^-127;
 * its E8M0 byte (X = 2^(byte - 127)); 255 (NaN) for a block holding inf or NaN; an all-zero
 * block as if its maximum were 2^-126. */
uint8_t mxref_scale(const mxref_elem *e, const float *block);

/* The element code of v / X, X = 2^(scale - 127): the nearest value (ties to the code whose
 * last bit is 0), a finite value beyond the largest normal saturating to it, v's sign kept
 * (also for zero). With rnd_valid, stochastically: up iff rnd + floor(p * 2^32) >= 2^32, p the
 * position of |v / X| between its two neighbours. */
uint32_t mxref_quantize(const mxref_elem *e, float v, uint8_t scale, int rnd_valid, uint32_t rnd);

/* The float of a code in a block of this scale: value * X rounded once (NaN for scale 255). */
float mxref_decode(const mxref_elem *e, uint32_t code, uint8_t scale);

/* A whole MX buffer: n floats into ceil(n / 32) blocks, each its scale byte and then 32 codes
 * laid bit by bit, LSB first (the tail of the last block zero codes, zeros taking no part in
 * its scale); returns the bytes written. rnd: NULL, or n random words for stochastic rounding. */
size_t mxref_encode(const mxref_elem *e, const float *in, size_t n, const uint32_t *rnd, uint8_t *out);
/* Reads code j of a block (after its scale byte), bit by bit. */
uint32_t mxref_code(const mxref_elem *e, const uint8_t *block, int j);

#endif
