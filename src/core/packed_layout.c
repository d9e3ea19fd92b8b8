/* packed_layout.c: the arithmetic of packed buffers: bytes of n elements, of a result message and its scales, segment starts and offsets. */
#include "core/packed_layout.h"

#include <stdint.h>

size_t apsmpi_packed_bytes(const apsmpi_format *f, size_t n) { return apsmpi_groups_for(f, n) * apsmpi_group_bytes(f); }

size_t apsmpi_packed_segments(const apsmpi_format *f, const int *counts, int nsegs, size_t *first, size_t *offset)
{
    size_t elems = 0, bytes = 0;

    for (int s = 0; s < nsegs; s++) {
        if (first)
            first[s] = elems;
        if (offset)
            offset[s] = bytes;
        elems += (size_t)counts[s];
        bytes += apsmpi_packed_bytes(f, (size_t)counts[s]);
    }
    return bytes;
}

static size_t align16(size_t b) { return (b + 15) / 16 * 16; }

size_t apsmpi_result_scale_bytes(const apsmpi_format *f, size_t n, size_t block_len)
{
    (void)f;
    return align16((n / block_len + 2) * sizeof(int16_t));
}

size_t apsmpi_result_message_bytes(const apsmpi_format *f, size_t n, size_t block_len)
{
    return align16(apsmpi_result_scale_bytes(f, n, block_len) + apsmpi_packed_bytes(f, n));
}
