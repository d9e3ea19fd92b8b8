/* test_codec_common.h: what the codec tests share: their random numbers, inputs and codes, and float bits. */
#ifndef APSMPI_TEST_CODEC_COMMON_H
#define APSMPI_TEST_CODEC_COMMON_H

#include <stdint.h>
#include "core/format.h"
#include "reference.h"

uint64_t rand64(void);        /* xorshift64*: the tests' own random numbers */
int rand_int(int lo, int hi); /* uniform in [lo, hi] */
uint32_t f2u(float x);
float u2f(uint32_t u);

/* A random float for scale s: a quarter of the time any bit pattern, else a value whose
 * product with 2^s falls in or near the format's range. */
float random_input_for(const apsmpi_format *f, int s);

/* A random code of the format, a tenth of the time a special one (zero, the largest
 * finite, overflow, NaN, the smallest subnormal), either sign. */
uint32_t random_code(const apsmpi_format *f, const ref_format *r);

#endif
