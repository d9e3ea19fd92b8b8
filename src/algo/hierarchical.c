/* hierarchical.c: node-aware allreduce: fp32 reduce-scatter within the node, compressed across nodes, allgather within. */
#include "algo/hierarchical.h"

#include "state/scratch.h"

void apsmpi_node_parts(size_t n, size_t unit, int parts, int node_size, int *counts, int *firsts)
{
    size_t units = (n + unit - 1) / unit, at = 0;

    for (int p = 0; p < node_size; p++) {
        size_t want = p < parts ? (units / (size_t)parts + ((size_t)p < units % (size_t)parts)) * unit : 0;
        size_t len = at >= n ? 0 : n - at < want ? n - at : want;
        counts[p] = (int)len;
        firsts[p] = (int)at;
        at += len;
    }
}

/* Chunks in flight at once: summed within the node, crossing nodes, gathered. */
enum { SLOTS = 3 };

/* One chunk of the buffer in flight: its parts (counts and displacements stay valid while
 * its nonblocking collectives run), the node's fp32 sum of this rank's part, requests. */
struct chunk {
    size_t first, n;
    int *counts, *firsts;
    float *part;
    MPI_Request reduce, gather;
};

/* Starts the node's fp32 reduce-scatter of the n elements of `in` from `first`. */
static int start_chunk(struct chunk *ch, const float *in, size_t first, size_t n, size_t unit,
                       const apsmpi_comm_info *info)
{
    ch->first = first;
    ch->n = n;
    apsmpi_node_parts(n, unit, info->min_node_size, info->node_size, ch->counts, ch->firsts);
    return PMPI_Ireduce_scatter(in + first, ch->part, ch->counts, MPI_FLOAT, MPI_SUM, info->node, &ch->reduce);
}

/* Once chunk ch is summed within the node: this rank's part across nodes, then the
 * allgather of every part within the node (started, not waited for). */
static int finish_chunk(struct chunk *ch, float *out, const apsmpi_comm_info *info, apsmpi_part_allreduce_fn part_fn)
{
    int me = info->node_rank, rc = PMPI_Wait(&ch->reduce, MPI_STATUS_IGNORE);
    size_t at = ch->first + (size_t)ch->firsts[me];

    if (rc == MPI_SUCCESS && info->cross != MPI_COMM_NULL && ch->counts[me] > 0)
        rc = part_fn(ch->part, out + at, (size_t)ch->counts[me], at, info->cross);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out + ch->first, ch->counts, ch->firsts, MPI_FLOAT,
                              info->node, &ch->gather);
    return rc;
}

int apsmpi_hierarchical_allreduce(const float *in, float *out, size_t n, size_t unit, size_t chunk_elems,
                                  const apsmpi_comm_info *info, apsmpi_part_allreduce_fn part_fn)
{
    int L = info->node_size, rc = MPI_SUCCESS;
    size_t chunk = chunk_elems && chunk_elems < n ? (chunk_elems + unit - 1) / unit * unit : n;
    size_t nchunks = (n + chunk - 1) / chunk;
    size_t part_max = (chunk + (size_t)info->min_node_size - 1) / (size_t)info->min_node_size + unit;
    int *ints = apsmpi_scratch(APSMPI_SCRATCH_NODE, 2 * SLOTS * (size_t)L * sizeof(int));
    float *parts = apsmpi_scratch(APSMPI_SCRATCH_PARTIAL, SLOTS * part_max * sizeof(float));
    struct chunk ch[SLOTS];

    if (ints == NULL || parts == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < SLOTS; i++)
        ch[i] = (struct chunk){.counts = ints + 2 * i * L,
                               .firsts = ints + (2 * i + 1) * L,
                               .part = parts + (size_t)i * part_max,
                               .reduce = MPI_REQUEST_NULL,
                               .gather = MPI_REQUEST_NULL};
    /* chunk k is summed within the node while chunk k-1 crosses nodes and chunk k-2 is
     * gathered: the links and the shared memory work at once */
    for (size_t k = 0; rc == MPI_SUCCESS && k <= nchunks; k++) {
        if (k < nchunks) {
            rc = PMPI_Wait(&ch[k % SLOTS].gather, MPI_STATUS_IGNORE); /* chunk k-3's arrays and buffer */
            if (rc == MPI_SUCCESS)
                rc = start_chunk(&ch[k % SLOTS], in, k * chunk, n - k * chunk < chunk ? n - k * chunk : chunk, unit,
                                 info);
        }
        if (rc == MPI_SUCCESS && k > 0)
            rc = finish_chunk(&ch[(k - 1) % SLOTS], out, info, part_fn);
    }
    for (int i = 0; i < SLOTS; i++) {
        int wrc = PMPI_Wait(&ch[i].reduce, MPI_STATUS_IGNORE);
        if (wrc == MPI_SUCCESS)
            wrc = PMPI_Wait(&ch[i].gather, MPI_STATUS_IGNORE);
        rc = rc == MPI_SUCCESS ? wrc : rc;
    }
    return rc;
}
