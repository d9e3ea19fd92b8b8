/* rsag.c: direct-exchange reduce-scatter of encoded contributions, fp32 sums at the owners, allgather of the encoded sums, as a resumable operation. */
#include "algo/rsag.h"

#include <string.h>

#include "algo/rsag_plan.h"
#include "algo/send_window.h"
#include "call/device_steps.h"
#include "core/packed_layout.h"
#include "state/private_comm.h"
#include "state/stats.h"

/* Where the operation is: summing this rank's pieces (and, with allgather, sharing each),
 * encoding what is left, then the result (copied, or gathered), then the sends completing. */
enum phase { SUM, ENCODE_REST, COPY_OUT, GATHER, DRAIN, DONE };

struct rsag {
    const apsmpi_rsag_plan *p;
    apsmpi_call *c;
    int blocking;
    unsigned char *packed;  /* this rank's encoded input, all segments */
    unsigned char *staging; /* contributions to this rank's segment from its receive peers */
    unsigned char *results; /* the encoded result messages, one slot per piece */
    float *sum, *tmp;       /* fp32: the sum (one piece, or the whole segment without allgather), a decoded piece */
    float *out;
    MPI_Request *req;             /* every request, by kind (rsag_plan.h) */
    MPI_Request *c_recv, *r_send; /* [round][j]: contribution from / result to the round's peer */
    MPI_Request *c_send, *r_recv; /* [piece0[seg] + j]: per piece of every segment */
    enum phase phase;
    size_t j;               /* SUM: the piece being summed; GATHER: the piece awaited */
    int round;              /* SUM: the contribution awaited (size-1: this rank's own); GATHER: the peer's round */
    apsmpi_rsag_cursor enc; /* the next piece to encode */
    apsmpi_send_window w;   /* its sends: on the private duplicate, through the window */
};

/* Encodes the next piece of this rank's contributions and sends it to its owner; 0 when all
 * are encoded. */
static int encode_next(struct rsag *r, int *rc)
{
    const apsmpi_rsag_plan *p = r->p;
    apsmpi_rsag_msg m;
    size_t j;
    int seg;

    if (!apsmpi_rsag_encode_seek(p, &r->enc))
        return 0;
    seg = p->order[r->enc.pos];
    j = r->enc.j;
    m = apsmpi_rsag_contribution_out(p, (int)r->enc.pos, j);
    apsmpi_call_encode(r->c, apsmpi_rsag_piece_first(p, seg, j), apsmpi_rsag_piece_len(p, seg, j), r->packed + m.at);
    if (seg != p->rank && *rc == MPI_SUCCESS)
        *rc =
            apsmpi_send_window_send(&r->w, (apsmpi_rsag_send){m, (size_t)(r->c_send - r->req) + p->piece0[seg] + j, 0});
    apsmpi_rsag_encode_step(p, &r->enc);
    return 1;
}

static int encode_work(void *r, int *rc) { return encode_next(r, rc); }

/* Waits for req, encoding and sending contributions while the bytes are on their way. 1 when
 * req is complete or *rc holds an error; 0 when nothing is left to encode and the operation
 * is not blocking: progress returns then. */
static int wait_working(struct rsag *r, MPI_Request *req, int *rc)
{
    return apsmpi_send_window_await_working(&r->w, req, r->blocking, rc, encode_work, r);
}

/* Every receive of the call, round by round (the schedule: all at once). */
static int post_receives(struct rsag *r)
{
    const apsmpi_rsag_plan *p = r->p;
    int rc = MPI_SUCCESS;

    for (int t = 0; t < apsmpi_rsag_rounds(p); t++) {
        int from = apsmpi_rsag_recv_peer(p, t);
        for (size_t j = 0; rc == MPI_SUCCESS && j < p->own_pieces; j++) {
            apsmpi_rsag_msg m = apsmpi_rsag_contribution_in(p, t, j);
            rc = PMPI_Irecv(r->staging + m.at, (int)m.bytes, MPI_BYTE, m.peer, r->w.tag_base + m.tag, r->w.comm,
                            &r->c_recv[(size_t)t * p->own_pieces + j]);
        }
        if (!p->allgather)
            continue;
        for (size_t j = 0; rc == MPI_SUCCESS && j < apsmpi_rsag_pieces(p, from); j++) {
            apsmpi_rsag_msg m = apsmpi_rsag_result_in(p, t, j);
            rc = PMPI_Irecv(r->results + m.at, (int)m.bytes, MPI_BYTE, m.peer, r->w.tag_base + m.tag, r->w.comm,
                            &r->r_recv[p->piece0[from] + j]);
        }
    }
    return rc;
}

