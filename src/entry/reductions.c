/* reduce.c: MPI_Allreduce and MPI_Reduce_scatter(_block) on floats, sent in a low-precision format with APS. */
#include "../../wrappers/mpi_signatures.h"
#include "call/compressed_call.h"
#include "call/device_steps.h"
#include "core/log.h"
#include "algo/hierarchical.h"
#include "algo/ring.h"
#include "algo/rsag.h"
#include "state/comm_info.h"
#include "entry/runtime.h"
#include "state/scratch.h"
#include "state/stats.h"

static int is_single_float(MPI_Datatype dt) { return dt == MPI_FLOAT || dt == MPI_REAL || dt == MPI_REAL4; }

/* Decided from the arguments alone, which every rank passes alike: no communication. */
static int eligible(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, long long elements)
{
    int inter;

    if (apsmpi_rt.codec == NULL || op != MPI_SUM || !is_single_float(datatype) || elements <= 0 ||
        (unsigned long long)elements * sizeof(float) < apsmpi_rt.cfg.min_bytes || comm == MPI_COMM_NULL)
        return 0;
    return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

static int passed_through(int rc)
{
    apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);
    return rc;
}

/* Large calls on several ranks go through the pipelined ring; the others through one MPI
 * collective on the encoded data, with the packed datatype and the packed sum op. */
