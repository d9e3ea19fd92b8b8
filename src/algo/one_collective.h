/* one_collective.h: one MPI collective on the encoded data with the ring's packed sum op: calls that APSMPI_ALGORITHM=ring does not pipeline. */
#ifndef APSMPI_ONE_COLLECTIVE_H
#define APSMPI_ONE_COLLECTIVE_H

/* apsmpi_one_collective, an algorithm of algo/algorithm.h. The whole input is encoded (a reduce-scatter's
 * segments each into whole packing groups of their own, so that segment boundaries fall on
 * group boundaries), then MPI's own allreduce, reduce-scatter or reduce-scatter-block runs on
 * it with the packing group's datatype and the op that decodes, adds in fp32 and re-encodes
 * (algo/ring_sumop.h): MPI's algorithm, on fewer bytes, summing in the wire format. Then this
 * rank's result is decoded.
 *
 * A blocking call makes MPI's blocking collective; a request its non-blocking form, posted at
 * the start and tested by progress (MPI may sum in another order there than in its blocking
 * form, so a request's bits may differ from the blocking call's, within the same bound). */
#include "algo/algorithm.h"

extern const apsmpi_algorithm apsmpi_one_collective;

#endif
