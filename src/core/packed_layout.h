/* packed_layout.h: where encoded elements lie: bytes of n packed elements, and segments that each start a packing group. */
#ifndef APSMPI_PACKED_LAYOUT_H
#define APSMPI_PACKED_LAYOUT_H

#include <stddef.h>
#include "core/format.h"

/* Bytes of n elements encoded in format f, in whole packing groups. */
size_t apsmpi_packed_bytes(const apsmpi_format *f, size_t n);

/* The packed buffer of nsegs segments of counts[s] elements, each segment starting a packing
 * group: fills first[s] (element where segment s starts) and offset[s] (its byte offset),
 * either may be NULL; returns the buffer's bytes. */
size_t apsmpi_packed_segments(const apsmpi_format *f, const int *counts, int nsegs, size_t *first, size_t *offset);

#endif
