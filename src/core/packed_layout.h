/* packed_layout.h: where encoded elements lie: bytes of n packed elements, and segments that each start a packing group. */
#ifndef APSMPI_PACKED_LAYOUT_H
#define APSMPI_PACKED_LAYOUT_H

#include <stddef.h>
#include "core/format.h"

/* Bytes of n elements encoded in format f, in whole packing groups: the one place that says
 * how many bytes encoded elements take (a format whose groups carry their own scales counts
 * them here). */
size_t apsmpi_packed_bytes(const apsmpi_format *f, size_t n);

/* A result message (rsag: an owner's encoded sum of n elements) is its per-block scales,
 * then its codes. The bytes of those scales: room for every block of block_len elements
 * that n elements can touch, 16 bits each, aligned to 16 bytes: the one place that says
 * what a result's scales take. */
size_t apsmpi_result_scale_bytes(const apsmpi_format *f, size_t n, size_t block_len);

/* The bytes of a whole result message of n elements: scales and codes, aligned to 16. */
size_t apsmpi_result_message_bytes(const apsmpi_format *f, size_t n, size_t block_len);

/* The packed buffer of nsegs segments of counts[s] elements, each segment starting a packing
 * group: fills first[s] (element where segment s starts) and offset[s] (its byte offset),
 * either may be NULL; returns the buffer's bytes. */
size_t apsmpi_packed_segments(const apsmpi_format *f, const int *counts, int nsegs, size_t *first, size_t *offset);

#endif
