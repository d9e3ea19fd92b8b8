/* ring.h: the pipelined ring that sums in the wire format at every hop (APSMPI_ALGORITHM=ring, kept for comparison). */
#ifndef APSMPI_RING_H
#define APSMPI_RING_H

/* apsmpi_ring, an algorithm of algo/algorithm.h, planned by algo/ring_plan.h (its arithmetic of segments,
 * pieces, order and tags, unit-tested without MPI).
 *
 * Sums the call's encoded input over the ranks of the communicator (on its private
 * duplicate). The buffer is split into segments of counts[r] elements, in rank order;
 * segment r ends, fully summed, on rank r (the reduce-scatter), and with allgather every
 * segment then travels on to every rank. The result is decoded into out: the whole buffer
 * with allgather, else only this rank's segment. Messages carry pieces of APSMPI_CHUNK_SIZE
 * elements (or more, for the tag bound), so that each piece goes on as soon as it is summed,
 * and encoding the segments needed later fills the time spent waiting. Chosen for pipelined
 * calls only; smaller ones take one MPI collective (algo/one_collective.h). Needs the ring's sum
 * op and datatype (algo/ring_sumop.h), made at MPI_Init when the ring is chosen.
 *
 * Not resumable: its first progress runs the whole exchange, waiting in MPI as it needs,
 * whether the operation is blocking or not. Making it resumable would cost a state machine
 * over its nested waits (a piece's send waits for the send two steps before it) for an
 * algorithm that serves only as a comparison. */
#include "algo/algorithm.h"

extern const apsmpi_algorithm apsmpi_ring;

#endif
