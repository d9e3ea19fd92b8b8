/* reductions.c: MPI_Allreduce and MPI_Reduce_scatter(_block) on floats: eligibility, the route, the plan, the agreement and the run, written once for every reduction. */
#include "entry/reduction.h"

#include <limits.h>
#include <stdlib.h>

#include "algo/node_path.h"
#include "algo/node_plan.h"
#include "algo/one_collective.h"
#include "algo/pieces.h"
#include "algo/ring.h"
#include "algo/rsag.h"
#include "call/device_steps.h"
#include "core/log.h"
#include "core/packed_layout.h"
#include "core/units.h"
#include "state/comm_prepare.h"
#include "state/end_job.h"
#include "state/private_comm.h"
#include "state/runtime_state.h"
#include "state/stats.h"

static int is_single_float(MPI_Datatype dt) { return dt == MPI_FLOAT || dt == MPI_REAL || dt == MPI_REAL4; }

/* The communicator's name is one APSMPI_COMM_INCLUDE lets in (when set) and
 * APSMPI_COMM_EXCLUDE does not keep out. */
static int selected_by_name(const apsmpi_config *cfg, MPI_Comm comm)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    if (cfg->comm_include == NULL && cfg->comm_exclude == NULL)
        return 1;
    if (PMPI_Comm_get_name(comm, name, &len) != MPI_SUCCESS)
        return 0;
    return (cfg->comm_include == NULL || apsmpi_config_names_match(cfg->comm_include, name)) &&
           (cfg->comm_exclude == NULL || !apsmpi_config_names_match(cfg->comm_exclude, name));
}

/* Decided from the arguments alone, which every rank passes alike: no communication. Not
 * eligible: a communicator of one rank (nothing is sent, so compressing only loses
 * precision), a send buffer that is the receive buffer without MPI_IN_PLACE (an error
 * that MPI itself reports, on every rank alike since the ranks' calls must match), and a
 * size or communicator name that APSMPI_MAX_BYTES or APSMPI_COMM_INCLUDE/EXCLUDE keep exact.
 * Returns 0 (eligible) or the statistic of the reason (stats.h's APSMPI_STAT_PASS_*). */
static int eligibility(const apsmpi_runtime *rt, const void *sendbuf, const void *recvbuf, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, long long elements)
{
    int inter, size;

    if (op != MPI_SUM || !is_single_float(datatype))
        return APSMPI_STAT_PASS_NOT_FLOAT_SUM;
    if (rt->codec == NULL)
        return APSMPI_STAT_PASS_DISABLED;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2)
        return APSMPI_STAT_PASS_COMM;
    if (elements <= 0 || (unsigned long long)elements * sizeof(float) < rt->cfg.min_bytes)
        return APSMPI_STAT_PASS_SMALL;
    if (rt->cfg.max_bytes > 0 && (unsigned long long)elements * sizeof(float) > rt->cfg.max_bytes)
        return APSMPI_STAT_PASS_LARGE;
    if (sendbuf == recvbuf)
        return APSMPI_STAT_PASS_SAME_BUFFER;
    return selected_by_name(&rt->cfg, comm) ? 0 : APSMPI_STAT_PASS_NAME;
}

/* The number of elements over all ranks' counts, or -1 if a count is negative. */
static long long total_count(const int *counts, int nranks)
{
    long long total = 0;
    for (int r = 0; r < nranks; r++) {
        if (counts[r] < 0)
            return -1;
        total += counts[r];
    }
    return total;
}

int apsmpi_reduction_eligibility(int kind, const void *sendbuf, const void *recvbuf, const int *recvcounts, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, size_t *total)
{
    long long elements = count;
    int nranks, why;

    if (op != MPI_SUM || !is_single_float(datatype))
        return APSMPI_STAT_PASS_NOT_FLOAT_SUM;
    if (kind != APSMPI_ALLREDUCE) {
        if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
            return APSMPI_STAT_PASS_COMM;
        if (kind == APSMPI_REDUCE_SCATTER_BLOCK)
            elements = (long long)count * nranks;
        else
            elements = recvcounts == NULL ? -1 : total_count(recvcounts, nranks);
    }
    why = eligibility(&apsmpi_rt, sendbuf, recvbuf, datatype, op, comm, elements);
    *total = why == 0 ? (size_t)elements : 0;
    return why;
}

