/* ring.h: the pipelined ring that reduces large encoded buffers, with the codec working while bytes travel. */
#ifndef APSMPI_RING_H
#define APSMPI_RING_H

/* The words segment, piece and stage, and the ring's order of steps: algo/ring_plan.h. */

#include <mpi.h>
#include "call/compressed_call.h"

/* Sums the call's encoded input over the ranks of c->comm (on its private duplicate). The
 * buffer is split into segments of counts[r] elements, in rank order; segment r ends, fully
 * summed, on rank r (the reduce-scatter), and with allgather every segment then travels on
 * to every rank. The result is decoded into out: the whole buffer with allgather, else only
 * this rank's segment. Messages carry pieces of c->rt->piece_elems elements (or more, for
 * the tag bound), so that each piece goes on as soon as it is summed, and encoding the
 * segments needed later fills the time spent waiting. Starts the call's encoding
 * (apsmpi_call_start) itself. Needs c->packed and c->result of apsmpi_packed_segments()
 * bytes each, and apsmpi_ring_reserve done. MPI_SUCCESS or an MPI error code. */
int apsmpi_ring_run(apsmpi_call *c, const int *counts, int allgather, float *out);

/* Takes the ring's bookkeeping memory for a call with these counts, before the ranks agree
 * on the call's path, so that a rank without it can say so there; NULL if memory runs out.
 * apsmpi_ring_run then finds it in place. */
void *apsmpi_ring_reserve(const int *counts, int nranks, size_t piece_elems);

#endif
