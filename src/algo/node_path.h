/* node_path.h: the node path: an allreduce over several nodes, fp32 within each node, compressed only across nodes. */
#ifndef APSMPI_NODE_PATH_H
#define APSMPI_NODE_PATH_H

/* apsmpi_node_path (algo/algorithm.h), planned by algo/node_plan.h.
 *
 * Sums the n floats of the call's input (which may be the output) over the communicator
 * that op->nodes describes, into op->out, in batches (node_plan.h), each cut into
 * min_node_size parts of whole scaling units (so a part starts on a scaling block): (1)
 * within each node, an fp32 MPI_Ireduce_scatter over shared memory leaves part p, summed over
 * the node, on the node's rank p; (2) those ranks, one per node (nodes->cross), sum their part
 * across nodes, compressed, with op->part (the caller's: a whole compressed allreduce of its
 * own, agreement included); (3) within each node, MPI_Iallgatherv hands every part to every
 * rank. Batch k goes through (1) while batch k-1 is in (2) and batch k-2 in (3). Ranks beyond
 * the smallest node's size take part in (1) and (3) only, so uneven nodes work. Only what
 * crosses nodes is compressed, once per value each way.
 *
 * Runs on no agreed scales of its own (its parts agree each on theirs). Resumable: every
 * step is a non-blocking collective or the part's own resumable reduction. */
#include "algo/algorithm.h"

#endif
