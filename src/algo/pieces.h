/* pieces.h: how a pipelined algorithm cuts per-rank segments into pieces, each one message. */
#ifndef APSMPI_PIECES_H
#define APSMPI_PIECES_H

#include <stddef.h>

/* Message tags are piece numbers, kept below this (well under the smallest MPI_TAG_UB,
 * 32767, with room for a second range of tags above it). */
#define APSMPI_MAX_PIECES 16384

/* The piece size for segments of counts[0..nranks) elements: `piece` (a multiple of 64),
 * doubled until every segment has fewer than APSMPI_MAX_PIECES pieces; piece 0 asks for no
 * pipelining: one piece per segment (the largest segment, in whole slices of 64). */
static inline size_t apsmpi_piece_size(const int *counts, int nranks, size_t piece)
{
    if (piece == 0) {
        for (int i = 0; i < nranks; i++)
            if ((size_t)counts[i] > piece)
                piece = (size_t)counts[i];
        return piece < 64 ? 64 : (piece + 63) / 64 * 64;
    }
    for (int i = 0; i < nranks; i++)
        while ((size_t)counts[i] / piece >= APSMPI_MAX_PIECES)
            piece *= 2;
    return piece;
}

/* Pieces of a segment of count elements. */
static inline size_t apsmpi_pieces_of(size_t count, size_t piece) { return (count + piece - 1) / piece; }

/* Elements of piece j of a segment of count elements. */
static inline size_t apsmpi_piece_len(size_t count, size_t piece, size_t j)
{
    return count - j * piece < piece ? count - j * piece : piece;
}

#endif