/* The owner's encoding of its summed piece j, once, sent to every other rank and decoded here
 * too. */
static int share_piece(struct rsag *r, size_t j)
{
    const apsmpi_rsag_plan *p = r->p;
    size_t first = apsmpi_rsag_piece_first(p, p->rank, j), len = apsmpi_rsag_piece_len(p, p->rank, j);
    apsmpi_rsag_msg m = apsmpi_rsag_result_out(p, 0, j);
    int rc = MPI_SUCCESS;

    apsmpi_call_encode_sum(r->c, r->sum, len, first, r->results + m.at);
    for (int t = 0; rc == MPI_SUCCESS && t < apsmpi_rsag_rounds(p); t++)
        rc = apsmpi_send_window_send(
            &r->w, (apsmpi_rsag_send){apsmpi_rsag_result_out(p, t, j),
                                      (size_t)(r->r_send - r->req) + (size_t)t * p->own_pieces + j, 1});
    if (rc == MPI_SUCCESS)
        apsmpi_call_decode_result(r->c, r->results + m.at, m.bytes, first, len, r->out + first);
    return rc;
}

/* The fp32 sum of this rank's pieces: for piece j the contributions of the receive peers in
 * round order as they arrive, then this rank's own (encoded and decoded like the others);
 * with allgather each summed piece is shared at once. 0 when progress must return. */
static int sum_pieces(struct rsag *r, int *rc)
{
    const apsmpi_rsag_plan *p = r->p;

    for (; *rc == MPI_SUCCESS && r->j < p->own_pieces; r->j++, r->round = 0) {
        size_t j = r->j, first = apsmpi_rsag_piece_first(p, p->rank, j), len = apsmpi_rsag_piece_len(p, p->rank, j);
        float *dst = p->allgather ? r->sum : r->sum + j * p->piece;

        for (; *rc == MPI_SUCCESS && r->round < apsmpi_rsag_rounds(p); r->round++) {
            if (!wait_working(r, &r->c_recv[(size_t)r->round * p->own_pieces + j], rc))
                return 0;
            if (*rc == MPI_SUCCESS)
                apsmpi_call_add_contribution(r->c, r->staging + apsmpi_rsag_contribution_in(p, r->round, j).at, first,
                                             len, dst, r->round == 0, r->tmp);
        }
        /* this rank's own piece j, at the last position, encoded (and what comes before it) */
        while (*rc == MPI_SUCCESS && !apsmpi_rsag_encoded(p, &r->enc, (size_t)p->size - 1, j))
            encode_next(r, rc);
        if (*rc == MPI_SUCCESS)
            apsmpi_call_add_contribution(r->c, r->packed + p->offset[p->rank] + apsmpi_rsag_piece_offset(p, j), first,
                                         len, dst, p->size == 1, r->tmp);
        if (*rc == MPI_SUCCESS && p->allgather)
            *rc = share_piece(r, j);
        if (*rc != MPI_SUCCESS)
            return 1;
    }
    return 1;
}

/* Without allgather: the fp32 sum of this rank's segment is the result. */
static void copy_out(struct rsag *r)
{
    size_t count = (size_t)r->p->counts[r->p->rank];

    if (count == 0)
        return;
    if (apsmpi_device_output(r->c))
        apsmpi_device_copy(r->c, r->out, r->sum, count * sizeof(float)); /* a failure ends the call with an error */
    else
        memcpy(r->out, r->sum, count * sizeof(float));
}

