/* node_plan.h: the node path's plan, without MPI: batches of the buffer, each batch's parts (one per node rank, whole scaling units), the memory. */
#ifndef APSMPI_NODE_PLAN_H
#define APSMPI_NODE_PLAN_H

#include <stddef.h>

/* Batches in flight at once: one summed within the node, one crossing nodes, one gathered. */
enum { APSMPI_NODE_SLOTS = 3 };

/* The node path (algo/node_path.h) takes the buffer in batches of whole scaling units;
 * each batch is cut into min_node_size parts, part p summed over the node on the node's rank
 * p, summed across nodes there, and gathered. */
typedef struct apsmpi_node_plan {
    size_t n;        /* the buffer's elements */
    size_t unit;     /* a part is whole units of this many elements (a scaling block) */
    size_t batch;    /* elements per batch (the last one shorter) */
    size_t batches;  /* how many */
    size_t part_max; /* elements of the largest part of any batch */
    int node_size, node_rank, min_node_size;
    size_t part_state_bytes; /* the memory of one part's reduction across nodes (the caller's) */
    /* the node path's host memory (bytes; its regions at these offsets, from 0): per slot the
     * parts' counts and first elements, per slot the node's fp32 sum of this rank's part, the
     * state of the part reduction that crosses nodes */
    size_t at_parts, at_part_state, memory_bytes;
} apsmpi_node_plan;

/* Plans the node path for n elements: batches of about batch_elems (0: one batch) rounded up
 * to whole units, parts for a node of node_size ranks (this one node_rank) when the smallest
 * node has min_node_size. part_state_bytes: what one part's reduction across nodes needs. */
void apsmpi_node_plan_init(apsmpi_node_plan *p, size_t n, size_t unit, size_t batch_elems, int node_size, int node_rank,
                           int min_node_size, size_t part_state_bytes);

/* Batch k: its first element and its elements. */
size_t apsmpi_node_batch_first(const apsmpi_node_plan *p, size_t k);
size_t apsmpi_node_batch_len(const apsmpi_node_plan *p, size_t k);

/* The rsag window of a part across `nodes` nodes, given APSMPI_RSAG_WINDOW's (0, all at once,
 * stays 0). Below APSMPI_NODE_WINDOW_NODES nodes one message in flight per rank: the node's
 * ranks share its link, each with a part of its own, so the link still has a message of each
 * rank in flight, and more only queue behind them (measured at 2 nodes of 2 ranks,
 * results/nodes/README.md). From that many nodes on, rsag's own window: one message at a time
 * pays a latency per peer, 2(N-1) of them a part, which the simulator finds 17-36% of the call
 * at 64-256 nodes of 8 ranks (results/scale_sim/README.md, docs/design.md). */
enum { APSMPI_NODE_WINDOW_NODES = 8 };
int apsmpi_node_part_window(int window, int nodes);

/* The parts of n elements in whole units: `parts` of them (the last one may end in a partial
 * unit), then zeros up to node_size: counts and first elements (from the batch's start). */
void apsmpi_node_parts(size_t n, size_t unit, int parts, int node_size, int *counts, int *firsts);

#endif