int *apsmpi_reduction_int_counts(const MPI_Count *counts, MPI_Comm comm, int *why)
{
    int nranks, *out;

    *why = APSMPI_STAT_PASS_COMM;
    if (comm == MPI_COMM_NULL || counts == NULL || PMPI_Comm_size(comm, &nranks) != MPI_SUCCESS ||
        (out = malloc((size_t)nranks * sizeof *out)) == NULL)
        return NULL;
    for (int r = 0; r < nranks; r++) {
        if (counts[r] > INT_MAX) {
            *why = APSMPI_STAT_PASS_LARGE_COUNT;
            free(out);
            return NULL;
        }
        out[r] = (int)counts[r];
    }
    *why = 0;
    return out;
}

int apsmpi_passed_through(int why, int rc)
{
    apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);
    apsmpi_stats_add(why, 1);
    return rc;
}

/* ---- the steps of a reduction ---- */

static void end_fp32(apsmpi_reduction *r, int rc);

static int finish(apsmpi_reduction *r, int rc)
{
    r->step = APSMPI_STEP_DONE;
    return r->rc = rc;
}

/* Ends a call that went (or failed) outside compression: no statistics of compression. */
static int finish_fp32(apsmpi_reduction *r, int rc)
{
    rc = apsmpi_call_end_fp32(&r->c, rc);
    if (rc != MPI_SUCCESS)
        apsmpi_stats_add(APSMPI_STAT_FP32_ERROR, 1);
    return finish(r, rc);
}

/* 1 when req is complete or *rc holds an error; 0 when progress must return. */
static int await(const apsmpi_reduction *r, MPI_Request *req, int *rc)
{
    int done = 0;
    if (r->blocking) {
        *rc = PMPI_Wait(req, MPI_STATUS_IGNORE);
        return 1;
    }
    *rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
    return *rc != MPI_SUCCESS || done;
}

/* The job's own reduce-scatter, on the buffers given: blocking, or its non-blocking form. */
static int reduce_scatter_pmpi(apsmpi_reduction *r, const void *sendbuf, void *recvbuf)
{
    MPI_Request *req = r->blocking ? NULL : &r->req;

    if (r->kind == APSMPI_REDUCE_SCATTER_BLOCK)
        return req ? PMPI_Ireduce_scatter_block(sendbuf, recvbuf, r->count, r->datatype, r->op, r->c.coll, req)
                   : PMPI_Reduce_scatter_block(sendbuf, recvbuf, r->count, r->datatype, r->op, r->c.coll);
    return req ? PMPI_Ireduce_scatter(sendbuf, recvbuf, r->recvcounts, r->datatype, r->op, r->c.coll, req)
               : PMPI_Reduce_scatter(sendbuf, recvbuf, r->recvcounts, r->datatype, r->op, r->c.coll);
}

/* The job's own allreduce, on the buffers given: blocking, or its non-blocking form. */
static int allreduce_pmpi(apsmpi_reduction *r, const void *sendbuf, void *recvbuf)
{
    if (r->blocking)
        return PMPI_Allreduce(sendbuf, recvbuf, r->count, r->datatype, r->op, r->c.coll);
    return PMPI_Iallreduce(sendbuf, recvbuf, r->count, r->datatype, r->op, r->c.coll, &r->req);
}

/* A host buffer of `bytes` bytes (page-locked, or plain where the thread's GPU state could not
 * be set up) holding a copy of the GPU call's input, for its fp32 path; NULL if there is none
 * (no plugin: then the job's buffers go to MPI as they are). */
static float *host_copy_of_input(apsmpi_call *c, size_t bytes, size_t in_bytes)
{
    float *h = apsmpi_device_fp32_buffer(c, bytes);

    if (h == NULL)
        APSMPI_ERROR("no host memory to send a GPU buffer in fp32: handed to MPI as it is");
    else
        apsmpi_device_copy(c, h, c->in, in_bytes); /* a failure is reported at the end of the call */
    return h;
}

/* The fp32 path of an eligible call: the job's own call for host buffers; for GPU buffers the
 * same call on page-locked host copies, since the MPI is not CUDA-aware. Blocking, it ends
 * the reduction; else it is posted (APSMPI_STEP_FP32 waits for it). */
