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

int apsmpi_hierarchical_allreduce(const float *in, float *out, size_t n, size_t unit, const apsmpi_comm_info *info,
                                  apsmpi_part_allreduce_fn part_fn)
{
    int L = info->node_size, me = info->node_rank, rc;
    int *counts = apsmpi_scratch(APSMPI_SCRATCH_NODE, 2 * (size_t)L * sizeof(int)), *firsts;
    float *part;

    if (counts == NULL)
        return MPI_ERR_NO_MEM;
    firsts = counts + L;
    apsmpi_node_parts(n, unit, info->min_node_size, L, counts, firsts);
    part = apsmpi_scratch(APSMPI_SCRATCH_PARTIAL, ((size_t)counts[me] + 1) * sizeof(float));
    if (part == NULL)
        return MPI_ERR_NO_MEM;
    rc = PMPI_Reduce_scatter(in, part, counts, MPI_FLOAT, MPI_SUM, info->node);
    if (rc == MPI_SUCCESS && info->cross != MPI_COMM_NULL && counts[me] > 0)
        rc = part_fn(part, out + firsts[me], (size_t)counts[me], (size_t)firsts[me], info->cross);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts, firsts, MPI_FLOAT, info->node);
    return rc;
}
