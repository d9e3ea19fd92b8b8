/* pieces.c: the piece size of a call's segments, grown for the tag bound. */
#include "algo/pieces.h"

#include "core/units.h"

size_t apsmpi_piece_grown(const int *counts, int nsegs, size_t piece)
{
    for (int i = 0; i < nsegs; i++)
        while ((size_t)counts[i] / piece >= APSMPI_MAX_PIECES)
            piece *= 2;
    return piece;
}

size_t apsmpi_piece_size(const int *counts, int nsegs, size_t piece)
{
    if (piece > 0)
        return apsmpi_piece_grown(counts, nsegs, piece);
    for (int i = 0; i < nsegs; i++)
        if ((size_t)counts[i] > piece)
            piece = (size_t)counts[i];
    return piece < APSMPI_SLICE ? APSMPI_SLICE : apsmpi_whole_slices(piece);
}
