/* ring.c: the pipelined ring reduce-scatter and allgather over point-to-point messages on encoded data (APSMPI_ALGORITHM=ring, for comparison). */
#include "algo/ring.h"

#include "algo/ring_plan.h"
#include "algo/ring_sumop.h"
#include "core/fault.h"
#include "core/packed_layout.h"
#include "state/private_comm.h"
#include "state/stats.h"

struct ring {
    apsmpi_ring_plan plan; /* which segment and piece goes where (ring_plan.h) */
    apsmpi_call *c;
    MPI_Comm comm; /* the private duplicate of the call's communicator */
    int tag_base;  /* this call's range of tags on it */
    int left, right;
    unsigned char *packed;  /* this rank's encoded input; summed into in place */
    unsigned char *staging; /* received pieces, at the same offsets */
    float *out;
    int allgather;
    int *order;            /* segments in encoding order */
    size_t encode_seg_pos; /* the encoding cursor: position in that order, and piece */
    size_t encode_piece;
    MPI_Request *recv_req; /* one per piece */
    MPI_Request *send_req; /* two steps' worth: [step parity][piece] */
    /* where the exchange stands, so that progress can return whenever it would wait */
    enum { RING_FIRST_POSTS, RING_RECEIVE, RING_SEND_ON, RING_LAST_SENDS, RING_DONE } stage;
    int step; /* the step whose pieces are being received */
    size_t j; /* the piece of it */
};

static unsigned char *piece_at(const struct ring *r, unsigned char *buf, int seg, size_t j)
{
    return buf + apsmpi_ring_piece_offset(&r->plan, seg, j);
}

/* Encodes the next piece in encoding order; 0 when everything is encoded. */
static int encode_next(struct ring *r)
{
    const apsmpi_ring_plan *p = &r->plan;
    int seg;

    while (r->encode_seg_pos < (size_t)p->size &&
           r->encode_piece >= apsmpi_ring_pieces(p, r->order[r->encode_seg_pos])) {
        r->encode_seg_pos++;
        r->encode_piece = 0;
    }
    if (r->encode_seg_pos == (size_t)p->size)
        return 0;
    seg = r->order[r->encode_seg_pos];
    apsmpi_call_encode(r->c, apsmpi_ring_piece_first(p, seg, r->encode_piece),
                       apsmpi_ring_piece_len(p, seg, r->encode_piece), piece_at(r, r->packed, seg, r->encode_piece));
    r->encode_piece++;
    return 1;
}

/* Makes sure piece j of seg is encoded. */
static void ensure_encoded(struct ring *r, int seg, size_t j)
{
    size_t pos = (size_t)apsmpi_ring_encode_position(r->plan.rank, r->plan.size, seg);
    while (r->encode_seg_pos < pos || (r->encode_seg_pos == pos && r->encode_piece <= j))
        if (!encode_next(r))
            break;
}

/* 1 when req is complete (*rc its status), encoding pieces needed later while the bytes are
 * on their way; with nothing left to encode, waits in MPI if blocking, else returns 0. */
static int arrived(struct ring *r, MPI_Request *req, int blocking, int *rc)
{
    int done = 0;
    for (;;) {
        *rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (*rc != MPI_SUCCESS || done)
            return 1;
        if (encode_next(r))
            continue;
        if (!blocking)
            return 0;
        *rc = PMPI_Wait(req, MPI_STATUS_IGNORE);
        return 1;
    }
}

static int post_recv(struct ring *r, int step, size_t j)
{
    int seg = apsmpi_ring_recv_segment(&r->plan, step);
    return PMPI_Irecv(piece_at(r, r->staging, seg, j), apsmpi_ring_piece_groups(&r->plan, seg, j),
                      apsmpi_ring_group_type(), r->left, r->tag_base + apsmpi_ring_piece_tag(j), r->comm,
                      &r->recv_req[j]);
}

/* The send slot of piece j at `step` (the send two steps before it used it last). */
static MPI_Request *send_slot(struct ring *r, int step, size_t j)
{
    return &r->send_req[(size_t)(step & 1) * r->plan.max_pieces + j];
}

/* 1 when the slot's earlier send is complete (*rc its status): waits in MPI if blocking, else
 * returns 0 while it is not. */
static int slot_free(MPI_Request *slot, int blocking, int *rc)
{
    int done = 1;
    *rc = blocking ? PMPI_Wait(slot, MPI_STATUS_IGNORE) : PMPI_Test(slot, &done, MPI_STATUS_IGNORE);
    return *rc != MPI_SUCCESS || done;
}

