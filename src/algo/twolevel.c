/* twolevel.c: the two-level schedule as a resumable operation: contributions summed within the group, partial sums across groups, finals gathered within the group. */
#include "algo/twolevel.h"

#include <string.h>

#include "algo/rsag.h"
#include "algo/send_window.h"
#include "algo/twolevel_plan.h"
#include "state/private_comm.h"

/* Where the operation is: summing its stripes' contributions within the group (and sending
 * their partials), summing its cells across groups (and sending their finals), taking the
 * other groups' finals of its stripes (and gathering them to the group), taking the group's
 * other stripes, then the sends completing. */
enum phase { GROUP_SUM, CROSS_SUM, FINALS, GATHER, DRAIN, DONE };

struct twolevel {
    const apsmpi_twolevel_plan *p;
    apsmpi_call *c;
    int blocking;
    unsigned char *packed; /* this rank's encoded input, stripe by stripe */
    unsigned char *second; /* the second encoded buffer: staging, partials, results */
    float *sum, *tmp;      /* fp32: a stripe's group sum, a decoded stripe */
    float *cells;          /* fp32: per own stripe, the sum across groups of its cell */
    float *out;
    MPI_Request *req;
    enum phase phase;
    int s, t;             /* the own stripe and the round awaited (GATHER: s the position) */
    int enc;              /* the next stripe to encode, by position in p->order */
    apsmpi_send_window w; /* its sends: on the private duplicate, through the window */
};

static MPI_Request *request(struct twolevel *o, enum apsmpi_twolevel_request_kind kind, int s, int t)
{
    return &o->req[apsmpi_twolevel_request(o->p, kind, s, t)];
}

static int send_msg(struct twolevel *o, apsmpi_rsag_msg m, enum apsmpi_twolevel_request_kind kind, int s, int t)
{
    return apsmpi_send_window_send(&o->w, (apsmpi_rsag_send){m, apsmpi_twolevel_request(o->p, kind, s, t),
                                                             kind != APSMPI_TWOLEVEL_REQ_CONTRIB_OUT});
}

/* Encodes the next stripe of this rank's input and sends it to its owner (this rank's own are
 * last and stay); 0 when all are encoded. */
static int encode_next(struct twolevel *o, int *rc)
{
    const apsmpi_twolevel_plan *p = o->p;
    int j;

    if (o->enc >= p->group_size)
        return 0;
    j = p->order[o->enc++];
    if (p->counts[j] > 0)
        apsmpi_call_encode(o->c, p->firsts[j], (size_t)p->counts[j], o->packed + p->offsets[j]);
    if (o->enc <= p->group_size - p->own && *rc == MPI_SUCCESS)
        *rc = send_msg(o, apsmpi_twolevel_contribution_out(p, j), APSMPI_TWOLEVEL_REQ_CONTRIB_OUT, j, 0);
    return 1;
}

static int encode_work(void *o, int *rc) { return encode_next(o, rc); }

/* Waits for req, encoding and sending contributions meanwhile. 1 when req is complete or *rc
 * holds an error; 0 when progress must return (not blocking, nothing left to encode). */
static int wait_working(struct twolevel *o, MPI_Request *req, int *rc)
{
    return apsmpi_send_window_await_working(&o->w, req, o->blocking, rc, encode_work, o);
}

static int post_recv(struct twolevel *o, unsigned char *buf, apsmpi_rsag_msg m, MPI_Request *req)
{
    return PMPI_Irecv(buf + m.at, (int)m.bytes, MPI_BYTE, m.peer, o->w.tag_base + m.tag, o->w.comm, req);
}

/* Every receive of the call, posted at its start. */
static int post_receives(struct twolevel *o)
{
    const apsmpi_twolevel_plan *p = o->p;
    int rc = MPI_SUCCESS;

    for (int s = 0; s < p->own; s++) {
        for (int t = 0; rc == MPI_SUCCESS && t < apsmpi_twolevel_rounds1(p); t++)
            rc = post_recv(o, o->second, apsmpi_twolevel_contribution_in(p, s, t),
                           request(o, APSMPI_TWOLEVEL_REQ_CONTRIB_IN, s, t));
        for (int t = 0; rc == MPI_SUCCESS && t < apsmpi_twolevel_rounds2(p); t++) {
            rc = post_recv(o, o->second, apsmpi_twolevel_partial_in(p, s, t),
                           request(o, APSMPI_TWOLEVEL_REQ_PARTIAL_IN, s, t));
            if (rc == MPI_SUCCESS)
                rc = post_recv(o, o->second, apsmpi_twolevel_final_in(p, s, t),
                               request(o, APSMPI_TWOLEVEL_REQ_FINAL_IN, s, t));
        }
    }
    for (int pos = 0; rc == MPI_SUCCESS && pos < p->group_size - p->own; pos++) {
        int j = apsmpi_twolevel_gather_stripe(p, pos);
        rc = post_recv(o, o->second, apsmpi_twolevel_gather_in(p, j), request(o, APSMPI_TWOLEVEL_REQ_GATHER_IN, j, 0));
    }
    return rc;
}

