/* ring.h: the pipelined ring that reduces large encoded buffers, with the codec working while bytes travel. */
#ifndef APSMPI_RING_H
#define APSMPI_RING_H

#include <mpi.h>
#include "call/compressed_call.h"

/* Sums the call's encoded input over the ranks of comm. The buffer is split into segments of
 * counts[r] elements, in rank order; segment r ends, fully summed, on rank r (the
 * reduce-scatter), and with allgather every segment then travels on to every rank. The
 * result is decoded into out: the whole buffer with allgather, else only this rank's
 * segment. Messages carry pieces of `piece` elements (a multiple of 64), so that each piece
 * goes on as soon as it is summed, and encoding the segments needed later fills the time
 * spent waiting. Needs c->packed and c->result of apsmpi_packed_segments() bytes each. */
int apsmpi_ring_run(apsmpi_call *c, const int *counts, int allgather, size_t piece, float *out, MPI_Comm comm);

/* Takes the ring's bookkeeping memory for a call with these counts and piece size, before
 * the ranks agree on the call's path, so that a rank without it can say so there; NULL if
 * memory runs out. apsmpi_ring_run then finds it in place. */
void *apsmpi_ring_reserve(const int *counts, int nranks, size_t piece);

/* Bytes of the encoded buffer when each of the nranks segments starts a packing group. */
size_t apsmpi_packed_segments(const int *counts, int nranks);

#endif
