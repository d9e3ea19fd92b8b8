/* hierarchical.h: an allreduce over several nodes: fp32 within each node, compressed only across nodes. */
#ifndef APSMPI_HIERARCHICAL_H
#define APSMPI_HIERARCHICAL_H

#include <mpi.h>
#include <stddef.h>
#include "state/comm_info.h"

/* The compressed allreduce of one part: n floats of `in` summed over comm into out; `first`
 * is the part's first element in the whole buffer. Returns an MPI error code. */
typedef int (*apsmpi_part_allreduce_fn)(const float *in, float *out, size_t n, size_t first, MPI_Comm comm);

/* Sums the n floats of `in` (which may be out) over the communicator that info describes,
 * into out, in chunks of chunk_elems (0: one chunk), each cut into min_node_size parts of
 * whole `unit`s of elements (so a part starts on a scaling block): (1) within each node, an
 * fp32 MPI_Ireduce_scatter over shared memory leaves part p, summed over the node, on the
 * node's rank p; (2) those ranks, one per node (info->cross), sum their part across nodes
 * with part_fn, compressed; (3) within each node, MPI_Iallgatherv hands every part to every
 * rank. Chunk k goes through (1) while chunk k-1 is in (2) and chunk k-2 in (3). Ranks
 * beyond the smallest node's size take part in (1) and (3) only, so uneven nodes work. Only
 * what crosses nodes is compressed, once per value each way. */
int apsmpi_hierarchical_allreduce(const float *in, float *out, size_t n, size_t unit, size_t chunk_elems,
                                  const apsmpi_comm_info *info, apsmpi_part_allreduce_fn part_fn);

/* The parts' counts (parts of them, then zeros up to node_size) and first elements. */
void apsmpi_node_parts(size_t n, size_t unit, int parts, int node_size, int *counts, int *firsts);

#endif
