/* node_path.c: the node path: fp32 reduce-scatter within the node, compressed across nodes, allgather within, in batches, as a resumable operation. */
#include "algo/node_path.h"

#include "algo/node_plan.h"

/* One batch of the buffer in flight: its parts (counts and displacements stay valid while
 * its non-blocking collectives run), the node's fp32 sum of this rank's part, requests. */
struct batch {
    size_t first, n;
    int *counts, *firsts;
    float *part;
    MPI_Request reduce, gather;
};

/* Where batch k is: waiting for its slot (batch k-3 gathered) and starting its node sum;
 * then batch k-1: waiting for its node sum, its part crossing nodes, its gather started. */
enum step { START_BATCH, AWAIT_SUM, CROSS, GATHER, FINISHED };

struct node_op {
    const apsmpi_node_plan *p;
    const apsmpi_comm_info *info;
    const apsmpi_part_reduction *part;
    void *part_state;
    const float *in;
    float *out;
    int blocking;
    size_t k; /* the loop's batch: k is started, k-1 summed across nodes */
    enum step step;
    int part_rc; /* what starting batch k-1's part across nodes returned */
    struct batch b[APSMPI_NODE_SLOTS];
};

/* 1 when req is complete or *rc holds an error; 0 when progress must return. */
static int await(const struct node_op *o, MPI_Request *req, int *rc)
{
    int done = 0;
    if (o->blocking) {
        *rc = PMPI_Wait(req, MPI_STATUS_IGNORE);
        return 1;
    }
    *rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
    return *rc != MPI_SUCCESS || done;
}

/* Starts the node's fp32 reduce-scatter of batch k. */
static int start_batch(struct node_op *o, struct batch *b, size_t k)
{
    const apsmpi_node_plan *p = o->p;

    b->first = apsmpi_node_batch_first(p, k);
    b->n = apsmpi_node_batch_len(p, k);
    apsmpi_node_parts(b->n, p->unit, p->min_node_size, p->node_size, b->counts, b->firsts);
    return PMPI_Ireduce_scatter(o->in + b->first, b->part, b->counts, MPI_FLOAT, MPI_SUM, o->info->node, &b->reduce);
}

/* This rank's part of batch b in out, where the part's compressed reduction puts it. */
static size_t part_at(const struct node_op *o, const struct batch *b)
{
    return b->first + (size_t)b->firsts[o->p->node_rank];
}

_Static_assert(sizeof(apsmpi_node_plan) <= APSMPI_PLAN_OWN_BYTES, "the node path's plan fits in apsmpi_plan");

static void node_plan(apsmpi_plan *pl)
{
    const apsmpi_plan_in *in = &pl->in;
    const apsmpi_node_path_in *nodes = in->algo_in;
    apsmpi_node_plan *p = apsmpi_plan_own(pl, apsmpi_node_plan);
    /* batches of a few pieces per node rank: the node's fp32 steps overlap the network */
    size_t batch = in->piece * 4 * (size_t)nodes->min_node_size;

    apsmpi_node_plan_init(p, in->n, nodes->unit, batch, nodes->node_size, nodes->node_rank, nodes->min_node_size,
                          nodes->part_state_bytes);
    pl->memory_bytes = p->memory_bytes;
}

static int node_start(apsmpi_op *op)
{
    struct node_op *o = op->memory;
    const apsmpi_node_plan *p = apsmpi_plan_own(op->plan, apsmpi_node_plan);
    const apsmpi_node_path_ctx *ctx = op->algo_ctx;
    char *mem = apsmpi_op_memory(op);
    int *ints = (int *)(void *)mem, L = p->node_size;
    float *parts = (float *)(void *)(mem + p->at_parts);

    *o = (struct node_op){.p = p,
                          .info = ctx->nodes,
                          .part = ctx->part,
                          .part_state = mem + p->at_part_state,
                          .in = op->c->in,
                          .out = op->out,
                          .blocking = op->blocking,
                          .step = START_BATCH};
    for (int i = 0; i < APSMPI_NODE_SLOTS; i++)
        o->b[i] = (struct batch){.counts = ints + 2 * i * L,
                                 .firsts = ints + (2 * i + 1) * L,
                                 .part = parts + (size_t)i * p->part_max,
                                 .reduce = MPI_REQUEST_NULL,
                                 .gather = MPI_REQUEST_NULL};
    return MPI_SUCCESS;
}

