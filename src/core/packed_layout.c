/* packed_layout.c: the arithmetic of packed buffers: bytes of n elements, segment starts and offsets. */
#include "core/packed_layout.h"

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
