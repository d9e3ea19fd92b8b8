/* flush_depth.h: APSMPI_FORMAT=auto's depth of a value below its block's largest, and the bins a measuring encode counts it in, for host and CUDA. */
#ifndef APSMPI_FLUSH_DEPTH_H
#define APSMPI_FLUSH_DEPTH_H

/* Written once, like fpconv.h, for the host (core/width_controller.c's histogram, the mock GPU
 * of the tests) and the CUDA MX encode that measures as it encodes (kernels/codec_mx_device.h),
 * so that a GPU bucket's counts are the host's, integer for integer. The depth of a non-zero
 * value v in a block of 32 is d = floor(log2 max|block|) - ceil(log2 |v|), computed from the
 * float bits as the host histogram computes it: the block's largest exponent field, less v's,
 * less one when v's mantissa bits are not all zero. */

#include <stdint.h>
#include "core/fpconv.h" /* APSMPI_HD */

/* The bins a measuring encode counts: one per rung of the ladder below FP32, at most. */
#define APSMPI_DEPTH_BINS 4
/* The start of a bin that no depth reaches (an unused bin). */
#define APSMPI_DEPTH_NONE 256

/* Bin k counts the non-zero values whose depth is depth[k] or more; given at run time (the
 * ladder's flush depths, core/width_controller.h), unused bins APSMPI_DEPTH_NONE. */
typedef struct apsmpi_depth_bins {
    int32_t depth[APSMPI_DEPTH_BINS];
} apsmpi_depth_bins;

/* The counters of a measuring encode, 64-bit integers in this order: the non-zero inputs, those
 * whose code has a zero magnitude (flushed), then bin k's count at APSMPI_COUNT_DEEP + k. */
enum {
    APSMPI_COUNT_NONZERO = 0,
    APSMPI_COUNT_FLUSHED = 1,
    APSMPI_COUNT_DEEP = 2,
    APSMPI_MEASURE_COUNTERS = APSMPI_COUNT_DEEP + APSMPI_DEPTH_BINS
};

/* The exponent field of a block's largest magnitude, from the largest of its values' bits with
 * the sign cleared (their order is the magnitudes' order, inf and NaN above all). */
APSMPI_HD static inline int32_t apsmpi_block_top(uint32_t amax_bits) { return (int32_t)(amax_bits >> 23); }

/* The depth of the value whose bits without the sign are abs_bits in a block of top
 * apsmpi_block_top (meaningful for a non-zero value). */
APSMPI_HD static inline int32_t apsmpi_value_depth(uint32_t abs_bits, int32_t top)
{
    return top - (int32_t)(abs_bits >> 23) - (int32_t)((abs_bits & 0x7FFFFFu) != 0);
}

/* Adds one block of len <= 32 values (float bits) to counts[APSMPI_COUNT_NONZERO] and to the bins'
 * counts at counts[APSMPI_COUNT_DEEP + k] (the flushed count is the encoder's). */
APSMPI_HD static inline void apsmpi_block_depth_counts(const uint32_t *bits, int len, const apsmpi_depth_bins *bins,
                                                       uint64_t *counts)
{
    uint32_t amax = 0;
    for (int i = 0; i < len; i++) {
        uint32_t a = bits[i] & 0x7FFFFFFFu;
        amax = a > amax ? a : amax;
    }
    const int32_t top = apsmpi_block_top(amax);
    for (int i = 0; i < len; i++) {
        uint32_t a = bits[i] & 0x7FFFFFFFu;
        int32_t d = apsmpi_value_depth(a, top);
        uint64_t z = a != 0;
        counts[APSMPI_COUNT_NONZERO] += z;
        for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
            counts[APSMPI_COUNT_DEEP + k] += z & (uint64_t)(d >= bins->depth[k]);
    }
}

#endif