/* With allgather: every other segment's result messages, decoded as they arrive. */
static int gather(struct rsag *r, int *rc)
{
    const apsmpi_rsag_plan *p = r->p;

    for (; *rc == MPI_SUCCESS && r->round < apsmpi_rsag_rounds(p); r->round++, r->j = 0) {
        int from = apsmpi_rsag_recv_peer(p, r->round);
        for (; *rc == MPI_SUCCESS && r->j < apsmpi_rsag_pieces(p, from); r->j++) {
            apsmpi_rsag_msg m = apsmpi_rsag_result_in(p, r->round, r->j);
            if (!apsmpi_send_window_await(&r->w, &r->r_recv[p->piece0[from] + r->j], r->blocking, rc))
                return 0;
            if (*rc == MPI_SUCCESS)
                apsmpi_call_decode_result(r->c, r->results + m.at, m.bytes, apsmpi_rsag_piece_first(p, from, r->j),
                                          apsmpi_rsag_piece_len(p, from, r->j),
                                          r->out + apsmpi_rsag_piece_first(p, from, r->j));
        }
    }
    return 1;
}

/* The sends complete (their buffers are reused by the next call): the window's queue empties,
 * then every send completes. */
static int drain(struct rsag *r, int *rc)
{
    const apsmpi_rsag_plan *p = r->p;
    int all = (int)apsmpi_rsag_request_count(p, APSMPI_RSAG_CONTRIB_OUT);
    int own = (int)apsmpi_rsag_request_count(p, APSMPI_RSAG_RESULT_OUT), done = 0, done2 = 0;

    if (!apsmpi_send_window_flush(&r->w, r->blocking, rc))
        return 0;
    if (*rc != MPI_SUCCESS)
        return 1;
    if (r->blocking) {
        *rc = PMPI_Waitall(all, r->c_send, MPI_STATUSES_IGNORE);
        if (*rc == MPI_SUCCESS)
            *rc = PMPI_Waitall(own, r->r_send, MPI_STATUSES_IGNORE);
        return 1;
    }
    *rc = PMPI_Testall(all, r->c_send, &done, MPI_STATUSES_IGNORE);
    if (*rc == MPI_SUCCESS && done)
        *rc = PMPI_Testall(own, r->r_send, &done2, MPI_STATUSES_IGNORE);
    return *rc != MPI_SUCCESS || done2;
}

_Static_assert(sizeof(apsmpi_rsag_plan) <= APSMPI_PLAN_OWN_BYTES, "rsag's plan fits in apsmpi_plan");

static void rsag_plan(apsmpi_plan *pl)
{
    const apsmpi_plan_in *in = &pl->in;
    const apsmpi_rsag_in *own_in = in->algo_in;
    apsmpi_rsag_plan *p = apsmpi_plan_own(pl, apsmpi_rsag_plan);

    apsmpi_rsag_plan_init(p, in->f, in->counts, in->nranks, in->rank,
                          apsmpi_pipelined(in->n, in->piece) ? in->piece : 0, in->block_len,
                          in->kind == APSMPI_ALLREDUCE, own_in ? own_in->window : 0, sizeof(MPI_Request));
    pl->packed_bytes = p->packed_bytes;
    pl->result_bytes = p->result_bytes;
    pl->memory_bytes = p->memory_bytes;
    pl->addends = 1; /* nothing is summed in the wire format */
}

int apsmpi_rsag_plan_window(const apsmpi_plan *p) { return apsmpi_plan_own(p, apsmpi_rsag_plan)->window; }

