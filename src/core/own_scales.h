/* own_scales.h: the scales of values that are encoded once after summing, each block scaled from its own maximum. */
#ifndef APSMPI_OWN_SCALES_H
#define APSMPI_OWN_SCALES_H

#include <stddef.h>
#include <stdint.h>
#include "core/format.h"

/* x[0..n) is a stretch of a buffer cut into blocks of block_len elements, x[0] being element
 * `offset` (< block_len) of its block. The number of blocks the stretch touches. */
size_t apsmpi_own_scale_count(size_t n, size_t offset, size_t block_len);

/* One power-of-two scale per block the stretch touches (apsmpi_own_scale_count of them), from
 * the largest magnitude of the stretch's own elements of that block: s = emax - ceil(log2 max), so
 * that the largest value maps to at most 2^emax and nothing overflows; no headroom, since
 * these values are never summed in the format. An all-zero block gets scale 0, and so would
 * one holding inf or NaN, which an owner's sum never does: the agreement sends in FP32 every
 * call with an inf or NaN, or whose sums could pass FLT_MAX (aps.h, apsmpi_fp32_reason). With codec scales {scales, block_len}, x[i] is
 * element offset + i. */
void apsmpi_own_scales(const float *x, size_t n, size_t offset, size_t block_len, const apsmpi_format *f,
                       int16_t *scales);

#endif
