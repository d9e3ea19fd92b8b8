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
 * Resumable: progress keeps where the exchange stands (the step, the piece, and whether that
 * piece waits for its arrival or for the send slot two steps before it), so a request's ring
 * returns whenever it would wait in MPI and goes on at the next test, wait or progress-thread
 * round; a blocking call waits in MPI where nothing is left to encode, as before. */
#include "algo/algorithm.h"

extern const apsmpi_algorithm apsmpi_ring;

#endif