static int rsag_start(apsmpi_op *op)
{
    struct rsag *r = op->memory;
    apsmpi_rsag_plan *p = apsmpi_plan_own(op->plan, apsmpi_rsag_plan);
    unsigned char *mem = apsmpi_op_memory(op);
    apsmpi_call *c = op->c;
    size_t nreq = apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_IN) + p->all_pieces;
    int rc;

    apsmpi_rsag_plan_bind(p, mem);
    *r = (struct rsag){.p = p, .c = c, .out = op->out, .blocking = op->blocking, .phase = SUM};
    r->req = (MPI_Request *)(void *)(mem + p->at_requests);
    for (size_t i = 0; i < nreq; i++)
        r->req[i] = MPI_REQUEST_NULL;
    r->c_recv = r->req + apsmpi_rsag_request_first(p, APSMPI_RSAG_CONTRIB_IN);
    r->r_send = r->req + apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_OUT);
    r->c_send = r->req + apsmpi_rsag_request_first(p, APSMPI_RSAG_CONTRIB_OUT);
    r->r_recv = r->req + apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_IN);
    r->sum = (float *)(void *)(mem + p->at_sum);
    r->tmp = r->sum + (p->allgather ? p->piece : (size_t)p->counts[p->rank]);
    r->packed = c->packed;
    r->staging = c->result;
    r->results = r->staging + p->staging_bytes;
    r->w = (apsmpi_send_window){.c = c, .req = r->req, .buf = {r->packed, r->results}};
    apsmpi_rsag_sendq_init(&r->w.q, p, mem);
    apsmpi_call_start(c, &(apsmpi_segments){p->size, p->counts, p->first, p->offset, p->order});
    rc = apsmpi_private_comm_call(c->comm, c->priv, &r->w.comm, &r->w.tag_base);
    return rc == MPI_SUCCESS ? post_receives(r) : rc;
}

static int rsag_progress(apsmpi_op *op, int *done)
{
    struct rsag *r = op->memory;
    int rc = MPI_SUCCESS;

    *done = 0;
    for (;;) {
        switch (r->phase) {
        case SUM:
            if (!sum_pieces(r, &rc))
                return rc;
            r->phase = ENCODE_REST;
            break;
        case ENCODE_REST: /* the output may overlap the input (MPI_IN_PLACE) */
            while (encode_next(r, &rc) && rc == MPI_SUCCESS)
                ;
            r->phase = r->p->allgather ? GATHER : COPY_OUT;
            r->round = 0;
            r->j = 0;
            break;
        case COPY_OUT:
            copy_out(r);
            r->phase = DRAIN;
            break;
        case GATHER:
            if (!gather(r, &rc))
                return rc;
            r->phase = DRAIN;
            break;
        case DRAIN:
            if (!drain(r, &rc))
                return rc;
            r->phase = DONE;
            break;
        case DONE:
            *done = 1;
            return rc;
        }
        if (rc != MPI_SUCCESS)
            return rc;
    }
}

/* After an error: no request may stay active on the memory that the next call reuses. The
 * receives still posted are cancelled (one that already matched completes), and every
 * request is completed; messages the other ranks sent that no receive takes any more carry
 * this call's tags, which the next calls do not use. */
static int rsag_end(apsmpi_op *op, int rc)
{
    struct rsag *r = op->memory;
    const apsmpi_rsag_plan *p = r->p;
    MPI_Request *recvs[] = {r->c_recv, r->r_recv};
    size_t nrecvs[] = {apsmpi_rsag_request_count(p, APSMPI_RSAG_CONTRIB_IN),
                       apsmpi_rsag_request_count(p, APSMPI_RSAG_RESULT_IN)};

    if (rc == MPI_SUCCESS)
        return rc;
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < nrecvs[i]; j++)
            if (recvs[i][j] != MPI_REQUEST_NULL) {
                PMPI_Cancel(&recvs[i][j]);
                PMPI_Wait(&recvs[i][j], MPI_STATUS_IGNORE);
            }
    PMPI_Waitall((int)apsmpi_rsag_request_count(p, APSMPI_RSAG_CONTRIB_OUT), r->c_send, MPI_STATUSES_IGNORE);
    PMPI_Waitall((int)apsmpi_rsag_request_count(p, APSMPI_RSAG_RESULT_OUT), r->r_send, MPI_STATUSES_IGNORE);
    return rc;
}

const apsmpi_algorithm apsmpi_rsag = {.name = "rsag",
                                      .private_comm = 1,
                                      .state = sizeof(struct rsag),
                                      .plan = rsag_plan,
                                      .start = rsag_start,
                                      .progress = rsag_progress,
                                      .end = rsag_end};
