/* arithmetic.c: error feedback's two passes over a stretch: input plus residual, and the new residual, with their sums of squares. */
#include "feedback/arithmetic.h"

enum { LANES = 8 }; /* independent partial sums, so that the loops vectorise */

static double sum_squares(const float *x, size_t n)
{
    double acc[LANES] = {0}, total = 0;
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            acc[k] += (double)x[i + k] * (double)x[i + k];
    for (; i < n; i++)
        total += (double)x[i] * (double)x[i];
    for (int k = 0; k < LANES; k++)
        total += acc[k];
    return total;
}

void apsmpi_feedback_add(const float *in, const float *r, size_t n, float *out, double *in_sq)
{
    if (in_sq)
        *in_sq += sum_squares(in, n);
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] + r[i];
}

void apsmpi_feedback_take(const float *x, const float *decoded, size_t n, float *r, double *res_sq)
{
    for (size_t i = 0; i < n; i++)
        r[i] = x[i] - decoded[i];
    if (res_sq)
        *res_sq += sum_squares(r, n);
}
