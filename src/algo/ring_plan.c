/* ring_plan.c: the pipelined ring's arithmetic: which segment moves at which step, piece ranges, offsets and tags. */
#include "algo/ring_plan.h"

#include "core/packed_layout.h"
#include "core/units.h"

static int mod(int a, int n) { return ((a % n) + n) % n; }

static size_t pieces_of(size_t count, size_t piece) { return apsmpi_pieces_of(count, piece); }

size_t apsmpi_ring_piece_elems(const int *counts, int nranks, size_t piece)
{
    return apsmpi_piece_grown(counts, nranks, piece);
}

size_t apsmpi_ring_max_pieces(const int *counts, int nranks, size_t piece)
{
    size_t most = 1;
    for (int i = 0; i < nranks; i++)
        if (pieces_of((size_t)counts[i], piece) > most)
            most = pieces_of((size_t)counts[i], piece);
    return most;
}

void apsmpi_ring_plan_init(apsmpi_ring_plan *p, const int *counts, const size_t *first, const size_t *offset,
                           int nranks, int rank, size_t piece, size_t gelems, size_t gbytes, int allgather)
{
    p->size = nranks;
    p->rank = rank;
    p->counts = counts;
    p->first = first;
    p->offset = offset;
    p->piece = apsmpi_ring_piece_elems(counts, nranks, piece);
    p->gelems = gelems;
    p->gbytes = gbytes;
    p->max_pieces = apsmpi_ring_max_pieces(counts, nranks, p->piece);
    p->last_step = (allgather ? 2 : 1) * (nranks - 1) - 1;
}

int apsmpi_ring_send_segment(const apsmpi_ring_plan *p, int step) { return mod(p->rank - step - 1, p->size); }
int apsmpi_ring_recv_segment(const apsmpi_ring_plan *p, int step) { return mod(p->rank - step - 2, p->size); }
int apsmpi_ring_is_reduce_step(const apsmpi_ring_plan *p, int step) { return step < p->size - 1; }

int apsmpi_ring_is_final(const apsmpi_ring_plan *p, int step)
{
    return !apsmpi_ring_is_reduce_step(p, step) || apsmpi_ring_recv_segment(p, step) == p->rank;
}

int apsmpi_ring_encode_segment(int rank, int nranks, int pos) { return mod(rank - 1 - pos, nranks); }
int apsmpi_ring_encode_position(int rank, int nranks, int seg) { return mod(rank - 1 - seg, nranks); }

size_t apsmpi_ring_pieces(const apsmpi_ring_plan *p, int seg) { return pieces_of((size_t)p->counts[seg], p->piece); }

size_t apsmpi_ring_piece_len(const apsmpi_ring_plan *p, int seg, size_t j)
{
    return apsmpi_piece_len((size_t)p->counts[seg], p->piece, j);
}

size_t apsmpi_ring_piece_first(const apsmpi_ring_plan *p, int seg, size_t j) { return p->first[seg] + j * p->piece; }

size_t apsmpi_ring_piece_offset(const apsmpi_ring_plan *p, int seg, size_t j)
{
    return p->offset[seg] + j * p->piece / p->gelems * p->gbytes;
}

int apsmpi_ring_piece_groups(const apsmpi_ring_plan *p, int seg, size_t j)
{
    return (int)((apsmpi_ring_piece_len(p, seg, j) + p->gelems - 1) / p->gelems);
}

int apsmpi_ring_piece_tag(size_t j) { return (int)j; }

void apsmpi_ring_sizes_init(apsmpi_ring_sizes *z, const int *counts, int nranks, size_t piece_elems,
                            size_t request_bytes)
{
    z->piece = apsmpi_ring_piece_elems(counts, nranks, piece_elems);
    z->max_pieces = apsmpi_ring_max_pieces(counts, nranks, z->piece);
    z->at_offset = apsmpi_align_up((size_t)nranks * sizeof(size_t));
    z->at_requests = z->at_offset + apsmpi_align_up((size_t)nranks * sizeof(size_t));
    z->at_order = z->at_requests + apsmpi_align_up(3 * z->max_pieces * request_bytes);
    z->bytes = z->at_order + apsmpi_align_up((size_t)nranks * sizeof(int));
}

void apsmpi_ring_plan_bind(apsmpi_ring_plan *p, const apsmpi_ring_sizes *z, void *mem, const apsmpi_format *f,
                           const int *counts, int nranks, int rank, int allgather, void **requests, int **order)
{
    size_t *first = mem, *offset = (size_t *)(void *)((char *)mem + z->at_offset);

    apsmpi_packed_segments(f, counts, nranks, first, offset);
    apsmpi_ring_plan_init(p, counts, first, offset, nranks, rank, z->piece, apsmpi_group_elems(f),
                          apsmpi_group_bytes(f), allgather);
    *requests = (char *)mem + z->at_requests;
    *order = (int *)(void *)((char *)mem + z->at_order);
    for (int pos = 0; pos < nranks; pos++)
        (*order)[pos] = apsmpi_ring_encode_segment(rank, nranks, pos);
}
