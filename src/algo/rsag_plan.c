/* rsag_plan.c: rsag's arithmetic: piece sizes, the schedule of its messages, buffer sizes and offsets, its memory's layout. */
#include "algo/rsag_plan.h"

#include "core/packed_layout.h"
#include "core/units.h"

static int mod(int a, int n) { return ((a % n) + n) % n; }

static size_t align16(size_t b) { return (b + 15) / 16 * 16; }

/* The result slots of a segment of count elements: full pieces, then the last one. */
static size_t segment_slots(const apsmpi_rsag_plan *p, size_t count)
{
    size_t pieces = apsmpi_pieces_of(count, p->piece);

    if (pieces == 0)
        return 0;
    return (pieces - 1) * apsmpi_result_message_bytes(p->f, p->piece, p->block_len) +
           apsmpi_result_message_bytes(p->f, apsmpi_piece_len(count, p->piece, pieces - 1), p->block_len);
}

void apsmpi_rsag_plan_init(apsmpi_rsag_plan *p, const apsmpi_format *f, const int *counts, int nranks, int rank,
                           size_t piece, size_t block_len, int allgather, int window, size_t request_bytes)
{
    size_t n = (size_t)nranks, results = 0, requests;

    *p = (apsmpi_rsag_plan){.f = f, .size = nranks, .rank = rank, .allgather = allgather, .counts = counts};
    p->piece = apsmpi_piece_size(counts, nranks, piece);
    p->block_len = block_len;
    p->window = window < 0 ? 0 : window > APSMPI_RSAG_MAX_WINDOW ? APSMPI_RSAG_MAX_WINDOW : window;
    p->piece_major = p->window > 0;
    for (int s = 0; s < nranks; s++) {
        size_t pieces = apsmpi_pieces_of((size_t)counts[s], p->piece);
        p->all_pieces += pieces;
        p->max_pieces = pieces > p->max_pieces ? pieces : p->max_pieces;
        results += segment_slots(p, (size_t)counts[s]);
    }
    p->own_pieces = apsmpi_pieces_of((size_t)counts[rank], p->piece);
    p->sends = p->all_pieces - p->own_pieces + (allgather ? (n - 1) * p->own_pieces : 0);
    p->own_bytes = apsmpi_packed_bytes(f, (size_t)counts[rank]);
    p->packed_bytes = apsmpi_packed_segments(f, counts, nranks, NULL, NULL);
    p->staging_bytes = align16((n - 1) * p->own_bytes);
    p->result_bytes = p->staging_bytes + results;
    p->sum_floats = 2 * p->piece + (allgather ? 0 : (size_t)counts[rank]);
    requests = 2 * (n - 1) * p->own_pieces + 2 * p->all_pieces;
    p->at_offset = apsmpi_align_up(n * sizeof(size_t));
    p->at_piece0 = p->at_offset + apsmpi_align_up(n * sizeof(size_t));
    p->at_slot0 = p->at_piece0 + apsmpi_align_up(n * sizeof(size_t));
    p->at_order = p->at_slot0 + apsmpi_align_up(n * sizeof(size_t));
    p->at_requests = p->at_order + apsmpi_align_up(n * sizeof(int));
    p->at_queue = p->at_requests + apsmpi_align_up(requests * request_bytes);
    p->at_sum = p->at_queue + (p->window > 0 ? apsmpi_align_up(p->sends * sizeof(apsmpi_rsag_send)) : 0);
    p->memory_bytes = p->at_sum + apsmpi_align_up(p->sum_floats * sizeof(float));
}

void apsmpi_rsag_plan_bind(apsmpi_rsag_plan *p, void *mem)
{
    char *m = mem;
    size_t gp = 0, slot = 0;

    p->first = (size_t *)(void *)m;
    p->offset = (size_t *)(void *)(m + p->at_offset);
    p->piece0 = (size_t *)(void *)(m + p->at_piece0);
    p->slot0 = (size_t *)(void *)(m + p->at_slot0);
    p->order = (int *)(void *)(m + p->at_order);
    apsmpi_packed_segments(p->f, p->counts, p->size, p->first, p->offset);
    for (int s = 0; s < p->size; s++) {
        p->order[s] = apsmpi_rsag_encode_segment(p, s);
        p->piece0[s] = gp;
        p->slot0[s] = slot;
        gp += apsmpi_rsag_pieces(p, s);
        slot += segment_slots(p, (size_t)p->counts[s]);
    }
}

int apsmpi_rsag_send_peer(const apsmpi_rsag_plan *p, int round) { return mod(p->rank - 1 - round, p->size); }

int apsmpi_rsag_recv_peer(const apsmpi_rsag_plan *p, int round) { return mod(p->rank + 1 + round, p->size); }

/* position size-1 gives rank - size, this rank's own segment */
int apsmpi_rsag_encode_segment(const apsmpi_rsag_plan *p, int pos) { return apsmpi_rsag_send_peer(p, pos); }

int apsmpi_rsag_encode_seek(const apsmpi_rsag_plan *p, apsmpi_rsag_cursor *c)
{
    if (!p->piece_major) {
        while (c->pos < (size_t)p->size && c->j >= apsmpi_rsag_pieces(p, p->order[c->pos])) {
            c->pos++;
            c->j = 0;
        }
        return c->pos < (size_t)p->size;
    }
    while (c->j < p->max_pieces && c->j >= apsmpi_rsag_pieces(p, p->order[c->pos]))
        apsmpi_rsag_encode_step(p, c);
    return c->j < p->max_pieces;
}