static void start_fp32(apsmpi_reduction *r)
{
    apsmpi_call *c = &r->c;
    size_t all = r->total * sizeof(float);
    size_t mine = r->kind == APSMPI_ALLREDUCE ? all : r->counts ? (size_t)r->counts[c->rank] * sizeof(float) : 0;
    int host = !apsmpi_device_on_gpu(c) || (r->kind != APSMPI_ALLREDUCE && r->counts == NULL);
    int rc;

    r->step = APSMPI_STEP_FP32;
    r->host = host ? NULL : host_copy_of_input(c, r->kind == APSMPI_ALLREDUCE ? all : all + mine, all);
    if (r->host == NULL)
        rc = r->kind == APSMPI_ALLREDUCE ? allreduce_pmpi(r, r->sendbuf, r->recvbuf)
                                         : reduce_scatter_pmpi(r, r->sendbuf, r->recvbuf);
    else
        rc = r->kind == APSMPI_ALLREDUCE ? allreduce_pmpi(r, MPI_IN_PLACE, r->host)
                                         : reduce_scatter_pmpi(r, r->host, r->host + r->total);
    if (r->blocking || rc != MPI_SUCCESS)
        end_fp32(r, rc);
}

/* Once the fp32 call is complete: a GPU call's result copied back from the host. */
static void end_fp32(apsmpi_reduction *r, int rc)
{
    apsmpi_call *c = &r->c;

    if (rc == MPI_SUCCESS && r->host != NULL) {
        if (r->kind == APSMPI_ALLREDUCE)
            apsmpi_device_copy(c, r->recvbuf, r->host, r->total * sizeof(float));
        else
            apsmpi_device_copy(c, r->recvbuf, r->host + r->total, (size_t)r->counts[c->rank] * sizeof(float));
    }
    finish_fp32(r, rc);
}

/* The route: decided from the communicator's node layout (the same on all its ranks), the
 * settings, and whether any rank's buffers are on a GPU: a GPU call never takes the node
 * path, whose fp32 steps MPI cannot do on GPU memory. Where the node path is possible (an
 * allreduce with rsag on several nodes, some with several ranks), the ranks agree on that in
 * one small MAX reduction, so that a job mixing host and GPU buffers across ranks still
 * takes one route on every rank. */
static void route(apsmpi_reduction *r)
{
    const apsmpi_runtime *rt = r->c.rt;
    int rc = MPI_SUCCESS;

    /* a request's layout is held from its start; a blocking call finds it (and prepares the
     * communicator for requests: state/comm_prepare.h) */
    if (r->info == NULL) {
        rc = apsmpi_comm_info_get(r->comm, rt->cfg.test_node_of_rank, &r->info);
        if (rc == MPI_SUCCESS && !r->info->prepare_tried)
            rc = apsmpi_comm_prepare(r->comm);
    }
    if (rc != MPI_SUCCESS) {
        finish_fp32(r, rc);
        return;
    }
    apsmpi_comm_info_announce(r->info, rt->cfg.intranode == APSMPI_INTRANODE_PASS);
    r->step = APSMPI_STEP_PLAN;
    if (r->info->nnodes == 1 && rt->cfg.intranode == APSMPI_INTRANODE_PASS) {
        apsmpi_stats_add(APSMPI_STAT_CALLS_ONE_NODE, 1);
        start_fp32(r);
    } else if (r->kind == APSMPI_ALLREDUCE && r->info->nnodes > 1 && r->info->max_node_size > 1 &&
               rt->cfg.algorithm == APSMPI_ALGORITHM_RSAG) {
        r->dev = apsmpi_device_on_gpu(&r->c);
        r->any_dev = r->dev;
        r->step = APSMPI_STEP_ROUTE_AGREE;
        rc = r->blocking ? PMPI_Allreduce(&r->dev, &r->any_dev, 1, MPI_INT, MPI_MAX, r->c.coll)
                         : PMPI_Iallreduce(&r->dev, &r->any_dev, 1, MPI_INT, MPI_MAX, r->c.coll, &r->req);
        if (rc != MPI_SUCCESS)
            finish_fp32(r, rc);
    }
}

static int part_start(void *state, const apsmpi_op *outer, const float *in, float *out, size_t n, size_t first,
                      MPI_Comm comm);
