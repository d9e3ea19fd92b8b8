/* reductions.c: MPI_Allreduce and MPI_Reduce_scatter(_block) on floats: eligibility and the choice of path (MPI on one node, fp32, rsag, the node path, the ring). */
#include "algo/hierarchical.h"
#include "algo/ring.h"
#include "algo/rsag.h"
#include "call/compressed_call.h"
#include "call/device_steps.h"
#include "core/log.h"
#include "core/packed_layout.h"
#include "entry/entry_points.h"
#include "state/comm_info.h"
#include "state/private_comm.h"
#include "state/runtime_state.h"
#include "state/scratch.h"
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
 * size or communicator name that APSMPI_MAX_BYTES or APSMPI_COMM_INCLUDE/EXCLUDE keep exact. */
static int eligible(const apsmpi_runtime *rt, const void *sendbuf, const void *recvbuf, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, long long elements)
{
    int inter, size;

    if (rt->codec == NULL || op != MPI_SUM || !is_single_float(datatype) || elements <= 0 ||
        (unsigned long long)elements * sizeof(float) < rt->cfg.min_bytes ||
        (rt->cfg.max_bytes > 0 && (unsigned long long)elements * sizeof(float) > rt->cfg.max_bytes) ||
        comm == MPI_COMM_NULL || sendbuf == recvbuf)
        return 0;
    return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter && PMPI_Comm_size(comm, &size) == MPI_SUCCESS &&
           size > 1 && selected_by_name(&rt->cfg, comm);
}

/* The private duplicate of comm that the pipelined algorithms (rsag, ring) send on, made on
 * every rank that takes one of them whatever else that rank lacks: on a communicator's first
 * such call it is a collective (which also agrees whether every rank could keep it). 1 if
 * this rank has it. */
static int private_comm_ready(MPI_Comm comm)
{
    MPI_Comm private_comm;
    return apsmpi_private_comm(comm, &private_comm) == MPI_SUCCESS;
}

static int passed_through(int rc)
{
    apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);
    return rc;
}

/* Large calls on several ranks are pipelined (rsag in pieces, or the ring); with
 * APSMPI_ALGORITHM=ring the others go through one MPI collective on the encoded data, with
 * the packed datatype and the packed sum op. */
static int use_ring(const apsmpi_call *c)
{
    return c->nranks > 1 && c->rt->piece_elems > 0 && c->n > c->rt->piece_elems;
}

/* Per-rank segment counts of the whole n-element buffer for the ring allreduce: equal, in
 * whole slices of 64 elements, the last ones shorter or empty. */