/* Sends piece j of step `step` from the buffer buf (packed or staging) into its free slot. */
static int post_send(struct ring *r, int step, size_t j, unsigned char *buf)
{
    int seg = apsmpi_ring_send_segment(&r->plan, step);
    int rc = apsmpi_call_injected_error(r->c, APSMPI_FAULT_RING_SEND);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(piece_at(r, buf, seg, j), apsmpi_ring_piece_groups(&r->plan, seg, j), apsmpi_ring_group_type(),
                        r->right, r->tag_base + apsmpi_ring_piece_tag(j), r->comm, send_slot(r, step, j));
    return rc;
}

/* The buffer that holds piece j's value after it arrived at `step`: summed into this rank's
 * own encoding (first half), or as received (second half). */
static unsigned char *holder_of(const struct ring *r, int step)
{
    return apsmpi_ring_is_reduce_step(&r->plan, step) ? r->packed : r->staging;
}

/* Piece j arrived at `step`: in the first half summed into this rank's own encoding. */
static void sum_in(struct ring *r, int step, size_t j)
{
    const apsmpi_ring_plan *p = &r->plan;
    int seg = apsmpi_ring_recv_segment(p, step);
    uint64_t t0;

    if (!apsmpi_ring_is_reduce_step(p, step))
        return;
    t0 = apsmpi_now_ns();
    ensure_encoded(r, seg, j);
    apsmpi_sum_packed(r->c->codec, piece_at(r, r->staging, seg, j), piece_at(r, r->packed, seg, j),
                      (size_t)apsmpi_ring_piece_groups(p, seg, j));
    r->c->codec_ns += apsmpi_now_ns() - t0;
}

/* Piece j of `step`, sent on: decoded if final, and the receive of the next step's piece j
 * posted. */
static int after_send(struct ring *r, int step, size_t j)
{
    const apsmpi_ring_plan *p = &r->plan;
    int seg = apsmpi_ring_recv_segment(p, step);

    if (apsmpi_ring_is_final(p, step)) {
        float *dst = r->allgather ? r->out + p->first[seg] : r->out;
        apsmpi_call_decode(r->c, piece_at(r, holder_of(r, step), seg, j), apsmpi_ring_piece_first(p, seg, j),
                           apsmpi_ring_piece_len(p, seg, j), dst + j * p->piece);
    }
    if (step < p->last_step && j < apsmpi_ring_pieces(p, apsmpi_ring_recv_segment(p, step + 1)))
        return post_recv(r, step + 1, j);
    return MPI_SUCCESS;
}

_Static_assert(sizeof(apsmpi_ring_sizes) <= APSMPI_PLAN_OWN_BYTES, "the ring's plan fits in apsmpi_plan");

static void ring_plan(apsmpi_plan *pl)
{
    const apsmpi_plan_in *in = &pl->in;
    apsmpi_ring_sizes *z = apsmpi_plan_own(pl, apsmpi_ring_sizes);

    apsmpi_ring_sizes_init(z, in->counts, in->nranks, in->piece, sizeof(MPI_Request));
    pl->packed_bytes = apsmpi_packed_segments(in->f, in->counts, in->nranks, NULL, NULL);
    pl->result_bytes = pl->packed_bytes; /* pieces received, at the same offsets */
    pl->memory_bytes = z->bytes;
}

static int ring_start(apsmpi_op *op)
{
    struct ring *r = op->memory;
    const apsmpi_plan_in *in = &op->plan->in;
    apsmpi_call *c = op->c;
    void *requests;

    *r = (struct ring){.out = op->out, .allgather = in->kind == APSMPI_ALLREDUCE, .c = c, .stage = RING_FIRST_POSTS};
    apsmpi_ring_plan_bind(&r->plan, apsmpi_plan_own(op->plan, apsmpi_ring_sizes), apsmpi_op_memory(op), in->f,
                          in->counts, in->nranks, in->rank, r->allgather, &requests, &r->order);
    r->left = (c->rank + c->nranks - 1) % c->nranks;
    r->right = (c->rank + 1) % c->nranks;
    r->packed = c->packed;
    r->staging = c->result;
    r->recv_req = requests;
    r->send_req = r->recv_req + r->plan.max_pieces;
    for (size_t i = 0; i < 3 * r->plan.max_pieces; i++)
        r->recv_req[i] = MPI_REQUEST_NULL;
    apsmpi_call_start(c, &(apsmpi_segments){c->nranks, in->counts, r->plan.first, r->plan.offset, r->order});
    return apsmpi_private_comm_call(c->comm, c->priv, &r->comm, &r->tag_base);
}

