/* one_collective.c: a call summed by one MPI collective on its encoded data, with the ring's packed sum op. */
#include "algo/one_collective.h"

#include "algo/ring_sumop.h"
#include "core/packed_layout.h"

struct collective {
    int count;       /* an allreduce's elements, as the one segment of apsmpi_call_start */
    int *gcounts;    /* a reduce-scatter's packing groups per rank */
    size_t mine;     /* the first element of this rank's segment */
    MPI_Request req; /* a request's non-blocking collective */
};

static int collective_call(apsmpi_op *op, MPI_Request *req);

static void collective_plan(apsmpi_plan *pl)
{
    const apsmpi_plan_in *in = &pl->in;

    if (in->kind == APSMPI_ALLREDUCE) {
        pl->packed_bytes = apsmpi_packed_bytes(in->f, in->n);
        return;
    }
    pl->packed_bytes = apsmpi_packed_segments(in->f, in->counts, in->nranks, NULL, NULL);
    pl->result_bytes = apsmpi_packed_bytes(in->f, (size_t)in->counts[in->rank]) + 1;
    pl->memory_bytes = (size_t)in->nranks * sizeof(int);
}

/* Encodes the whole input: a reduce-scatter's segments each into whole packing groups of its
 * own, so that segment boundaries fall on group boundaries. */
static int collective_start(apsmpi_op *op)
{
    struct collective *k = op->memory;
    const apsmpi_plan_in *in = &op->plan->in;
    apsmpi_call *c = op->c;
    size_t first = 0, offset = 0;

    *k = (struct collective){.count = (int)in->n, .gcounts = apsmpi_op_memory(op), .req = MPI_REQUEST_NULL};
    if (in->kind == APSMPI_ALLREDUCE) {
        apsmpi_call_start(c, &(apsmpi_segments){1, &k->count, NULL, NULL, NULL});
        apsmpi_call_encode(c, 0, c->n, c->packed);
        return op->blocking ? MPI_SUCCESS : collective_call(op, &k->req);
    }
    apsmpi_call_start(c, &(apsmpi_segments){in->nranks, in->counts, NULL, NULL, NULL});
    for (int r = 0; r < in->nranks; r++) {
        k->gcounts[r] = (int)apsmpi_groups_for(in->f, (size_t)in->counts[r]);
        apsmpi_call_encode(c, first, (size_t)in->counts[r], (char *)c->packed + offset);
        if (r == in->rank)
            k->mine = first;
        first += (size_t)in->counts[r];
        offset += apsmpi_packed_bytes(in->f, (size_t)in->counts[r]);
    }
    return op->blocking ? MPI_SUCCESS : collective_call(op, &k->req);
}

/* MPI's collective on the encoded data: blocking (req NULL), or its non-blocking form. */
static int collective_call(apsmpi_op *op, MPI_Request *req)
{
    struct collective *k = op->memory;
    const apsmpi_plan_in *in = &op->plan->in;
    apsmpi_call *c = op->c;
    MPI_Datatype group = apsmpi_ring_group_type();
    MPI_Op sum = apsmpi_ring_sumop();
    int groups = (int)apsmpi_groups_for(in->f, c->n);

    if (in->kind == APSMPI_ALLREDUCE)
        return req ? PMPI_Iallreduce(MPI_IN_PLACE, c->packed, groups, group, sum, c->coll, req)
                   : PMPI_Allreduce(MPI_IN_PLACE, c->packed, groups, group, sum, c->coll);
    if (in->kind == APSMPI_REDUCE_SCATTER_BLOCK)
        return req ? PMPI_Ireduce_scatter_block(c->packed, c->result, k->gcounts[0], group, sum, c->coll, req)
                   : PMPI_Reduce_scatter_block(c->packed, c->result, k->gcounts[0], group, sum, c->coll);
    return req ? PMPI_Ireduce_scatter(c->packed, c->result, k->gcounts, group, sum, c->coll, req)
               : PMPI_Reduce_scatter(c->packed, c->result, k->gcounts, group, sum, c->coll);
}

/* The collective (made now if blocking, else tested), then this rank's result decoded. */
static int collective_progress(apsmpi_op *op, int *done)
{
    struct collective *k = op->memory;
    const apsmpi_plan_in *in = &op->plan->in;
    apsmpi_call *c = op->c;
    int rc;

    *done = 1;
    if (op->blocking) {
        rc = collective_call(op, NULL);
    } else {
        rc = PMPI_Test(&k->req, done, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !*done)
            return rc;
        *done = 1;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (in->kind == APSMPI_ALLREDUCE)
        apsmpi_call_decode(c, c->packed, 0, c->n, op->out);
    else
        apsmpi_call_decode(c, c->result, k->mine, (size_t)in->counts[in->rank], op->out);
    return rc;
}

/* Nothing stays in flight once progress is done, or after an error (a request's collective
 * that failed to start or to complete is not active). */
static int collective_end(apsmpi_op *op, int rc) { return rc; }

const apsmpi_algorithm apsmpi_one_collective = {.name = "one collective",
                                                .private_comm = 0,
                                                .state = sizeof(struct collective),
                                                .plan = collective_plan,
                                                .start = collective_start,
                                                .progress = collective_progress,
                                                .end = collective_end};