static int part_progress(void *state, int *done) { return apsmpi_reduction_progress(state, done); }
static int part_end(void *state, int rc) { return rc; }

/* One node's part of the node path, compressed across nodes: a reduction of its own. */
static const apsmpi_part_reduction part_reduction = {sizeof(apsmpi_reduction), part_start, part_progress, part_end};

/* The node path over the communicator's nodes (after the route). */
static void start_nodes(apsmpi_reduction *r)
{
    const apsmpi_runtime *rt = r->c.rt;
    const apsmpi_comm_info *info = r->info;
    apsmpi_plan_in in = {
        .f = &rt->cfg.format,
        .kind = r->kind,
        .nranks = r->c.nranks,
        .rank = r->c.rank,
        .n = r->total,
        .piece = rt->piece_elems,
        .block_len = r->c.block_len,
        .algo_in = &(apsmpi_node_path_in){.unit = rt->cfg.scaling == APSMPI_SCALING_BLOCK ? rt->cfg.block_size : 64,
                                          .node_size = info->node_size,
                                          .node_rank = info->node_rank,
                                          .min_node_size = info->min_node_size,
                                          .part_state_bytes = part_reduction.state_bytes}};
    void *memory;
    int rc;

    apsmpi_plan_make(&r->plan, &apsmpi_node_path, &in);
    memory = apsmpi_memory_get(r->mem, APSMPI_SCRATCH_NODE, r->plan.memory_bytes);
    if (memory == NULL) {
        finish_fp32(r, MPI_ERR_NO_MEM);
        return;
    }
    r->step = APSMPI_STEP_NODES;
    r->nodes_ctx = (apsmpi_node_path_ctx){info, &part_reduction};
    r->run = (apsmpi_op){&r->plan, &r->c, r->recvbuf, memory, r->blocking, &r->nodes_ctx};
    rc = apsmpi_node_path.start(&r->run);
    if (rc != MPI_SUCCESS)
        finish_fp32(r, apsmpi_node_path.end(&r->run, rc));
}

/* The private duplicate of comm that rsag and the ring send on, made on every rank that takes
 * one of them whatever else that rank lacks: on a communicator's first such call it is a
 * collective (which also agrees whether every rank could keep it). 1 if this rank has it. */
static int private_comm_ready(MPI_Comm comm)
{
    MPI_Comm private_comm;
    return apsmpi_private_comm(comm, &private_comm) == MPI_SUCCESS;
}

/* An allreduce's segments, one per rank: equal, in whole slices of 64 elements, the last
 * ones shorter or empty. NULL if there is no memory for them. */
static const int *allreduce_segments(apsmpi_reduction *r)
{
    int nranks = r->c.nranks;
    int *counts = apsmpi_memory_get(r->mem, APSMPI_SCRATCH_COUNTS, (size_t)nranks * sizeof *counts);
    size_t base = (r->total + (size_t)nranks - 1) / (size_t)nranks;

    base = apsmpi_whole_slices(base);
    for (int k = 0; counts && k < nranks; k++) {
        size_t start = (size_t)k * base;
        counts[k] = (int)(start >= r->total ? 0 : r->total - start < base ? r->total - start : base);
    }
    return counts;
}

/* The algorithm's own input for planning r (apsmpi_plan_in.algo_in, read only while the plan is
 * made): rsag's window, in *rsag_in; NULL for the others. */
static const void *algo_input(const apsmpi_reduction *r, const apsmpi_algorithm *algo, apsmpi_rsag_in *rsag_in)
{
    int window = (int)r->c.rt->cfg.rsag_window;

    if (algo != &apsmpi_rsag)
        return NULL;
    rsag_in->window = r->across_nodes ? apsmpi_node_part_window(window, r->c.nranks) : window;
    return rsag_in;
}

/* The flat path: the algorithm for the call and its plan, its memory, and the agreement on
 * the call's scales started. A rank without its private communicator, its counts or its
 * memory says so in the agreement, instead of leaving alone. */
