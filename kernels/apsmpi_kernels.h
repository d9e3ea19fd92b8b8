/* apsmpi_kernels.h: the CUDA kernels of apsmpi (block exponents, encode, decode) behind a plain C interface. */
#ifndef APSMPI_KERNELS_H
#define APSMPI_KERNELS_H

/* Every pointer argument is device memory unless said otherwise; `stream` is a cudaStream_t
 * (NULL: the legacy default stream). Each function only enqueues work on the stream and
 * returns 0, or the cudaError_t of the launch. The results are those of the CPU functions
 * named below, bit for bit: the per-element arithmetic is the same source (src/core/fpconv.h). */

#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"       /* apsmpi_rounding */
#include "core/flush_depth.h" /* apsmpi_depth_bins, the measuring encode's counters */
#include "core/format.h"      /* apsmpi_format, packing groups */

#ifdef __cplusplus
extern "C" {
#endif

/* As apsmpi_block_exponents: exps[b] = apsmpi_exponent_of(max |x[i]|) over block
 * b = [b*block_len, (b+1)*block_len) of x[0..n), for apsmpi_block_count(n, block_len) blocks
 * (block_len >= n: one exponent for the whole buffer). */
int apsmpi_cuda_block_exponents(const float *x, size_t n, size_t block_len, int16_t *exps, void *stream);

/* As apsmpi_encode with apsmpi_scales {scales, block_len} (an MX format takes no scales: its
 * blocks of 32 carry their own, codec_mx_kernels.cu): encodes in[0..n) into
 * apsmpi_groups_for(f, n) packed groups at out, the tail of the last group zero codes.
 * first_index is the index of in[0] in the whole buffer (a multiple of the packing group):
 * element i uses scale scales[(first_index + i) / block_len] and random stream position
 * first_index + i. scales == NULL: no scaling. `f` and `r` are host structs, passed by value
 * to the kernel. If counters is not NULL (device, two entries), counters[0] is increased by
 * the number of non-zero inputs (x != +-0) and counters[1] by the number of those whose code
 * has a zero magnitude (flushed), as the CPU statistics count them. */
int apsmpi_cuda_encode(const apsmpi_format *f, const float *in, size_t n, size_t first_index, const int16_t *scales,
                       size_t block_len, apsmpi_rounding r, void *out, unsigned long long *counters, void *stream);

/* An MX format's encode as apsmpi_cuda_encode (no scales: f->mx), that also measures in the
 * same pass what APSMPI_FORMAT=auto's controller reads (core/flush_depth.h): counters (device,
 * APSMPI_MEASURE_COUNTERS entries, not NULL) are increased by the non-zero inputs, the flushed
 * ones, and at APSMPI_COUNT_DEEP + k by the non-zero inputs whose depth below their block's
 * largest is bins->depth[k] or more (bins: a host struct, passed by value), over every block,
 * in integers: apsmpi_flush_depths's counts of the same blocks and the CPU codec's flushes. */
int apsmpi_cuda_encode_measured(const apsmpi_format *f, const float *in, size_t n, size_t first_index,
                                apsmpi_rounding r, const apsmpi_depth_bins *bins, void *out,
                                unsigned long long *counters, void *stream);

/* As apsmpi_decode: decodes n elements from packed groups at in (element 0 of in being
 * buffer index first_index, a multiple of the packing group) into out, dividing by the
 * scales as above. */
int apsmpi_cuda_decode(const apsmpi_format *f, const void *in, size_t n, size_t first_index, const int16_t *scales,
                       size_t block_len, float *out, void *stream);

#ifdef __cplusplus
}
#endif

#endif
