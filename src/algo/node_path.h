/* node_path.h: the node path: an allreduce over several nodes, fp32 within each node, compressed only across nodes. */
#ifndef APSMPI_NODE_PATH_H
#define APSMPI_NODE_PATH_H

/* apsmpi_node_path, an algorithm of algo/algorithm.h, planned by algo/node_plan.h from
 * apsmpi_node_path_in, run with apsmpi_node_path_ctx (below).
 *
 * Sums the n floats of the call's input (which may be the output) over the communicator
 * that the context's nodes describe, into op->out, in batches (node_plan.h), each cut into
 * min_node_size parts of whole scaling units (so a part starts on a scaling block): (1)
 * within each node, an fp32 MPI_Ireduce_scatter over shared memory leaves part p, summed over
 * the node, on the node's rank p; (2) those ranks, one per node (nodes->cross), sum their part
 * across nodes, compressed, with the context's part (the caller's: a whole compressed allreduce of its
 * own, agreement included); (3) within each node, MPI_Iallgatherv hands every part to every
 * rank. Batch k goes through (1) while batch k-1 is in (2) and batch k-2 in (3). Ranks beyond
 * the smallest node's size take part in (1) and (3) only, so uneven nodes work. Only what
 * crosses nodes is compressed, once per value each way.
 *
 * Runs on no agreed scales of its own (its parts agree each on theirs). Resumable: every
 * step is a non-blocking collective or the part's own resumable reduction. */
#include <mpi.h>
#include <stddef.h>
#include "algo/algorithm.h"
#include "state/comm_info.h"

/* What the node path plans from beyond the call's shape (apsmpi_plan_in.algo_in, required):
 * parts are whole units of this many elements (the scaling block, or 64 without blocks);
 * how the communicator lies on nodes; the size of the state of one part's reduction across
 * nodes (the context's part). */
typedef struct apsmpi_node_path_in {
    size_t unit;
    int node_size, node_rank, min_node_size;
    size_t part_state_bytes;
} apsmpi_node_path_in;

/* One part's compressed allreduce across nodes, as a resumable operation (the caller's:
 * entry/reductions.c). state: part_state_bytes of the node path's memory; outer: the node
 * path's operation (its call's memory provider, blocking or not). */
typedef struct apsmpi_part_reduction {
    size_t state_bytes;
    int (*start)(void *state, const apsmpi_op *outer, const float *in, float *out, size_t n, size_t first,
                 MPI_Comm comm);
    int (*progress)(void *state, int *done);
    int (*end)(void *state, int rc);
} apsmpi_part_reduction;

/* What the node path runs with (apsmpi_op.algo_ctx, required): the communicator's nodes and
 * the reduction of a part across them. */
typedef struct apsmpi_node_path_ctx {
    const apsmpi_comm_info *nodes;
    const apsmpi_part_reduction *part;
} apsmpi_node_path_ctx;

extern const apsmpi_algorithm apsmpi_node_path;

#endif