static int use_ring(const apsmpi_call *c)
{
    return c->nranks > 1 && apsmpi_rt.chunk_elems > 0 && c->n > apsmpi_rt.chunk_elems;
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

/* A page-locked host buffer of `bytes` bytes holding a copy of the GPU call's input, for its
 * fp32 path; NULL if there is none (then the job's buffers go to MPI as they are). */
static float *staged_input(apsmpi_call *c, size_t bytes, size_t in_bytes)
{
    float *h = apsmpi_device_stage(c, bytes);

    if (h == NULL)
        APSMPI_ERROR("no page-locked memory to send a GPU buffer in fp32: handed to MPI as it is");
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

    if (c->dev == NULL || (h = staged_input(c, bytes, bytes)) == NULL)
        return apsmpi_call_end_fp32(c, PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
    rc = PMPI_Allreduce(MPI_IN_PLACE, h, count, datatype, op, comm);
    if (rc == MPI_SUCCESS)
        apsmpi_device_copy(c, recvbuf, h, bytes);
    return apsmpi_call_end_fp32(c, rc);
}

/* 1 for the default algorithm, which sums in fp32 only. */
static int use_rsag(void) { return apsmpi_rt.cfg.algorithm == APSMPI_ALGORITHM_RSAG; }

/* The piece size of rsag: pipelined above APSMPI_CHUNK_SIZE, one piece per segment below. */
static size_t rsag_piece(const apsmpi_call *c) { return use_ring(c) ? apsmpi_rt.chunk_elems : 0; }

/* What a call on comm does with the nodes it spans. */
enum route { ROUTE_FLAT, ROUTE_ONE_NODE, ROUTE_NODES };

/* Decided from the communicator's node layout (the same on all its ranks), the settings, and
 * for GPU buffers (dev) whether one rank's decision could differ: a GPU call never takes the
 * node path, whose fp32 steps MPI cannot do on GPU memory. -1 with *rc set on an error. */
static int route_of(MPI_Comm comm, int dev, const apsmpi_comm_info **info, int *rc)
{
    *rc = apsmpi_comm_info_get(comm, info);
    if (*rc != MPI_SUCCESS)
        return -1;
    if ((*info)->nnodes == 1 && apsmpi_rt.cfg.intranode == APSMPI_INTRANODE_PASS)
        return ROUTE_ONE_NODE;
    if ((*info)->nnodes > 1 && (*info)->max_node_size > 1 && use_rsag() && !dev)
        return ROUTE_NODES;
    return ROUTE_FLAT;
}

static int one_node(int rc)
{
    apsmpi_stats_add(APSMPI_STAT_CALLS_ONE_NODE, 1);
    return rc;
}

/* The compressed allreduce of count floats of `in` over comm into recvbuf; part_first: the
 * index of in[0] in a larger buffer that the node path cut (0 otherwise). */
static int allreduce_on(apsmpi_call *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Comm comm,
                        size_t part_first)
{
    const apsmpi_format *f = &apsmpi_rt.cfg.format;
    int path, rc, rsag = use_rsag(), ring = !rsag && use_ring(c), *counts = NULL, lacking = 0;
    size_t size, result = 0, piece = rsag_piece(c);

    /* the parts of a node-cut buffer draw random streams of their own */
    c->rounding.seed ^= (uint64_t)part_first * 0x94d049bb133111ebull;
    if (ring || rsag) {
        counts = allreduce_segments(c);
        lacking = counts == NULL;
    }
    size = counts ? apsmpi_packed_segments(counts, c->nranks) : apsmpi_packed_bytes(c->n);
    if (rsag) {
        c->addends = 1;
        result = counts ? apsmpi_rsag_result_bytes(counts, c->nranks, c->rank, piece, c->block_len) : 0;
        lacking = lacking || apsmpi_rsag_reserve(counts, c->nranks, c->rank, piece, 1) == NULL;
    } else if (ring) {
        result = size;
        lacking = lacking || apsmpi_ring_reserve(counts, c->nranks, apsmpi_rt.chunk_elems) == NULL;
    }
    /* a rank without its counts or working memory says so in the agreement, instead of leaving alone */
    path = apsmpi_call_agree(c, comm, size, result, lacking);
    if (path < 0)
        return -path;
    if (path == APSMPI_PATH_FP32)
        return allreduce_fp32(c, sendbuf, recvbuf, count, datatype, MPI_SUM, comm);
    if (rsag || ring) {
        apsmpi_call_start(c, counts, c->nranks);
        return apsmpi_call_end(c, rsag ? apsmpi_rsag_run(c, counts, 1, piece, recvbuf, comm)
                                       : apsmpi_ring_run(c, counts, 1, apsmpi_rt.chunk_elems, recvbuf, comm));
    }
    apsmpi_call_start(c, &count, 1);
    apsmpi_call_encode(c, 0, c->n, c->packed);
    rc = PMPI_Allreduce(MPI_IN_PLACE, c->packed, (int)apsmpi_groups_for(f, c->n), apsmpi_rt.group_type,
                        apsmpi_rt.sum_op, comm);
    if (rc == MPI_SUCCESS)
        apsmpi_call_decode(c, c->packed, 0, c->n, recvbuf);
    return apsmpi_call_end(c, rc);
}

/* One node's part of the node path, compressed across nodes (apsmpi_part_allreduce_fn). */
static int allreduce_part(const float *in, float *out, size_t n, size_t first, MPI_Comm comm)
{
    apsmpi_call c;

    apsmpi_call_begin(&c, in, n, out, comm);
    return allreduce_on(&c, in, out, (int)n, MPI_FLOAT, comm, first);
}

APSMPI_IMPL(Allreduce)
{
    const float *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const apsmpi_comm_info *info;
    apsmpi_call c;
    int rc, route;

    if (!eligible(datatype, op, comm, count))
        return passed_through(APSMPI_PASS(Allreduce));
    apsmpi_call_begin(&c, in, (size_t)count, recvbuf, comm);
    route = route_of(comm, c.dev != NULL || c.dev_failed, &info, &rc);
    if (route < 0)
        return apsmpi_call_end_fp32(&c, rc);
    if (route == ROUTE_ONE_NODE)
        return one_node(allreduce_fp32(&c, sendbuf, recvbuf, count, datatype, op, comm));
    if (route == ROUTE_NODES) {
        size_t unit = apsmpi_rt.cfg.scaling == APSMPI_SCALING_BLOCK ? apsmpi_rt.cfg.block_size : 64;
        rc = apsmpi_hierarchical_allreduce(in, recvbuf, (size_t)count, unit, info, allreduce_part);
        return apsmpi_call_end_fp32(&c, rc);
    }
    return allreduce_on(&c, sendbuf, recvbuf, count, datatype, comm, 0);
}

/* The fp32 path of an eligible reduce-scatter: *pass set for host buffers (the caller makes
 * the job's own call); GPU buffers go through page-locked host copies. */
static int reduce_scatter_fp32(apsmpi_call *c, const int *counts, int equal_counts, MPI_Datatype datatype, float *out,
                               int *pass)
{
    size_t mine = counts ? (size_t)counts[c->rank] * sizeof(float) : 0, all = c->n * sizeof(float);
    float *h;
    int rc;

    *pass = c->dev == NULL || counts == NULL || (h = staged_input(c, all + mine, all)) == NULL;
    if (*pass)
        return apsmpi_call_end_fp32(c, MPI_SUCCESS);
    if (equal_counts)
        rc = PMPI_Reduce_scatter_block(h, h + c->n, counts[0], datatype, MPI_SUM, c->comm);
    else
        rc = PMPI_Reduce_scatter(h, h + c->n, counts, datatype, MPI_SUM, c->comm);
    if (rc == MPI_SUCCESS)
        apsmpi_device_copy(c, out, h + c->n, mine);
    return apsmpi_call_end_fp32(c, rc);
}

/* The reduce-scatter of both kinds, on an eligible call with counts[r] elements for rank r.
 * Each rank's segment is encoded into whole packing groups of its own, so that segment
 * boundaries fall on group boundaries; element indices stay those of the whole buffer, so
 * blocks and random streams do not depend on the split. Sets *fp32 instead when the ranks
 * agreed to send the call uncompressed; counts == NULL (this rank could not make them)
 * makes all ranks agree on that. */
static int reduce_scatter_compressed(const float *in, size_t total, float *out, const int *counts,
                                     int equal_counts, MPI_Datatype datatype, MPI_Comm comm, int *fp32)
{
    const apsmpi_format *f = &apsmpi_rt.cfg.format;
    size_t gbytes = apsmpi_group_bytes(f), first = 0, offset = 0, mine_first = 0, size, result, piece;
    const apsmpi_comm_info *info;
    apsmpi_call c;
    int *gcounts = NULL, path, rc, ring, rsag = use_rsag(), ready;

    apsmpi_call_begin(&c, in, total, out, comm);
    if (route_of(comm, 1, &info, &rc) == ROUTE_ONE_NODE || rc != MPI_SUCCESS) {
        if (rc != MPI_SUCCESS)
            return apsmpi_call_end_fp32(&c, rc);
        apsmpi_stats_add(APSMPI_STAT_CALLS_ONE_NODE, 1);
        return reduce_scatter_fp32(&c, counts, equal_counts, datatype, out, fp32);
    }
    ring = !rsag && use_ring(&c);
    piece = rsag_piece(&c);
    size = counts ? apsmpi_packed_segments(counts, c.nranks) : 0;
    if (rsag) {
        c.addends = 1;
        ready = counts && apsmpi_rsag_reserve(counts, c.nranks, c.rank, piece, 0) != NULL;
        result = counts ? apsmpi_rsag_result_bytes(counts, c.nranks, c.rank, piece, c.block_len) : 0;
    } else if (ring) {
        ready = counts && apsmpi_ring_reserve(counts, c.nranks, apsmpi_rt.chunk_elems) != NULL;
        result = size;
    } else {
        ready = counts && (gcounts = apsmpi_scratch(APSMPI_SCRATCH_COUNTS, (size_t)c.nranks * sizeof *gcounts)) != NULL;
        result = counts ? apsmpi_packed_bytes((size_t)counts[c.rank]) + 1 : 0;
    }
    path = apsmpi_call_agree(&c, comm, size, result, !ready);
    if (path < 0)
        return -path;
    if (path == APSMPI_PATH_FP32)
        return reduce_scatter_fp32(&c, counts, equal_counts, datatype, out, fp32);
    apsmpi_call_start(&c, counts, c.nranks);
    if (rsag)
        return apsmpi_call_end(&c, apsmpi_rsag_run(&c, counts, 0, piece, out, comm));
    if (ring)
        return apsmpi_call_end(&c, apsmpi_ring_run(&c, counts, 0, apsmpi_rt.chunk_elems, out, comm));

    for (int r = 0; r < c.nranks; r++) {
        gcounts[r] = (int)apsmpi_groups_for(f, (size_t)counts[r]);
        apsmpi_call_encode(&c, first, (size_t)counts[r], (char *)c.packed + offset);
        if (r == c.rank)
            mine_first = first;
        first += (size_t)counts[r];
        offset += (size_t)gcounts[r] * gbytes;
    }
    if (equal_counts)
        rc = PMPI_Reduce_scatter_block(c.packed, c.result, gcounts[0], apsmpi_rt.group_type, apsmpi_rt.sum_op, comm);
    else
        rc = PMPI_Reduce_scatter(c.packed, c.result, gcounts, apsmpi_rt.group_type, apsmpi_rt.sum_op, comm);
    if (rc == MPI_SUCCESS)
        apsmpi_call_decode(&c, c.result, mine_first, (size_t)counts[c.rank], out);
    return apsmpi_call_end(&c, rc);
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

APSMPI_IMPL(Reduce_scatter)
{
    const float *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int nranks, fp32 = 0, rc;
    long long total;

    if (recvcounts == NULL || comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
        return passed_through(APSMPI_PASS(Reduce_scatter));
    total = total_count(recvcounts, nranks);
    if (!eligible(datatype, op, comm, total))
        return passed_through(APSMPI_PASS(Reduce_scatter));
    rc = reduce_scatter_compressed(in, (size_t)total, recvbuf, recvcounts, 0, datatype, comm, &fp32);
    return fp32 ? APSMPI_PASS(Reduce_scatter) : rc;
}

APSMPI_IMPL(Reduce_scatter_block)
{
    const float *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int nranks, fp32 = 0, rc, *counts;

    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &nranks) != MPI_SUCCESS ||
        !eligible(datatype, op, comm, (long long)recvcount * nranks))
        return passed_through(APSMPI_PASS(Reduce_scatter_block));
    counts = apsmpi_scratch(APSMPI_SCRATCH_BLOCK_COUNTS, (size_t)nranks * sizeof *counts);
    for (int r = 0; counts && r < nranks; r++)
        counts[r] = recvcount;
    rc = reduce_scatter_compressed(in, (size_t)recvcount * (size_t)nranks, recvbuf, counts, 1, datatype, comm, &fp32);
    return fp32 ? APSMPI_PASS(Reduce_scatter_block) : rc;
}