void apsmpi_rsag_encode_step(const apsmpi_rsag_plan *p, apsmpi_rsag_cursor *c)
{
    if (!p->piece_major) {
        c->j++;
    } else if (++c->pos == (size_t)p->size) {
        c->pos = 0;
        c->j++;
    }
}

int apsmpi_rsag_encoded(const apsmpi_rsag_plan *p, const apsmpi_rsag_cursor *c, size_t pos, size_t j)
{
    if (!p->piece_major)
        return pos < c->pos || (pos == c->pos && j < c->j);
    return j < c->j || (j == c->j && pos < c->pos);
}

size_t apsmpi_rsag_pieces(const apsmpi_rsag_plan *p, int seg)
{
    return apsmpi_pieces_of((size_t)p->counts[seg], p->piece);
}

size_t apsmpi_rsag_piece_len(const apsmpi_rsag_plan *p, int seg, size_t j)
{
    return apsmpi_piece_len((size_t)p->counts[seg], p->piece, j);
}

size_t apsmpi_rsag_piece_first(const apsmpi_rsag_plan *p, int seg, size_t j) { return p->first[seg] + j * p->piece; }

size_t apsmpi_rsag_piece_offset(const apsmpi_rsag_plan *p, size_t j) { return apsmpi_packed_bytes(p->f, j * p->piece); }

size_t apsmpi_rsag_slot(const apsmpi_rsag_plan *p, int seg, size_t j)
{
    return p->slot0[seg] + j * apsmpi_result_message_bytes(p->f, p->piece, p->block_len);
}

apsmpi_rsag_msg apsmpi_rsag_contribution_out(const apsmpi_rsag_plan *p, int pos, size_t j)
{
    int seg = p->order[pos];
    return (apsmpi_rsag_msg){seg, (int)j, p->offset[seg] + apsmpi_rsag_piece_offset(p, j),
                             apsmpi_packed_bytes(p->f, apsmpi_rsag_piece_len(p, seg, j))};
}

apsmpi_rsag_msg apsmpi_rsag_contribution_in(const apsmpi_rsag_plan *p, int round, size_t j)
{
    return (apsmpi_rsag_msg){apsmpi_rsag_recv_peer(p, round), (int)j,
                             (size_t)round * p->own_bytes + apsmpi_rsag_piece_offset(p, j),
                             apsmpi_packed_bytes(p->f, apsmpi_rsag_piece_len(p, p->rank, j))};
}

apsmpi_rsag_msg apsmpi_rsag_result_out(const apsmpi_rsag_plan *p, int round, size_t j)
{
    return (apsmpi_rsag_msg){apsmpi_rsag_send_peer(p, round), APSMPI_RSAG_TAG_RESULT + (int)j,
                             apsmpi_rsag_slot(p, p->rank, j),
                             apsmpi_result_message_bytes(p->f, apsmpi_rsag_piece_len(p, p->rank, j), p->block_len)};
}

apsmpi_rsag_msg apsmpi_rsag_result_in(const apsmpi_rsag_plan *p, int round, size_t j)
{
    int seg = apsmpi_rsag_recv_peer(p, round);
    return (apsmpi_rsag_msg){seg, APSMPI_RSAG_TAG_RESULT + (int)j, apsmpi_rsag_slot(p, seg, j),
                             apsmpi_result_message_bytes(p->f, apsmpi_rsag_piece_len(p, seg, j), p->block_len)};
}

size_t apsmpi_rsag_request_count(const apsmpi_rsag_plan *p, enum apsmpi_rsag_request_kind kind)
{
    return kind == APSMPI_RSAG_CONTRIB_IN || kind == APSMPI_RSAG_RESULT_OUT ? (size_t)(p->size - 1) * p->own_pieces
                                                                            : p->all_pieces;
}

size_t apsmpi_rsag_request_first(const apsmpi_rsag_plan *p, enum apsmpi_rsag_request_kind kind)
{
    size_t own = (size_t)(p->size - 1) * p->own_pieces;
    switch (kind) {
    case APSMPI_RSAG_CONTRIB_IN:
        return 0;
    case APSMPI_RSAG_RESULT_OUT:
        return own;
    case APSMPI_RSAG_CONTRIB_OUT:
        return 2 * own;
    default:
        return 2 * own + p->all_pieces;
    }
}

void apsmpi_rsag_sendq_init(apsmpi_rsag_sendq *q, const apsmpi_rsag_plan *p, void *mem)
{
    *q = (apsmpi_rsag_sendq){.queue = (apsmpi_rsag_send *)(void *)((char *)mem + p->at_queue), .window = p->window};
}

void apsmpi_rsag_sendq_push(apsmpi_rsag_sendq *q, apsmpi_rsag_send s) { q->queue[q->tail++] = s; }

const apsmpi_rsag_send *apsmpi_rsag_sendq_next(apsmpi_rsag_sendq *q)
{
    const apsmpi_rsag_send *s;

    if (q->in_flight >= q->window || q->head == q->tail)
        return NULL;
    s = &q->queue[q->head++];
    q->flying[q->in_flight++] = s->request;
    return s;
}

void apsmpi_rsag_sendq_done(apsmpi_rsag_sendq *q, int i) { q->flying[i] = q->flying[--q->in_flight]; }