/* Own stripe s summed over the group: its partial of each other group's cell encoded once and
 * sent, its own group's cell kept in fp32 (the start of the sum across groups). */
static int send_partials(struct twolevel *o, int s)
{
    const apsmpi_twolevel_plan *p = o->p;
    int i = apsmpi_twolevel_own_stripe(p, s), rc = MPI_SUCCESS;
    size_t first = apsmpi_twolevel_stripe_first(p, i);

    for (int t = 0; rc == MPI_SUCCESS && t < apsmpi_twolevel_rounds2(p); t++) {
        int g = apsmpi_twolevel_send_group(p, t);
        size_t at = apsmpi_twolevel_cell_first(p, i, g), len = apsmpi_twolevel_cell_len(p, i, g);
        apsmpi_rsag_msg m = apsmpi_twolevel_partial_out(p, s, t);
        if (len > 0)
            apsmpi_call_encode_partial(o->c, o->sum + (at - first), len, at, o->second + m.at);
        rc = send_msg(o, m, APSMPI_TWOLEVEL_REQ_PARTIAL_OUT, s, t);
    }
    memcpy(o->cells + (size_t)s * p->cell, o->sum + (apsmpi_twolevel_cell_first(p, i, p->group) - first),
           apsmpi_twolevel_cell_len(p, i, p->group) * sizeof(float));
    return rc;
}

/* Level 1: each own stripe's contributions, the group's in round order, then this rank's own
 * (encoded and decoded like the others), summed in fp32; then its partials go. 0 when
 * progress must return. */
static int group_sum(struct twolevel *o, int *rc)
{
    const apsmpi_twolevel_plan *p = o->p;

    for (; *rc == MPI_SUCCESS && o->s < p->own; o->s++, o->t = 0) {
        int i = apsmpi_twolevel_own_stripe(p, o->s), own_pos = p->group_size - p->own + o->s;
        size_t first = p->firsts[i], len = (size_t)p->counts[i];

        for (; *rc == MPI_SUCCESS && o->t < apsmpi_twolevel_rounds1(p); o->t++) {
            if (!wait_working(o, request(o, APSMPI_TWOLEVEL_REQ_CONTRIB_IN, o->s, o->t), rc))
                return 0;
            if (*rc == MPI_SUCCESS && len > 0)
                apsmpi_call_add_contribution(o->c, o->second + apsmpi_twolevel_contribution_in(p, o->s, o->t).at, first,
                                             len, o->sum, o->t == 0, o->tmp);
        }
        while (*rc == MPI_SUCCESS && o->enc <= own_pos)
            encode_next(o, rc);
        if (*rc == MPI_SUCCESS && len > 0)
            apsmpi_call_add_contribution(o->c, o->packed + p->offsets[i], first, len, o->sum,
                                         apsmpi_twolevel_rounds1(p) == 0, o->tmp);
        if (*rc == MPI_SUCCESS)
            *rc = send_partials(o, o->s);
    }
    return 1;
}

/* Level 2: each own stripe's cell of this rank's group, the other groups' partials added in
 * round order to its own, encoded once, sent to them and decoded here. */
static int cross_sum(struct twolevel *o, int *rc)
{
    const apsmpi_twolevel_plan *p = o->p;

    for (; *rc == MPI_SUCCESS && o->s < p->own; o->s++, o->t = 0) {
        int i = apsmpi_twolevel_own_stripe(p, o->s);
        size_t first = apsmpi_twolevel_cell_first(p, i, p->group), len = apsmpi_twolevel_cell_len(p, i, p->group);
        float *cell = o->cells + (size_t)o->s * p->cell;
        apsmpi_rsag_msg m = apsmpi_twolevel_final_out(p, o->s, 0);

        for (; *rc == MPI_SUCCESS && o->t < apsmpi_twolevel_rounds2(p); o->t++) {
            if (!apsmpi_send_window_await(&o->w, request(o, APSMPI_TWOLEVEL_REQ_PARTIAL_IN, o->s, o->t), o->blocking,
                                          rc))
                return 0;
            if (*rc == MPI_SUCCESS && len > 0)
                apsmpi_call_add_result(o->c, o->second + apsmpi_twolevel_partial_in(p, o->s, o->t).at, first, len, cell,
                                       0, o->tmp);
        }
        if (*rc != MPI_SUCCESS)
            return 1;
        if (len > 0)
            apsmpi_call_encode_sum(o->c, cell, len, first, o->second + m.at);
        for (int t = 0; *rc == MPI_SUCCESS && t < apsmpi_twolevel_rounds2(p); t++)
            *rc = send_msg(o, apsmpi_twolevel_final_out(p, o->s, t), APSMPI_TWOLEVEL_REQ_FINAL_OUT, o->s, t);
        if (*rc == MPI_SUCCESS && len > 0)
            apsmpi_call_decode_result(o->c, o->second + m.at, m.bytes, first, len, o->out + first);
    }
    return 1;
}

