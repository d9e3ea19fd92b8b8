/* ring_plan.h: the arithmetic of the pipelined ring, without MPI: segments, pieces, their order, tags and offsets. */
#ifndef APSMPI_RING_PLAN_H
#define APSMPI_RING_PLAN_H

/* The ring (APSMPI_ALGORITHM=ring, kept for comparison) moves one segment per step between
 * neighbours, in pieces (the words: docs/layers.md's glossary).
 * Step s (0 <= s <= last step) sends segment rank-s-1 to the right neighbour and receives
 * segment rank-s-2 from the left one; steps below size-1 sum (reduce-scatter), the others
 * pass final sums on (allgather). Segments are encoded in the order they are sent or summed:
 * rank-1, rank-2, ... */

#include <stddef.h>
#include "algo/pieces.h"
#include "core/format.h"

/* Pieces grow until every segment has fewer than this (algo/pieces.h). */
#define APSMPI_RING_MAX_PIECES APSMPI_MAX_PIECES

typedef struct apsmpi_ring_plan {
    int size, rank;        /* ranks in the ring; this one */
    const int *counts;     /* elements of each segment */
    const size_t *first;   /* element where each segment starts */
    const size_t *offset;  /* byte offset of each segment in the packed buffers */
    size_t piece;          /* elements per piece: a multiple of 64, grown for the tag bound */
    size_t gelems, gbytes; /* one packing group: its elements and bytes */
    size_t max_pieces;     /* pieces of the longest segment (at least 1) */
    int last_step;         /* size-2 for a reduce-scatter, 2*size-3 with the allgather */
} apsmpi_ring_plan;

/* The piece size for these counts: `piece` doubled until every segment has fewer than
 * APSMPI_RING_MAX_PIECES pieces. */
size_t apsmpi_ring_piece_elems(const int *counts, int nranks, size_t piece);

/* Pieces of the longest segment for that piece size (at least 1). */
size_t apsmpi_ring_max_pieces(const int *counts, int nranks, size_t piece);

/* Fills *p for this rank: first and offset are the segment starts of the packed layout
 * (core/packed_layout.h), gelems and gbytes the packing group of the format. */
void apsmpi_ring_plan_init(apsmpi_ring_plan *p, const int *counts, const size_t *first, const size_t *offset,
                           int nranks, int rank, size_t piece, size_t gelems, size_t gbytes, int allgather);

int apsmpi_ring_send_segment(const apsmpi_ring_plan *p, int step); /* sent at step */
int apsmpi_ring_recv_segment(const apsmpi_ring_plan *p, int step); /* received at step */
int apsmpi_ring_is_reduce_step(const apsmpi_ring_plan *p, int step);
/* A piece received at step is final (fully summed) on this rank: decode it. */
int apsmpi_ring_is_final(const apsmpi_ring_plan *p, int step);

/* The segment encoded at position pos (0: first) of the encoding order, and the inverse. The
 * order of every segment encoding, host or GPU, comes from here. */
int apsmpi_ring_encode_segment(int rank, int nranks, int pos);
int apsmpi_ring_encode_position(int rank, int nranks, int seg);

size_t apsmpi_ring_pieces(const apsmpi_ring_plan *p, int seg);                 /* pieces of seg */
size_t apsmpi_ring_piece_len(const apsmpi_ring_plan *p, int seg, size_t j);    /* its elements */
size_t apsmpi_ring_piece_first(const apsmpi_ring_plan *p, int seg, size_t j);  /* element index */
size_t apsmpi_ring_piece_offset(const apsmpi_ring_plan *p, int seg, size_t j); /* byte offset */
int apsmpi_ring_piece_groups(const apsmpi_ring_plan *p, int seg, size_t j);    /* packing groups */
int apsmpi_ring_piece_tag(size_t j);

/* The ring's plan of a call, made once before the ranks agree (algo/algorithm.h): the piece
 * size, the pieces of the longest segment, and the bytes of the ring's host memory (segment
 * starts and byte offsets, its requests, the encoding order), laid out by
 * apsmpi_ring_plan_bind. */
typedef struct apsmpi_ring_sizes {
    size_t piece, max_pieces;
    size_t at_offset, at_requests, at_order, bytes; /* the memory's regions, the first at 0 */
} apsmpi_ring_sizes;

/* request_bytes: sizeof(MPI_Request), given so that the plan needs no MPI. */
void apsmpi_ring_sizes_init(apsmpi_ring_sizes *z, const int *counts, int nranks, size_t piece_elems,
                            size_t request_bytes);

/* Lays the ring's memory `mem` (z->bytes) out for format f: fills the segment starts and
 * byte offsets of the packed layout and the encoding order (*order), points *requests at
 * 3 * max_pieces requests (not initialised) and fills *p as apsmpi_ring_plan_init does. */
void apsmpi_ring_plan_bind(apsmpi_ring_plan *p, const apsmpi_ring_sizes *z, void *mem, const apsmpi_format *f,
                           const int *counts, int nranks, int rank, int allgather, void **requests, int **order);

#endif
