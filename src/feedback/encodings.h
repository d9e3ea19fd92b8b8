/* encodings.h: error feedback (APSMPI_ERROR_FEEDBACK) at a call's two encodings: a rank's contribution, and the sum a rank owns. */
#ifndef APSMPI_FEEDBACK_ENCODINGS_H
#define APSMPI_FEEDBACK_ENCODINGS_H

#include <stddef.h>
#include "call/call_types.h"
#include "feedback/residuals.h"

/* A rank keeps what rounding took from each encoding it makes and adds it to what it
 * encodes at the next call of the same key (feedback/residuals.h: the job's communicator,
 * element count and buffer, the stretch of it, the role), so that what all calls of a key
 * sent sums to what they were given, less one residual. Nothing here when the store is off
 * (feedback/job_store.h). */

/* Before the call's block exponents: for a host input, the residual of the contribution's
 * key is added to the input in the residual's own memory, which becomes the call's input
 * (c->in), so that the agreement and every encoding see input + residual. A GPU input, or no
 * residual (the bound, memory), leaves the call as it is. */
void apsmpi_feedback_contribution_begin(apsmpi_call *c);

/* After elements [first, first+n) of c->in were encoded into out with scales sc: their
 * residual becomes what the encoding took (c->in minus its decoding). */
void apsmpi_feedback_contribution_taken(apsmpi_call *c, size_t first, size_t n, const void *out, apsmpi_scales sc);

/* At the end of the call: the residual is kept if the call was compressed and succeeded
 * (keep), else dropped (what it holds then is not what rounding took). */
void apsmpi_feedback_contribution_end(apsmpi_call *c, int keep);

/* The owner's sum of elements [first, first+n) of the call's buffer (role
 * APSMPI_RESIDUAL_SUM; a group's partial sum in the two-level schedule,
 * APSMPI_RESIDUAL_PARTIAL). Begin returns the values
 * to encode: sum itself when there is no residual (the store is off, the bound), else the
 * residual of its key with sum[0..n) added, in the residual's memory. Taken then makes that
 * residual what the encoding at codes (n elements from buffer index index0, scales sc) took,
 * and gives it back to the store. */
typedef struct apsmpi_sum_feedback {
    apsmpi_residual *residual; /* NULL: none */
    double in_sq;              /* the sum's sum of squares */
} apsmpi_sum_feedback;
const float *apsmpi_feedback_sum_begin(apsmpi_call *c, const float *sum, size_t n, size_t first,
                                       enum apsmpi_residual_role role, apsmpi_sum_feedback *fb);
void apsmpi_feedback_sum_taken(apsmpi_call *c, apsmpi_sum_feedback *fb, const void *codes, size_t n, size_t index0,
                               apsmpi_scales sc);

#endif