static void plan_and_agree(apsmpi_reduction *r)
{
    const apsmpi_runtime *rt = r->c.rt;
    apsmpi_call *c = &r->c;
    const apsmpi_algorithm *algo = rt->cfg.algorithm == APSMPI_ALGORITHM_RSAG    ? &apsmpi_rsag
                                   : apsmpi_pipelined(r->total, rt->piece_elems) ? &apsmpi_ring
                                                                                 : &apsmpi_one_collective;
    int lacking = 0, rc;
    void *memory = NULL;

    r->step = APSMPI_STEP_AGREE;
    /* the parts of a node-cut buffer draw random streams of their own */
    c->rounding.seed ^= (uint64_t)r->part_first * 0x94d049bb133111ebull;
    if (algo->private_comm)
        lacking = r->private_failed || (r->c.priv == NULL && !private_comm_ready(r->comm));
    if (r->kind == APSMPI_ALLREDUCE)
        r->counts = allreduce_segments(r);
    if (r->counts != NULL) {
        apsmpi_rsag_in rsag_in;
        apsmpi_plan_in in = {.f = &rt->cfg.format,
                             .kind = r->kind,
                             .nranks = c->nranks,
                             .rank = c->rank,
                             .counts = r->counts,
                             .n = r->total,
                             .piece = rt->piece_elems,
                             .block_len = c->block_len,
                             .algo_in = algo_input(r, algo, &rsag_in)};
        apsmpi_plan_make(&r->plan, algo, &in);
        c->agree.addends = r->plan.addends;
        memory = apsmpi_memory_get(r->mem, APSMPI_SCRATCH_ALGORITHM, r->plan.memory_bytes);
    }
    lacking |= memory == NULL;
    r->run = (apsmpi_op){&r->plan, c, r->recvbuf, memory, r->blocking, NULL};
    rc = apsmpi_call_agree_start(c, memory ? r->plan.packed_bytes : 0, memory ? r->plan.result_bytes : 0, lacking,
                                 r->blocking ? NULL : &r->req);
    if (rc != MPI_SUCCESS) /* the GPU part still ends: the job's device made current again */
        finish_fp32(r, rc);
}

/* Ends a compressed call: its algorithm, then the call (counted as compressed if it
 * succeeded). */
static void end_run(apsmpi_reduction *r, int rc) { finish(r, apsmpi_call_end(&r->c, r->plan.algo->end(&r->run, rc))); }

/* With APSMPI_FORMAT=auto the plan was made for the ladder's widest rung (whose memory the call
 * holds); a call agreed on a narrower one is planned again for it, in that memory (every region
 * of a plan grows with the bytes of its format). 0, or -1 if it would not fit (never). */
static int plan_for_agreed_format(apsmpi_reduction *r)
{
    apsmpi_plan_in in = r->plan.in;
    apsmpi_rsag_in rsag_in;
    size_t had = r->plan.memory_bytes, packed = r->plan.packed_bytes, result = r->plan.result_bytes;

    if (in.f == r->c.f)
        return 0;
    in.f = r->c.f;
    in.algo_in = algo_input(r, r->plan.algo, &rsag_in); /* the plan keeps none of its own */
    apsmpi_plan_make(&r->plan, r->plan.algo, &in);
    APSMPI_DEBUG("auto: planned again for %s: %s, window %d", r->c.f->name, r->plan.algo->name,
                 r->plan.algo == &apsmpi_rsag ? apsmpi_rsag_plan_window(&r->plan) : 0);
    return r->plan.memory_bytes <= had && r->plan.packed_bytes <= packed && r->plan.result_bytes <= result ? 0 : -1;
}

/* After the agreement's reduction: the path the ranks agreed on, the algorithm started on it. */
static void agreed(apsmpi_reduction *r)
{
    enum apsmpi_path path;
    int rc = apsmpi_call_agree_finish(&r->c, &path);

    if (rc != MPI_SUCCESS) {
        finish_fp32(r, rc);
    } else if (path == APSMPI_PATH_FP32) {
        start_fp32(r);
    } else {
        if (plan_for_agreed_format(r) != 0)
            apsmpi_end_job(APSMPI_END_THIS_RANK, r->comm, 1,
                           "the plan of a %zu-element call on %s outgrew the widest rung's", r->total, r->c.f->name);
        r->step = APSMPI_STEP_RUN;
        rc = r->plan.algo->start(&r->run);
        if (rc != MPI_SUCCESS)
            end_run(r, rc);
    }
}