/* Batch k is summed within the node while batch k-1 crosses nodes and batch k-2 is gathered:
 * the links and the shared memory work at once. */
static int node_progress(apsmpi_op *op, int *done)
{
    struct node_op *o = op->memory;
    const apsmpi_node_plan *p = o->p;
    int rc = MPI_SUCCESS, part_done, me = p->node_rank;

    *done = 0;
    while (rc == MPI_SUCCESS) {
        struct batch *now = &o->b[o->k % APSMPI_NODE_SLOTS],
                     *prev = &o->b[(o->k + APSMPI_NODE_SLOTS - 1) % APSMPI_NODE_SLOTS];
        switch (o->step) {
        case START_BATCH:
            if (o->k < p->batches) {
                if (!await(o, &now->gather, &rc)) /* batch k-3's arrays and buffer */
                    return rc;
                if (rc == MPI_SUCCESS)
                    rc = start_batch(o, now, o->k);
            }
            o->step = o->k > 0 ? AWAIT_SUM : GATHER;
            break;
        case AWAIT_SUM:
            if (!await(o, &prev->reduce, &rc))
                return rc;
            if (rc != MPI_SUCCESS)
                break;
            o->step = GATHER;
            if (o->info->cross != MPI_COMM_NULL && prev->counts[me] > 0) {
                o->part_rc = o->part->start(o->part_state, op, prev->part, o->out + part_at(o, prev),
                                            (size_t)prev->counts[me], part_at(o, prev), o->info->cross);
                o->step = CROSS;
            }
            break;
        case CROSS: /* once started, a part is always ended: its call is counted, its GPU state ended */
            rc = o->part_rc;
            if (rc == MPI_SUCCESS)
                rc = o->part->progress(o->part_state, &part_done);
            if (rc == MPI_SUCCESS && !part_done)
                return rc;
            rc = o->part->end(o->part_state, rc);
            o->step = GATHER;
            break;
        case GATHER:
            if (o->k > 0)
                rc = PMPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, o->out + prev->first, prev->counts,
                                      prev->firsts, MPI_FLOAT, o->info->node, &prev->gather);
            o->step = ++o->k <= p->batches ? START_BATCH : FINISHED;
            break;
        case FINISHED:
            for (int i = 0; rc == MPI_SUCCESS && i < APSMPI_NODE_SLOTS; i++) {
                if (!await(o, &o->b[i].reduce, &rc) || (rc == MPI_SUCCESS && !await(o, &o->b[i].gather, &rc)))
                    return rc;
            }
            *done = 1;
            return rc;
        }
    }
    return rc;
}

/* After an error: every batch's collectives complete (they cannot be cancelled). */
static int node_end(apsmpi_op *op, int rc)
{
    struct node_op *o = op->memory;

    if (rc == MPI_SUCCESS)
        return rc;
    for (int i = 0; i < APSMPI_NODE_SLOTS; i++) {
        PMPI_Wait(&o->b[i].reduce, MPI_STATUS_IGNORE);
        PMPI_Wait(&o->b[i].gather, MPI_STATUS_IGNORE);
    }
    return rc;
}

const apsmpi_algorithm apsmpi_node_path = {.name = "node path",
                                           .private_comm = 0,
                                           .state = sizeof(struct node_op),
                                           .plan = node_plan,
                                           .start = node_start,
                                           .progress = node_progress,
                                           .end = node_end};
