/* prefetch.h: the software prefetch of the codec's vector loops (codec_simd.c, codec_mx_simd.c), a fixed distance ahead of their loads. */
#ifndef APSMPI_PREFETCH_H
#define APSMPI_PREFETCH_H

#include <stddef.h>

/* The loops do enough work between their loads that the core's out-of-order window holds few
 * of them in flight, and past the last level cache (and on a core whose L3 is far, within it)
 * the hardware prefetcher alone leaves them waiting on memory. So each loop asks for what it
 * will read or write PREFETCH_AHEAD elements on: 512 (16 MX blocks, 2 KiB of floats) was the
 * best of 128-2048 on an Intel Xeon (results/codec/mx_loops_xeon_prefetch.md, for the 8- and
 * 16-bit loops of 512-2048: results/codec/prefetch_8_16.md). A prefetch is
 * only a hint and never faults; the loops form only addresses inside their buffers. */
enum { PREFETCH_AHEAD = 512, PREFETCH_LINE = 64 };

/* Asks for the lines that the len bytes at p touch, to be read. */
static inline __attribute__((always_inline)) void prefetch_read(const void *p, size_t len)
{
    for (size_t o = 0; o < len; o += PREFETCH_LINE)
        __builtin_prefetch((const char *)p + o, 0, 3);
    __builtin_prefetch((const char *)p + (len - 1), 0, 3);
}

/* The same, to be written. */
static inline __attribute__((always_inline)) void prefetch_write(void *p, size_t len)
{
    for (size_t o = 0; o < len; o += PREFETCH_LINE)
        __builtin_prefetch((char *)p + o, 1, 3);
    __builtin_prefetch((char *)p + (len - 1), 1, 3);
}

/* The line at p, to be read or written: enough for a loop that steps through a buffer at most
 * a line at a time, which touches every line in turn. */
static inline __attribute__((always_inline)) void prefetch_line_read(const void *p) { __builtin_prefetch(p, 0, 3); }

static inline __attribute__((always_inline)) void prefetch_line_write(void *p) { __builtin_prefetch(p, 1, 3); }

#endif
