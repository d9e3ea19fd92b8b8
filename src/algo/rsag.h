/* rsag.h: the default reduction: each contribution encoded once, summed in fp32 by its segment's owner, gathered encoded. */
#ifndef APSMPI_RSAG_H
#define APSMPI_RSAG_H

/* apsmpi_rsag, an algorithm of algo/algorithm.h, planned by algo/rsag_plan.h.
 *
 * The buffer is cut into segments of counts[r] elements, in rank order; rank r owns segment r.
 * Reduce-scatter (direct exchange): every rank encodes each segment once, with the agreed
 * scales, and sends it to its owner (rsag_plan.h's schedule; one message per piece). The
 * owner decodes the N contributions and sums them in fp32, in a fixed order.
 * Allgather: the owner encodes each summed piece once, with per-block scales from the sum
 * itself sent in front of the codes, sends those bytes to every other rank, and decodes them
 * itself; every rank decodes the same bytes, so all get the same result. Without allgather
 * (a reduce-scatter) the fp32 sum is the result (one rounding in all).
 *
 * Each rank sends and receives (N-1)/N of the encoded buffer in each phase, as a ring does,
 * in two steps instead of 2(N-1). Pieces (APSMPI_CHUNK_SIZE elements when the call is
 * pipelined, else one per segment) let the codec encode the next piece while the last ones travel.
 *
 * Runs on the private duplicate of the call's communicator, on its own range of tags, and
 * starts the call's encoding (apsmpi_call_start) in its order. Resumable: progress encodes
 * while it waits for messages, and without op->blocking returns when it would have to wait.
 * out: the whole buffer with allgather, else this rank's segment. */
#include "algo/algorithm.h"

/* What rsag plans from beyond the call's shape (apsmpi_plan_in.algo_in; NULL: window 0). */
typedef struct apsmpi_rsag_in {
    int window; /* its messages in flight per rank at most, 0 all at once (APSMPI_RSAG_WINDOW) */
} apsmpi_rsag_in;

extern const apsmpi_algorithm apsmpi_rsag;

#endif
