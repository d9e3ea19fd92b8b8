/* pieces.h: how rsag cuts per-rank segments into pieces, each one message (the ring's rule, ring_plan.h, plus one piece per segment). */
#ifndef APSMPI_PIECES_H
#define APSMPI_PIECES_H

#include <stddef.h>
#include "algo/ring_plan.h"

/* Message tags are piece numbers, below APSMPI_RING_MAX_PIECES (16384), with room for a
 * second range of tags above it under the smallest MPI_TAG_UB, 32767. */
#define APSMPI_MAX_PIECES APSMPI_RING_MAX_PIECES

/* The piece size for segments of counts[0..nranks) elements: `piece` (a multiple of 64),
 * grown as the ring grows it; piece 0 asks for no pipelining: one piece per segment (the
 * largest segment, in whole slices of 64). */
static inline size_t apsmpi_piece_size(const int *counts, int nranks, size_t piece)
{
    if (piece > 0)
        return apsmpi_ring_piece_elems(counts, nranks, piece);
    for (int i = 0; i < nranks; i++)
        if ((size_t)counts[i] > piece)
            piece = (size_t)counts[i];
    return piece < 64 ? 64 : (piece + 63) / 64 * 64;
}

/* Pieces of a segment of count elements. */
static inline size_t apsmpi_pieces_of(size_t count, size_t piece) { return (count + piece - 1) / piece; }

/* Elements of piece j of a segment of count elements. */
static inline size_t apsmpi_piece_len(size_t count, size_t piece, size_t j)
{
    return count - j * piece < piece ? count - j * piece : piece;
}

#endif
