/* sgemm.h: single-precision matrix multiply in plain C, row-major, with optional transposes. */
#ifndef TRAIN_SGEMM_H
#define TRAIN_SGEMM_H

#include <stdbool.h>

/* C = alpha * op(A) * op(B) + beta * C, all row-major; op(A) is m x k, op(B) is k x n, C is
 * m x n. ta: A is stored k x m (op(A) = A^T); tb: B is stored n x k. beta == 0 never reads C.
 * The order of every sum is fixed, so equal inputs give equal bits. */
void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
           float beta, float *c, int ldc);

#endif
