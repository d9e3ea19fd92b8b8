/* sgemm.c: cache-blocked sgemm (packed panels and a 6x8 register micro-kernel that compilers vectorize), built for AVX2 too and chosen at run time on x86-64. */
#include "sgemm.h"

#include <stdio.h>
#include <stdlib.h>

/* Register tile: MR rows of A times NR columns of B (12 four-wide vector accumulators);
 * micro_kernel spells out its MR = 6 rows. */
#define MR 6
#define NR 8
/* Cache blocks: a KC x NC panel of B (in L2/L3) and an MC x KC block of A (in L2). */
#define KC 256
#define MC 96
#define NC 2048

static float *packed_a, *packed_b;

/* On x86-64 the compiler builds sgemm twice, for the baseline (SSE2) and for AVX2, and the
 * loader picks the one the processor runs (an ifunc): AVX2 doubles the vector width and
 * about doubles the speed. Both do the same float operations in the same order (AVX2 here
 * without FMA, which would round differently), so they give the same bits. The helpers
 * below are inlined into each clone and vectorized for its instruction set. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SGEMM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SGEMM_CLONES
#endif
#define INLINE static inline __attribute__((always_inline))

/* Packs op(A)[i0 .. i0+mc, p0 .. p0+kc) into slivers of MR rows, each stored p-major,
 * zero-padded to a multiple of MR rows. */
INLINE void pack_a(bool ta, const float *a, int lda, int i0, int mc, int p0, int kc, float *dst)
{
    for (int s = 0; s < mc; s += MR) {
        int rows = mc - s < MR ? mc - s : MR;
        for (int p = 0; p < kc; p++) {
            for (int i = 0; i < rows; i++) {
                int r = i0 + s + i, q = p0 + p;
                dst[p * MR + i] = ta ? a[(size_t)q * lda + r] : a[(size_t)r * lda + q];
            }
            for (int i = rows; i < MR; i++)
                dst[p * MR + i] = 0.0f;
        }
        dst += (size_t)kc * MR;
    }
}

/* Packs op(B)[p0 .. p0+kc, j0 .. j0+nc) into slivers of NR columns, each stored p-major,
 * zero-padded to a multiple of NR columns. */
INLINE void pack_b(bool tb, const float *b, int ldb, int p0, int kc, int j0, int nc, float *dst)
{
    for (int s = 0; s < nc; s += NR) {
        int cols = nc - s < NR ? nc - s : NR;
        for (int p = 0; p < kc; p++) {
            for (int j = 0; j < cols; j++) {
                int q = p0 + p, col = j0 + s + j;
                dst[p * NR + j] = tb ? b[(size_t)col * ldb + q] : b[(size_t)q * ldb + col];
            }
            for (int j = cols; j < NR; j++)
                dst[p * NR + j] = 0.0f;
        }
        dst += (size_t)kc * NR;
    }
}

/* acc = sum over p of the outer products of a sliver of A and a sliver of B. The MR = 6
 * rows are written out, each a loop over NR columns: in this form gcc and clang keep the
 * 6 x 8 sums in vector registers at -O2 and -O3 alike (a doubly nested loop gets
 * vectorized along the wrong axis, several times slower). */
INLINE void micro_kernel(int kc, const float *restrict a, const float *restrict b, float *restrict acc)
{
    float c0[NR] = {0}, c1[NR] = {0}, c2[NR] = {0}, c3[NR] = {0}, c4[NR] = {0}, c5[NR] = {0};
    for (int p = 0; p < kc; p++) {
        const float *ap = a + p * MR, *bp = b + p * NR;
        float a0 = ap[0], a1 = ap[1], a2 = ap[2], a3 = ap[3], a4 = ap[4], a5 = ap[5];
        for (int j = 0; j < NR; j++)
            c0[j] += a0 * bp[j];
        for (int j = 0; j < NR; j++)
            c1[j] += a1 * bp[j];
        for (int j = 0; j < NR; j++)
            c2[j] += a2 * bp[j];
        for (int j = 0; j < NR; j++)
            c3[j] += a3 * bp[j];
        for (int j = 0; j < NR; j++)
            c4[j] += a4 * bp[j];
        for (int j = 0; j < NR; j++)
            c5[j] += a5 * bp[j];
    }
    for (int j = 0; j < NR; j++) {
        acc[0 * NR + j] = c0[j];
        acc[1 * NR + j] = c1[j];
        acc[2 * NR + j] = c2[j];
        acc[3 * NR + j] = c3[j];
        acc[4 * NR + j] = c4[j];
        acc[5 * NR + j] = c5[j];
    }
}

/* Adds (or, on the first k block, stores with beta) alpha * acc into the rows x cols corner of C. */
INLINE void store_tile(const float *acc, int rows, int cols, float alpha, float beta, bool first, float *c, int ldc)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float v = alpha * acc[i * NR + j];
            float *cij = &c[(size_t)i * ldc + j];
            if (!first)
                *cij += v;
            else if (beta == 0.0f)
                *cij = v;
            else
                *cij = beta * *cij + v;
        }
}

static void ensure_buffers(void)
{
    if (packed_a)
        return;
    packed_a = aligned_alloc(64, sizeof(float) * MC * KC);
    packed_b = aligned_alloc(64, sizeof(float) * KC * NC);
    if (!packed_a || !packed_b) {
        fprintf(stderr, "apsmpi_train: out of memory for the sgemm buffers\n");
        exit(1);
    }
}

SGEMM_CLONES void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                        int ldb, float beta, float *c, int ldc)
{
    float acc[MR * NR];

    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                c[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[(size_t)i * ldc + j];
        return;
    }
    ensure_buffers();
    for (int jc = 0; jc < n; jc += NC) {
        int nc = n - jc < NC ? n - jc : NC;
        for (int pc = 0; pc < k; pc += KC) {
            int kc = k - pc < KC ? k - pc : KC;
            pack_b(tb, b, ldb, pc, kc, jc, nc, packed_b);
            for (int ic = 0; ic < m; ic += MC) {
                int mc = m - ic < MC ? m - ic : MC;
                pack_a(ta, a, lda, ic, mc, pc, kc, packed_a);
                for (int jr = 0; jr < nc; jr += NR) {
                    int cols = nc - jr < NR ? nc - jr : NR;
                    for (int ir = 0; ir < mc; ir += MR) {
                        int rows = mc - ir < MR ? mc - ir : MR;
                        micro_kernel(kc, packed_a + (size_t)ir * kc, packed_b + (size_t)jr * kc, acc);
                        store_tile(acc, rows, cols, alpha, beta, pc == 0, c + (size_t)(ic + ir) * ldc + jc + jr, ldc);
                    }
                }
            }
        }
    }
}
