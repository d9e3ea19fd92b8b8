/* arithmetic.h: error feedback's arithmetic on a stretch of a buffer: the input plus its residual is what gets encoded, and the residual becomes what that encoding took. */
#ifndef APSMPI_FEEDBACK_ARITHMETIC_H
#define APSMPI_FEEDBACK_ARITHMETIC_H

#include <stddef.h>

/* out[i] = in[i] + r[i] (in float; out may be in). If in_sq is not NULL, adds the sum of
 * squares of in to it. */
void apsmpi_feedback_add(const float *in, const float *r, size_t n, float *out, double *in_sq);

/* r[i] = x[i] - decoded[i], in float: what the encoding of x took (exact when the two are
 * within a factor of two, as a rounding leaves them, by Sterbenz's lemma). If res_sq is not
 * NULL, adds the sum of squares of the new r to it. */
void apsmpi_feedback_take(const float *x, const float *decoded, size_t n, float *r, double *res_sq);

#endif
