/* pieces.h: how segments are cut into pieces (one message each), shared by rsag and the ring: the piece size, the tag bound, a piece's range. */
#ifndef APSMPI_PIECES_H
#define APSMPI_PIECES_H

#include <stddef.h>

/* Message tags are piece numbers, below APSMPI_MAX_PIECES (16384), with room for a second
 * range of tags above it under the smallest MPI_TAG_UB, 32767. */
#define APSMPI_MAX_PIECES 16384

/* Calls of more than `piece` elements (APSMPI_CHUNK_SIZE in whole slices of 64; 0: never)
 * are pipelined: sent in pieces, so that the codec encodes the next piece while the last ones travel. */
static inline int apsmpi_pipelined(size_t n, size_t piece) { return piece > 0 && n > piece; }

/* `piece` (a multiple of 64, > 0) doubled until every segment of counts[0..nsegs) has fewer
 * than APSMPI_MAX_PIECES pieces. */
size_t apsmpi_piece_grown(const int *counts, int nsegs, size_t piece);

/* The piece size for segments of counts[0..nsegs) elements: `piece` grown for the tag bound,
 * or, for piece 0 (not pipelined), one piece per segment: the largest segment in whole slices
 * of 64 (at least 64). */
size_t apsmpi_piece_size(const int *counts, int nsegs, size_t piece);

/* Pieces of a segment of count elements (0 for an empty one). */
static inline size_t apsmpi_pieces_of(size_t count, size_t piece) { return (count + piece - 1) / piece; }

/* Elements of piece j of a segment of count elements. */
static inline size_t apsmpi_piece_len(size_t count, size_t piece, size_t j)
{
    return count - j * piece < piece ? count - j * piece : piece;
}

#endif
