/* rsag.h: the default reduction: each contribution encoded once, summed in fp32 by its segment's owner, gathered encoded. */
#ifndef APSMPI_RSAG_H
#define APSMPI_RSAG_H

#include <mpi.h>
#include "call/compressed_call.h"

/* The buffer is cut into segments of counts[r] elements, in rank order; rank r owns segment r.
 *
 * Reduce-scatter (direct exchange): every rank encodes each segment once, with the agreed
 * scales, and sends it to its owner (rank-1 first, then rank-2, ...; one message per piece).
 * The owner decodes the N contributions and sums them in fp32, in a fixed order.
 * Allgather: the owner encodes each summed piece once, with per-block scales from the sum
 * itself sent in front of the codes, sends those bytes to every other rank, and decodes them
 * itself; every rank decodes the same bytes, so all get the same result. Without allgather
 * the fp32 sum is the result (one rounding in all).
 *
 * Each rank sends and receives (N-1)/N of the encoded buffer in each phase, as a ring does,
 * in two steps instead of 2(N-1). Pieces of `piece` elements (a multiple of 64; 0: one piece
 * per segment) let the codec work while earlier pieces travel.
 *
 * Runs on the private duplicate of c->comm and starts the call's encoding (apsmpi_call_start)
 * in its order. out: the whole n-element buffer with allgather, else this rank's segment.
 * MPI_SUCCESS or an MPI error code. */
int apsmpi_rsag_run(apsmpi_call *c, const int *counts, int allgather, size_t piece, float *out);

/* Bytes of the call's second buffer (c->result) for apsmpi_rsag_run; block_len as the call's. */
size_t apsmpi_rsag_result_bytes(const apsmpi_format *f, const int *counts, int nranks, int rank, size_t piece,
                                size_t block_len);

/* Takes the bookkeeping and fp32 memory of a call before the ranks agree on its path, so that
 * a rank without it can say so there; NULL if memory runs out. apsmpi_rsag_run finds it. */
void *apsmpi_rsag_reserve(const int *counts, int nranks, int rank, size_t piece, int allgather);

#endif