static int *allreduce_segments(const apsmpi_call *c)
{
    int *counts = apsmpi_scratch(APSMPI_SCRATCH_COUNTS, (size_t)c->nranks * sizeof *counts);
    size_t base = (c->n + (size_t)c->nranks - 1) / (size_t)c->nranks;

    base = (base + 63) / 64 * 64;
    for (int r = 0; counts && r < c->nranks; r++) {
        size_t start = (size_t)r * base;
        counts[r] = (int)(start >= c->n ? 0 : c->n - start < base ? c->n - start : base);
    }
    return counts;
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

/* The fp32 path of an eligible allreduce: the job's own call for host buffers; for GPU
 * buffers the same call on page-locked host copies, since the MPI is not CUDA-aware. */
static int allreduce_fp32(apsmpi_call *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    size_t bytes = (size_t)count * sizeof(float);
    float *h;
    int rc;

    if (!(c->in_dev || c->out_dev) || (h = host_copy_of_input(c, bytes, bytes)) == NULL)
        return apsmpi_call_end_fp32(c, PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
    rc = PMPI_Allreduce(MPI_IN_PLACE, h, count, datatype, op, comm);
    if (rc == MPI_SUCCESS)
        apsmpi_device_copy(c, recvbuf, h, bytes);
    return apsmpi_call_end_fp32(c, rc);
}

/* 1 for the default algorithm, which sums in fp32 only. */
static int use_rsag(const apsmpi_runtime *rt) { return rt->cfg.algorithm == APSMPI_ALGORITHM_RSAG; }

/* The piece size of rsag: pipelined above APSMPI_CHUNK_SIZE, one piece per segment below. */
static size_t rsag_piece(const apsmpi_call *c) { return use_ring(c) ? c->rt->piece_elems : 0; }

/* What a call on comm does with the nodes it spans. */
enum route { ROUTE_FLAT, ROUTE_ONE_NODE, ROUTE_NODES };

/* Decided from the communicator's node layout (the same on all its ranks), the settings, and
 * whether any rank's buffers are on a GPU (dev: this rank's): a GPU call never takes the node
 * path, whose fp32 steps MPI cannot do on GPU memory. Where the node path is possible, the
 * ranks agree on dev in one small MAX reduction, so that a job mixing host and GPU buffers
 * across ranks still takes one route on every rank. MPI_SUCCESS or an MPI error code. */
static int route_of(const apsmpi_runtime *rt, MPI_Comm comm, int dev, const apsmpi_comm_info **info, enum route *route)
{
    int rc = apsmpi_comm_info_get(comm, rt->cfg.test_node_of_rank, info), any_dev = dev;

    if (rc != MPI_SUCCESS)
        return rc;
    apsmpi_comm_info_announce(comm, rt->cfg.intranode == APSMPI_INTRANODE_PASS);
    *route = ROUTE_FLAT;
    if ((*info)->nnodes == 1 && rt->cfg.intranode == APSMPI_INTRANODE_PASS)
        *route = ROUTE_ONE_NODE;
    else if ((*info)->nnodes > 1 && (*info)->max_node_size > 1 && use_rsag(rt)) {
        rc = PMPI_Allreduce(&dev, &any_dev, 1, MPI_INT, MPI_MAX, comm);
        if (rc == MPI_SUCCESS && !any_dev)
            *route = ROUTE_NODES;
    }
    return rc;
}

/* The compressed allreduce of count floats of `in` over c->comm into recvbuf; part_first:
 * the index of in[0] in a larger buffer that the node path cut (0 otherwise). */
static int allreduce_compressed(apsmpi_call *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                size_t part_first)
{
    const apsmpi_runtime *rt = c->rt;
    const apsmpi_format *f = &rt->cfg.format;
    int rc, rsag = use_rsag(rt), ring = !rsag && use_ring(c), *counts = NULL, lacking = 0;
    size_t size, result = 0, piece = rsag_piece(c);
    enum apsmpi_path path;

    /* the parts of a node-cut buffer draw random streams of their own */
    c->rounding.seed ^= (uint64_t)part_first * 0x94d049bb133111ebull;
    if (ring || rsag) {
        lacking = !private_comm_ready(c->comm);
        counts = allreduce_segments(c);
        lacking |= counts == NULL;
    }
    size = counts ? apsmpi_packed_segments(f, counts, c->nranks, NULL, NULL) : apsmpi_packed_bytes(f, c->n);
    if (rsag) {
        c->addends = 1;
        result = counts ? apsmpi_rsag_result_bytes(f, counts, c->nranks, c->rank, piece, c->block_len) : 0;
        lacking = lacking || apsmpi_rsag_reserve(counts, c->nranks, c->rank, piece, 1) == NULL;
    } else if (ring) {
        result = size;
        lacking = lacking || apsmpi_ring_reserve(counts, c->nranks, rt->piece_elems) == NULL;
    }
    /* a rank without its private communicator, counts or working memory says so in the
     * agreement, instead of leaving alone */
    rc = apsmpi_call_agree(c, size, result, lacking, &path);
    if (rc != MPI_SUCCESS) /* the GPU part still ends: the job's device made current again */
        return apsmpi_call_end_fp32(c, rc);
    if (path == APSMPI_PATH_FP32)
        return allreduce_fp32(c, sendbuf, recvbuf, count, datatype, MPI_SUM, c->comm);
    if (rsag)
        return apsmpi_call_end(c, apsmpi_rsag_run(c, counts, 1, piece, recvbuf));
    if (ring)
        return apsmpi_call_end(c, apsmpi_ring_run(c, counts, 1, recvbuf));
    apsmpi_call_start(c, &(apsmpi_segments){1, &count, NULL, NULL, NULL});
    apsmpi_call_encode(c, 0, c->n, c->packed);
    rc = PMPI_Allreduce(MPI_IN_PLACE, c->packed, (int)apsmpi_groups_for(f, c->n), rt->group_type, rt->sum_op, c->comm);
    if (rc == MPI_SUCCESS)
        apsmpi_call_decode(c, c->packed, 0, c->n, recvbuf);
    return apsmpi_call_end(c, rc);
}

/* One node's part of the node path, compressed across nodes (apsmpi_part_allreduce_fn). */
static int allreduce_part(const float *in, float *out, size_t n, size_t first, MPI_Comm comm)
{
    apsmpi_call c;

    apsmpi_call_begin(&c, &apsmpi_rt, in, n, out, comm);
    return allreduce_compressed(&c, in, out, (int)n, MPI_FLOAT, first);
}

int apsmpi_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const apsmpi_runtime *rt = &apsmpi_rt;
    const float *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const apsmpi_comm_info *info;
    enum route route;
    apsmpi_call c;
    int rc;

    if (!eligible(rt, sendbuf, recvbuf, datatype, op, comm, count))
        return passed_through(PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
    apsmpi_call_begin(&c, rt, in, (size_t)count, recvbuf, comm);
    rc = route_of(rt, comm, c.dev != NULL || c.dev_failed, &info, &route);
    if (rc != MPI_SUCCESS)
        return apsmpi_call_end_fp32(&c, rc);
    if (route == ROUTE_ONE_NODE) {
        apsmpi_stats_add(APSMPI_STAT_CALLS_ONE_NODE, 1);
        return allreduce_fp32(&c, sendbuf, recvbuf, count, datatype, op, comm);
    }
    if (route == ROUTE_NODES) {
        size_t unit = rt->cfg.scaling == APSMPI_SCALING_BLOCK ? rt->cfg.block_size : 64;
        /* chunks of a few pieces per node rank: the node's fp32 steps overlap the network */
        size_t chunk = rt->piece_elems * 4 * (size_t)info->min_node_size;
        rc = apsmpi_hierarchical_allreduce(in, recvbuf, (size_t)count, unit, chunk, info, allreduce_part);
        return apsmpi_call_end_fp32(&c, rc);
    }
    return allreduce_compressed(&c, sendbuf, recvbuf, count, datatype, 0);
}

/* A reduce-scatter call as the job made it: MPI_Reduce_scatter (recvcounts), or
 * MPI_Reduce_scatter_block (is_block, recvcount elements per rank). */
struct reduce_scatter_args {
    const void *sendbuf;
    void *recvbuf;
    const int *recvcounts;
    int is_block, recvcount;
    MPI_Datatype datatype;
    MPI_Op op;
    MPI_Comm comm;
};

/* The job's own reduce-scatter, on the buffers given. */
static int reduce_scatter_pmpi(const struct reduce_scatter_args *a, const void *sendbuf, void *recvbuf)
{
    if (a->is_block)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, a->recvcount, a->datatype, a->op, a->comm);
    return PMPI_Reduce_scatter(sendbuf, recvbuf, a->recvcounts, a->datatype, a->op, a->comm);
}

/* The fp32 path of an eligible reduce-scatter: the job's own call for host buffers (or
 * counts == NULL); GPU buffers go through page-locked host copies. */
static int reduce_scatter_fp32(apsmpi_call *c, const int *counts, const struct reduce_scatter_args *a)
{
    size_t mine = counts ? (size_t)counts[c->rank] * sizeof(float) : 0, all = c->n * sizeof(float);
    float *h;
    int rc;

    if (!(c->in_dev || c->out_dev) || counts == NULL || (h = host_copy_of_input(c, all + mine, all)) == NULL)
        return apsmpi_call_end_fp32(c, reduce_scatter_pmpi(a, a->sendbuf, a->recvbuf));
    rc = reduce_scatter_pmpi(a, h, h + c->n);
    if (rc == MPI_SUCCESS)
        apsmpi_device_copy(c, a->recvbuf, h + c->n, mine);
    return apsmpi_call_end_fp32(c, rc);
}

/* One MPI reduce-scatter on the encoded data: each rank's segment encoded into whole packing
 * groups of its own (gcounts[r] of them), so that segment boundaries fall on group boundaries. */
static int reduce_scatter_collective(apsmpi_call *c, const int *counts, int *gcounts,
                                     const struct reduce_scatter_args *a)
{
    const apsmpi_runtime *rt = c->rt;
    const apsmpi_format *f = &rt->cfg.format;
    size_t gbytes = apsmpi_group_bytes(f), first = 0, offset = 0, mine_first = 0;
    int rc;

    apsmpi_call_start(c, &(apsmpi_segments){c->nranks, counts, NULL, NULL, NULL});
    for (int r = 0; r < c->nranks; r++) {
        gcounts[r] = (int)apsmpi_groups_for(f, (size_t)counts[r]);
        apsmpi_call_encode(c, first, (size_t)counts[r], (char *)c->packed + offset);
        if (r == c->rank)
            mine_first = first;
        first += (size_t)counts[r];
        offset += (size_t)gcounts[r] * gbytes;
    }
    if (a->is_block)
        rc = PMPI_Reduce_scatter_block(c->packed, c->result, gcounts[0], rt->group_type, rt->sum_op, a->comm);
    else
        rc = PMPI_Reduce_scatter(c->packed, c->result, gcounts, rt->group_type, rt->sum_op, a->comm);
    if (rc == MPI_SUCCESS)
        apsmpi_call_decode(c, c->result, mine_first, (size_t)counts[c->rank], a->recvbuf);
    return apsmpi_call_end(c, rc);
}

/* The reduce-scatter of both kinds, on an eligible call of `total` elements with counts[r]
 * elements for rank r. Element indices stay those of the whole buffer, so blocks and random
 * streams do not depend on the split. counts == NULL (this rank could not make them) makes
 * all ranks agree on fp32. */
static int reduce_scatter_compressed(size_t total, const int *counts, const struct reduce_scatter_args *a)
{
    const apsmpi_runtime *rt = &apsmpi_rt;
    const apsmpi_format *f = &rt->cfg.format;
    const float *in = a->sendbuf == MPI_IN_PLACE ? a->recvbuf : a->sendbuf;
    const apsmpi_comm_info *info;
    size_t size, result, piece;
    apsmpi_call c;
    int *gcounts = NULL, rc, ring, rsag = use_rsag(rt), ready;
    enum apsmpi_path path;
    enum route route;

    apsmpi_call_begin(&c, rt, in, total, a->recvbuf, a->comm);
    rc = route_of(rt, a->comm, 1, &info, &route);
    if (rc != MPI_SUCCESS)
        return apsmpi_call_end_fp32(&c, rc);
    if (route == ROUTE_ONE_NODE) {
        apsmpi_stats_add(APSMPI_STAT_CALLS_ONE_NODE, 1);
        return reduce_scatter_fp32(&c, counts, a);
    }
    ring = !rsag && use_ring(&c);
    piece = rsag_piece(&c);
    size = counts ? apsmpi_packed_segments(f, counts, c.nranks, NULL, NULL) : 0;
    if (rsag) {
        c.addends = 1;
        ready = counts && apsmpi_rsag_reserve(counts, c.nranks, c.rank, piece, 0) != NULL;
        result = counts ? apsmpi_rsag_result_bytes(f, counts, c.nranks, c.rank, piece, c.block_len) : 0;
    } else if (ring) {
        ready = counts && apsmpi_ring_reserve(counts, c.nranks, rt->piece_elems) != NULL;
        result = size;
    } else {
        ready = counts && (gcounts = apsmpi_scratch(APSMPI_SCRATCH_COUNTS, (size_t)c.nranks * sizeof *gcounts)) != NULL;
        result = counts ? apsmpi_packed_bytes(f, (size_t)counts[c.rank]) + 1 : 0;
    }
    if (rsag || ring) /* its private communicator, made on every rank whatever else it lacks */
        ready &= private_comm_ready(a->comm);
    rc = apsmpi_call_agree(&c, size, result, !ready, &path);
    if (rc != MPI_SUCCESS) /* the GPU part still ends: the job's device made current again */
        return apsmpi_call_end_fp32(&c, rc);
    if (path == APSMPI_PATH_FP32)
        return reduce_scatter_fp32(&c, counts, a);
    if (rsag)
        return apsmpi_call_end(&c, apsmpi_rsag_run(&c, counts, 0, piece, a->recvbuf));
    if (ring)
        return apsmpi_call_end(&c, apsmpi_ring_run(&c, counts, 0, a->recvbuf));
    return reduce_scatter_collective(&c, counts, gcounts, a);
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

int apsmpi_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm)
{
    struct reduce_scatter_args a = {sendbuf, recvbuf, recvcounts, 0, 0, datatype, op, comm};
    int nranks;
    long long total;

    if (recvcounts == NULL || comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
        return passed_through(reduce_scatter_pmpi(&a, sendbuf, recvbuf));
    total = total_count(recvcounts, nranks);
    if (!eligible(&apsmpi_rt, sendbuf, recvbuf, datatype, op, comm, total))
        return passed_through(reduce_scatter_pmpi(&a, sendbuf, recvbuf));
    return reduce_scatter_compressed((size_t)total, recvcounts, &a);
}

int apsmpi_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm)
{
    struct reduce_scatter_args a = {sendbuf, recvbuf, NULL, 1, recvcount, datatype, op, comm};
    int nranks, *counts;

    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &nranks) != MPI_SUCCESS ||
        !eligible(&apsmpi_rt, sendbuf, recvbuf, datatype, op, comm, (long long)recvcount * nranks))
        return passed_through(reduce_scatter_pmpi(&a, sendbuf, recvbuf));
    counts = apsmpi_scratch(APSMPI_SCRATCH_BLOCK_COUNTS, (size_t)nranks * sizeof *counts);
    for (int r = 0; counts && r < nranks; r++)
        counts[r] = recvcount;
    return reduce_scatter_compressed((size_t)recvcount * (size_t)nranks, counts, &a);
}
