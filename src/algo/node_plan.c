/* node_plan.c: the node path's arithmetic: batches, the parts of a batch, the memory. */
#include "algo/node_plan.h"

#include "core/units.h"

void apsmpi_node_plan_init(apsmpi_node_plan *p, size_t n, size_t unit, size_t batch_elems, int node_size, int node_rank,
                           int min_node_size, size_t part_state_bytes)
{
    size_t L = (size_t)node_size;

    p->n = n;
    p->unit = unit;
    p->batch = batch_elems && batch_elems < n ? (batch_elems + unit - 1) / unit * unit : n;
    p->batches = (n + p->batch - 1) / p->batch;
    p->part_max = (p->batch + (size_t)min_node_size - 1) / (size_t)min_node_size + unit;
    p->node_size = node_size;
    p->node_rank = node_rank;
    p->min_node_size = min_node_size;
    p->part_state_bytes = part_state_bytes;
    p->at_parts = apsmpi_align_up(2 * APSMPI_NODE_SLOTS * L * sizeof(int));
    p->at_part_state = p->at_parts + apsmpi_align_up(APSMPI_NODE_SLOTS * p->part_max * sizeof(float));
    p->memory_bytes = p->at_part_state + apsmpi_align_up(part_state_bytes);
}

size_t apsmpi_node_batch_first(const apsmpi_node_plan *p, size_t k) { return k * p->batch; }

size_t apsmpi_node_batch_len(const apsmpi_node_plan *p, size_t k)
{
    return p->n - k * p->batch < p->batch ? p->n - k * p->batch : p->batch;
}

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

int apsmpi_node_part_window(int window, int nodes)
{
    if (window <= 0)
        return 0;
    return nodes >= APSMPI_NODE_WINDOW_NODES ? window : 1;
}
