/* codec_parallel.h: the codec's buffer calls with the work cut over threads (core/thread_pool.h): the same bits as one thread. */
#ifndef APSMPI_CODEC_PARALLEL_H
#define APSMPI_CODEC_PARALLEL_H

#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"

/* Elements per cut of a loop: a multiple of every packing group (bit-packed codes come in
 * groups of 8, an MX format's in blocks of 32), so that each thread's codes start on a byte. */
#define APSMPI_CODEC_GRAIN 4096
/* Elements a thread takes at least: below, waking one costs more than it saves. */
#define APSMPI_CODEC_MIN_SPAN 32768

/* apsmpi_encode, apsmpi_decode on up to `threads` threads (1: the calling one alone). */
void apsmpi_encode_threads(const apsmpi_codec *c, int threads, const float *in, size_t n, size_t first_index,
                           apsmpi_scales sc, apsmpi_rounding r, void *out, uint64_t *flushed);
/* apsmpi_encode_measured on up to `threads` threads: the same bytes and counts as one thread
 * (each thread's span starts a block: APSMPI_CODEC_GRAIN is a multiple of 32). */
void apsmpi_encode_threads_measured(const apsmpi_codec *c, int threads, const float *in, size_t n, size_t first_index,
                                    apsmpi_rounding r, void *out, apsmpi_mx_measure *m);
void apsmpi_decode_threads(const apsmpi_codec *c, int threads, const void *in, size_t n, size_t first_index,
                           apsmpi_scales sc, float *out);

/* dst[i] += the decoded in[i] for n elements (set: dst[i] = it), on up to `threads` threads;
 * tmp: n floats of scratch. */
void apsmpi_decode_add_threads(const apsmpi_codec *c, int threads, const void *in, size_t n, size_t first_index,
                               apsmpi_scales sc, float *dst, int set, float *tmp);

#endif