/* Decodes cell (i, g)'s final from results into out. */
static void decode_final(struct twolevel *o, int i, int g)
{
    const apsmpi_twolevel_plan *p = o->p;
    size_t first = apsmpi_twolevel_cell_first(p, i, g), len = apsmpi_twolevel_cell_len(p, i, g);

    if (len > 0)
        apsmpi_call_decode_result(o->c, o->second + apsmpi_twolevel_slot(p, i, g),
                                  apsmpi_twolevel_slot(p, i, g + 1) - apsmpi_twolevel_slot(p, i, g), first, len,
                                  o->out + first);
}

/* Level 2's end: the other groups' finals of each own stripe, decoded; then the stripe's G
 * finals go, as they came, to the rest of the group. */
static int finals(struct twolevel *o, int *rc)
{
    const apsmpi_twolevel_plan *p = o->p;

    for (; *rc == MPI_SUCCESS && o->s < p->own; o->s++, o->t = 0) {
        int i = apsmpi_twolevel_own_stripe(p, o->s);
        for (; *rc == MPI_SUCCESS && o->t < apsmpi_twolevel_rounds2(p); o->t++) {
            if (!apsmpi_send_window_await(&o->w, request(o, APSMPI_TWOLEVEL_REQ_FINAL_IN, o->s, o->t), o->blocking, rc))
                return 0;
            if (*rc == MPI_SUCCESS)
                decode_final(o, i, apsmpi_twolevel_recv_group(p, o->t));
        }
        for (int t = 0; *rc == MPI_SUCCESS && t < apsmpi_twolevel_rounds1(p); t++)
            *rc = send_msg(o, apsmpi_twolevel_gather_out(p, o->s, t), APSMPI_TWOLEVEL_REQ_GATHER_OUT, o->s, t);
    }
    return 1;
}

/* Level 3: the group's other stripes, each stripe's G finals decoded as they arrive. */
static int gather(struct twolevel *o, int *rc)
{
    const apsmpi_twolevel_plan *p = o->p;

    for (; *rc == MPI_SUCCESS && o->s < p->group_size - p->own; o->s++) {
        int j = apsmpi_twolevel_gather_stripe(p, o->s);
        if (!apsmpi_send_window_await(&o->w, request(o, APSMPI_TWOLEVEL_REQ_GATHER_IN, j, 0), o->blocking, rc))
            return 0;
        for (int g = 0; *rc == MPI_SUCCESS && g < p->groups; g++)
            decode_final(o, j, g);
    }
    return 1;
}

/* The sends complete (their buffers are reused by the next call): the queue empties, then
 * every request (the receives are complete, so MPI_REQUEST_NULL). */
static int drain(struct twolevel *o, int *rc)
{
    int done = 0;

    if (!apsmpi_send_window_flush(&o->w, o->blocking, rc))
        return 0;
    if (*rc != MPI_SUCCESS)
        return 1;
    if (o->blocking) {
        *rc = PMPI_Waitall((int)o->p->requests, o->req, MPI_STATUSES_IGNORE);
        return 1;
    }
    *rc = PMPI_Testall((int)o->p->requests, o->req, &done, MPI_STATUSES_IGNORE);
    return *rc != MPI_SUCCESS || done;
}

_Static_assert(sizeof(apsmpi_twolevel_plan) <= APSMPI_PLAN_OWN_BYTES, "the two-level plan fits in apsmpi_plan");

