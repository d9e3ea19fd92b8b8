/* units.h: the library's two units of 64: the slice of 64 elements that segments and pieces are cut in, and the 64-byte alignment of memory regions. */
#ifndef APSMPI_UNITS_H
#define APSMPI_UNITS_H

#include <stddef.h>

/* Elements per slice: an allreduce's segments and every piece are whole slices (but the
 * last), so that every packing group (at most 32 elements: an MX block) lies inside one
 * segment and one piece. */
#define APSMPI_SLICE 64

/* Bytes of alignment of every region of an operation's memory: a cache line, and the widest
 * vector the codec loads (avx512). */
#define APSMPI_ALIGN 64

/* n rounded up to whole slices. */
static inline size_t apsmpi_whole_slices(size_t n) { return (n + APSMPI_SLICE - 1) / APSMPI_SLICE * APSMPI_SLICE; }

/* bytes rounded up to a multiple of APSMPI_ALIGN: the start of the next region. */
static inline size_t apsmpi_align_up(size_t bytes) { return (bytes + APSMPI_ALIGN - 1) / APSMPI_ALIGN * APSMPI_ALIGN; }

#endif