/* Step 0: the receives of segment rank-2 posted, segment rank-1 sent as it is encoded. */
static int first_posts(struct ring *r)
{
    const apsmpi_ring_plan *p = &r->plan;
    int rc = MPI_SUCCESS;

    for (size_t j = 0; rc == MPI_SUCCESS && j < apsmpi_ring_pieces(p, apsmpi_ring_recv_segment(p, 0)); j++)
        rc = post_recv(r, 0, j);
    for (size_t j = 0; rc == MPI_SUCCESS && j < apsmpi_ring_pieces(p, apsmpi_ring_send_segment(p, 0)); j++) {
        ensure_encoded(r, apsmpi_ring_send_segment(p, 0), j);
        rc = post_send(r, 0, j, r->packed);
    }
    return rc;
}

/* The end of a step: the receives of the next step's pieces beyond this one's count posted. */
static int next_step(struct ring *r)
{
    const apsmpi_ring_plan *p = &r->plan;
    int rc = MPI_SUCCESS;

    if (r->step == p->last_step) {
        r->stage = RING_LAST_SENDS;
        return rc;
    }
    for (size_t j = apsmpi_ring_pieces(p, apsmpi_ring_recv_segment(p, r->step));
         rc == MPI_SUCCESS && j < apsmpi_ring_pieces(p, apsmpi_ring_recv_segment(p, r->step + 1)); j++)
        rc = post_recv(r, r->step + 1, j);
    r->step++;
    r->j = 0;
    return rc;
}

/* Each piece of each step: received (summed in), sent on once its slot is free, decoded if
 * final; then the last sends complete. Returns whenever it would wait in MPI and the
 * operation is not blocking, and goes on from there at the next call. */
static int ring_progress(apsmpi_op *op, int *done)
{
    struct ring *r = op->memory;
    const apsmpi_ring_plan *p = &r->plan;
    int rc = MPI_SUCCESS, flag = 1;

    while (rc == MPI_SUCCESS && r->stage != RING_DONE) {
        switch (r->stage) {
        case RING_FIRST_POSTS:
            rc = first_posts(r);
            r->stage = RING_RECEIVE;
            break;
        case RING_RECEIVE:
            if (r->j == apsmpi_ring_pieces(p, apsmpi_ring_recv_segment(p, r->step))) {
                rc = next_step(r);
                break;
            }
            if (!arrived(r, &r->recv_req[r->j], op->blocking, &rc)) {
                *done = 0;
                return MPI_SUCCESS;
            }
            if (rc == MPI_SUCCESS) {
                sum_in(r, r->step, r->j);
                r->stage = RING_SEND_ON;
            }
            break;
        case RING_SEND_ON:
            if (r->step < p->last_step) {
                if (!slot_free(send_slot(r, r->step + 1, r->j), op->blocking, &rc)) {
                    *done = 0;
                    return MPI_SUCCESS;
                }
                if (rc == MPI_SUCCESS)
                    rc = post_send(r, r->step + 1, r->j, holder_of(r, r->step));
            }
            if (rc == MPI_SUCCESS)
                rc = after_send(r, r->step, r->j);
            r->j++;
            r->stage = RING_RECEIVE;
            break;
        case RING_LAST_SENDS:
            if (op->blocking)
                rc = PMPI_Waitall((int)(2 * p->max_pieces), r->send_req, MPI_STATUSES_IGNORE);
            else
                rc = PMPI_Testall((int)(2 * p->max_pieces), r->send_req, &flag, MPI_STATUSES_IGNORE);
            if (rc == MPI_SUCCESS && !flag) {
                *done = 0;
                return MPI_SUCCESS;
            }
            r->stage = RING_DONE;
            break;
        case RING_DONE:
            break;
        }
    }
    *done = 1;
    return rc;
}

/* After an error: no request of the ring may stay active on the memory that the next call
 * reuses (nor match that call's messages): the receives are cancelled, and every request is
 * completed. */
static int ring_end(apsmpi_op *op, int rc)
{
    struct ring *r = op->memory;

    if (rc == MPI_SUCCESS)
        return rc;
    for (size_t j = 0; j < r->plan.max_pieces; j++)
        if (r->recv_req[j] != MPI_REQUEST_NULL) {
            PMPI_Cancel(&r->recv_req[j]);
            PMPI_Wait(&r->recv_req[j], MPI_STATUS_IGNORE);
        }
    PMPI_Waitall((int)(2 * r->plan.max_pieces), r->send_req, MPI_STATUSES_IGNORE);
    return rc;
}

const apsmpi_algorithm apsmpi_ring = {.name = "ring",
                                      .private_comm = 1,
                                      .state = sizeof(struct ring),
                                      .plan = ring_plan,
                                      .start = ring_start,
                                      .progress = ring_progress,
                                      .end = ring_end};