static void twolevel_plan(apsmpi_plan *pl)
{
    const apsmpi_plan_in *in = &pl->in;
    const apsmpi_rsag_in *own_in = in->algo_in;
    apsmpi_twolevel_plan *p = apsmpi_plan_own(pl, apsmpi_twolevel_plan);

    apsmpi_twolevel_plan_init(p, in->f, in->nranks, in->rank, in->n, in->block_len, own_in ? own_in->window : 0,
                              sizeof(MPI_Request));
    pl->packed_bytes = p->packed_bytes;
    pl->result_bytes = p->result_bytes;
    pl->memory_bytes = p->memory_bytes;
    pl->addends = 1; /* nothing is summed in the wire format */
}

static int twolevel_start(apsmpi_op *op)
{
    struct twolevel *o = op->memory;
    apsmpi_twolevel_plan *p = apsmpi_plan_own(op->plan, apsmpi_twolevel_plan);
    unsigned char *mem = apsmpi_op_memory(op);
    apsmpi_call *c = op->c;
    int rc;

    apsmpi_twolevel_plan_bind(p, mem);
    *o = (struct twolevel){.p = p,
                           .c = c,
                           .blocking = op->blocking,
                           .packed = c->packed,
                           .second = c->result,
                           .sum = (float *)(void *)(mem + p->at_sum),
                           .tmp = (float *)(void *)(mem + p->at_tmp),
                           .cells = (float *)(void *)(mem + p->at_cells),
                           .out = op->out,
                           .req = (MPI_Request *)(void *)(mem + p->at_requests),
                           .phase = GROUP_SUM};
    for (size_t i = 0; i < p->requests; i++)
        o->req[i] = MPI_REQUEST_NULL;
    o->w = (apsmpi_send_window){.c = c, .req = o->req, .buf = {o->packed, o->second}};
    o->w.q = (apsmpi_rsag_sendq){.queue = (apsmpi_rsag_send *)(void *)(mem + p->at_queue), .window = p->window};
    apsmpi_call_start(c, &(apsmpi_segments){p->group_size, p->counts, p->firsts, p->offsets, p->order});
    rc = apsmpi_private_comm_call(c->comm, c->priv, &o->w.comm, &o->w.tag_base);
    return rc == MPI_SUCCESS ? post_receives(o) : rc;
}

static int twolevel_progress(apsmpi_op *op, int *done)
{
    struct twolevel *o = op->memory;
    int rc = MPI_SUCCESS;

    *done = 0;
    for (;;) {
        int (*step)(struct twolevel *, int *) = o->phase == GROUP_SUM   ? group_sum
                                                : o->phase == CROSS_SUM ? cross_sum
                                                : o->phase == FINALS    ? finals
                                                : o->phase == GATHER    ? gather
                                                : o->phase == DRAIN     ? drain
                                                                        : NULL;
        if (step == NULL) {
            *done = 1;
            return rc;
        }
        if (!step(o, &rc))
            return rc;
        if (rc != MPI_SUCCESS)
            return rc;
        o->phase = (enum phase)(o->phase + 1);
        o->s = o->t = 0;
    }
}

/* After an error: the receives still posted are cancelled (one that already matched
 * completes) and every request completes, so none stays active on the memory that the next
 * call reuses; messages no receive takes any more carry this call's tags. */
static int twolevel_end(apsmpi_op *op, int rc)
{
    struct twolevel *o = op->memory;
    const apsmpi_twolevel_plan *p = o->p;

    if (rc == MPI_SUCCESS)
        return rc;
    for (int kind = 0; kind < APSMPI_TWOLEVEL_REQ_KINDS; kind++) {
        size_t first = apsmpi_twolevel_request(p, (enum apsmpi_twolevel_request_kind)kind, 0, 0);
        size_t count = apsmpi_twolevel_request_count(p, (enum apsmpi_twolevel_request_kind)kind);
        int receives = kind == APSMPI_TWOLEVEL_REQ_CONTRIB_IN || kind == APSMPI_TWOLEVEL_REQ_PARTIAL_IN ||
                       kind == APSMPI_TWOLEVEL_REQ_FINAL_IN || kind == APSMPI_TWOLEVEL_REQ_GATHER_IN;
        for (size_t i = first; receives && i < first + count; i++)
            if (o->req[i] != MPI_REQUEST_NULL)
                PMPI_Cancel(&o->req[i]);
    }
    PMPI_Waitall((int)p->requests, o->req, MPI_STATUSES_IGNORE);
    return rc;
}

const apsmpi_algorithm apsmpi_twolevel = {.name = "two-level",
                                          .private_comm = 1,
                                          .state = sizeof(struct twolevel),
                                          .plan = twolevel_plan,
                                          .start = twolevel_start,
                                          .progress = twolevel_progress,
                                          .end = twolevel_end};
