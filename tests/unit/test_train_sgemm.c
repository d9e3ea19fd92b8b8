/* test_train_sgemm.c: the training program's sgemm against a plain loop that sums in the order it documents (bit for bit on x86-64 without FMA in CFLAGS, whichever instruction set the processor gives it), with transposes, strides, alpha, beta and every blocking edge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "sgemm.h"

/* sgemm sums k in blocks of 256 (its KC): within a block in order from 0, and the blocks'
 * sums, times alpha, added to C in order (the first one to beta C, or stored when beta is 0). */
#define KC 256

static float at(const float *x, int ld, bool trans, int row, int col)
{
    return trans ? x[(size_t)col * ld + row] : x[(size_t)row * ld + col];
}

static void reference(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                      int ldb, float beta, float *c, int ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float *cij = &c[(size_t)i * ldc + j];
            for (int p0 = 0; p0 < k; p0 += KC) {
                volatile float acc = 0.0f; /* one rounding per product and per sum, as in sgemm */
                for (int p = p0; p < k && p < p0 + KC; p++) {
                    volatile float prod = at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
                    acc = acc + prod;
                }
                if (p0 > 0)
                    *cij += alpha * acc;
                else if (beta == 0.0f)
                    *cij = alpha * acc;
                else
                    *cij = beta * *cij + alpha * acc;
            }
        }
}

static void one_case(bool ta, bool tb, int m, int n, int k, float alpha, float beta, int pad)
{
    struct rng r;
    int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    size_t asz = (size_t)(ta ? k : m) * lda, bsz = (size_t)(tb ? n : k) * ldb, csz = (size_t)m * ldc;
    float *a = malloc(asz * sizeof(float)), *b = malloc(bsz * sizeof(float));
    float *c = malloc(csz * sizeof(float)), *want = malloc(csz * sizeof(float));

    assert_true(a && b && c && want);
    rng_init(&r, (uint64_t)(m * 131 + n * 7 + k), ta * 2 + tb);
    for (size_t i = 0; i < asz; i++)
        a[i] = rng_uniform(&r, -1, 1);
    for (size_t i = 0; i < bsz; i++)
        b[i] = rng_uniform(&r, -1, 1);
    for (size_t i = 0; i < csz; i++)
        want[i] = c[i] = beta == 0.0f ? NAN : rng_uniform(&r, -1, 1); /* beta 0 never reads C */
    sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    reference(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float got = c[(size_t)i * ldc + j], exp = want[(size_t)i * ldc + j];
#if defined(__x86_64__) && !defined(__FMA__)
            if (memcmp(&got, &exp, sizeof got) != 0)
#else /* with FMA (aarch64, -march=native) the compiler may fuse a product and a sum into one rounding */
            if (!(fabsf(got - exp) <= 1e-5f * (1.0f + fabsf(exp))))
#endif
                fail_msg("%c%c %dx%dx%d alpha %g beta %g: C[%d][%d] = %.9g, want %.9g", ta ? 'T' : 'N', tb ? 'T' : 'N',
                         m, n, k, (double)alpha, (double)beta, i, j, (double)got, (double)exp);
        }
    /* the padding beside each row of C is left alone */
    for (int i = 0; i < m; i++)
        for (int j = n; j < ldc; j++)
            assert_memory_equal(&c[(size_t)i * ldc + j], &want[(size_t)i * ldc + j], sizeof(float));
    free(a);
    free(b);
    free(c);
    free(want);
}

static void test_against_reference(void **state)
{
    /* m across the 6-row tiles and the 96-row blocks, n across the 8-column tiles (and one
     * case past the 2048-column panel), k across the 256-deep blocks */
    static const int shapes[][3] = {{1, 1, 1},     {5, 7, 3},     {6, 8, 256},   {7, 9, 257},
                                    {97, 17, 300}, {192, 64, 64}, {13, 2050, 5}, {64, 98, 512}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++) {
            int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            one_case(t & 1, t & 2, m, n, k, 1.0f, 0.0f, 0);
            one_case(t & 1, t & 2, m, n, k, 0.5f, 1.0f, 3);
            one_case(t & 1, t & 2, m, n, k, -2.0f, 0.25f, 1);
        }
}

static void test_k_zero(void **state)
{
    float c[4] = {1, 2, 3, 4};
    sgemm(false, false, 2, 2, 0, 1.0f, NULL, 1, NULL, 2, 0.5f, c, 2);
    assert_true(c[0] == 0.5f && c[3] == 2.0f);
    sgemm(false, false, 2, 2, 0, 1.0f, NULL, 1, NULL, 2, 0.0f, c, 2);
    assert_true(c[0] == 0.0f && c[3] == 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_k_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