void apsmpi_reduction_begin(apsmpi_reduction *r, int kind, const void *sendbuf, void *recvbuf, const int *recvcounts,
                            int count, size_t total, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                            const apsmpi_memory *mem, int blocking)
{
    const float *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;

    *r = (apsmpi_reduction){.kind = kind,
                            .sendbuf = sendbuf,
                            .recvbuf = recvbuf,
                            .recvcounts = recvcounts,
                            .count = count,
                            .datatype = datatype,
                            .op = op,
                            .comm = comm,
                            .mem = mem,
                            .blocking = blocking,
                            .step = APSMPI_STEP_ROUTE,
                            .counts = recvcounts,
                            .total = total,
                            .req = MPI_REQUEST_NULL};
    if (kind == APSMPI_REDUCE_SCATTER_BLOCK) {
        int nranks;
        int *counts;
        PMPI_Comm_size(comm, &nranks);
        counts = apsmpi_memory_get(mem, APSMPI_SCRATCH_BLOCK_COUNTS, (size_t)nranks * sizeof *counts);
        for (int k = 0; counts && k < nranks; k++)
            counts[k] = count;
        r->counts = counts; /* NULL: this rank cannot make them, and says so in the agreement */
    }
    apsmpi_call_begin(&r->c, &apsmpi_rt, mem, in, total, recvbuf, comm);
}

/* A part of the node path: the compressed allreduce of n floats of `in` over comm into out,
 * `first` being in[0]'s place in the whole buffer; it starts at the plan (no route). */
static int part_start(void *state, const apsmpi_op *outer, const float *in, float *out, size_t n, size_t first,
                      MPI_Comm comm)
{
    apsmpi_reduction *r = state;

    apsmpi_reduction_begin(r, APSMPI_ALLREDUCE, in, out, NULL, (int)n, n, MPI_FLOAT, MPI_SUM, comm, outer->c->mem,
                           outer->blocking);
    r->across_nodes = 1;
    r->part_first = first;
    /* error feedback keys the part by the job's call: its communicator, count and buffer */
    r->c.origin =
        (apsmpi_call_origin){.comm = outer->c->comm, .count = outer->c->n, .buf = outer->c->in, .offset = first};
    r->c.request = outer->c->request;
    r->step = APSMPI_STEP_PLAN;
    return MPI_SUCCESS;
}

int apsmpi_reduction_progress(apsmpi_reduction *r, int *done)
{
    *done = 0;
    for (;;) {
        int rc = MPI_SUCCESS, op_done = 0;
        switch (r->step) {
        case APSMPI_STEP_ROUTE:
            route(r);
            break;
        case APSMPI_STEP_ROUTE_AGREE:
            if (!r->blocking && !await(r, &r->req, &rc))
                return MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                finish_fp32(r, rc);
            else if (r->any_dev)
                r->step = APSMPI_STEP_PLAN;
            else
                start_nodes(r);
            break;
        case APSMPI_STEP_PLAN:
            plan_and_agree(r);
            break;
        case APSMPI_STEP_AGREE:
            if (!r->blocking && !await(r, &r->req, &rc))
                return MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                finish_fp32(r, rc);
            else
                agreed(r);
            break;
        case APSMPI_STEP_RUN:
            rc = r->plan.algo->progress(&r->run, &op_done);
            if (rc == MPI_SUCCESS && !op_done)
                return MPI_SUCCESS;
            end_run(r, rc);
            break;
        case APSMPI_STEP_NODES:
            rc = apsmpi_node_path.progress(&r->run, &op_done);
            if (rc == MPI_SUCCESS && !op_done)
                return MPI_SUCCESS;
            finish_fp32(r, apsmpi_node_path.end(&r->run, rc));
            break;
        case APSMPI_STEP_FP32:
            if (!r->blocking && !await(r, &r->req, &rc))
                return MPI_SUCCESS;
            end_fp32(r, rc);
            break;
        case APSMPI_STEP_DONE:
            *done = 1;
            return r->rc;
        }
    }
}

/* ---- the entry points: eligibility, then the reduction, blocking ---- */

int apsmpi_reduction_posted_all(const apsmpi_reduction *r)
{
    switch (r->step) {
    case APSMPI_STEP_RUN:
    case APSMPI_STEP_FP32: /* only p2p on the private duplicate is left, and a GPU call's agreed error */
        return !apsmpi_device_any(&r->c);
    case APSMPI_STEP_DONE:
        return 1;
    default:
        return 0;
    }
}
