/* aps.c: finds the largest magnitude of each block and turns the ranks' agreed exponents into scales. */
#include "core/aps.h"
#include "core/fpconv.h"

#include <string.h>

#if APSMPI_EXP_ZERO != INT16_MIN || APSMPI_EXP_NONFINITE != INT16_MAX
#error "apsmpi_exponent_of_bits (fpconv.h) returns INT16_MIN and INT16_MAX as the markers"
#endif

int16_t apsmpi_exponent_of(uint32_t abs_bits)
{
    return apsmpi_exponent_of_bits(abs_bits); /* shared with the CUDA kernels */
}

/* An AVX2 clone beside the baseline x86-64 code; other CPUs' compilers vectorise the loop
 * for their own baseline (NEON on aarch64). */
#if defined(__x86_64__) && defined(__GNUC__)
#define MAX_ABS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MAX_ABS_CLONES
#endif

/* The largest float bit pattern without sign in x[0..n): integer order of these patterns is
 * the order of the magnitudes, and inf and NaN sort above every finite value. */
MAX_ABS_CLONES static uint32_t max_abs_bits(const uint32_t *x, size_t n)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a = x[i] & 0x7fffffffu;
        m = a > m ? a : m;
    }
    return m;
}

void apsmpi_block_exponents(const float *x, size_t n, size_t block_len, int16_t *exps)
{
    const uint32_t *bits = (const uint32_t *)(const void *)x;
    size_t nblocks = apsmpi_block_count(n, block_len);

    for (size_t b = 0; b < nblocks; b++) {
        size_t start = b * block_len;
        size_t len = n - start < block_len ? n - start : block_len;
        exps[b] = apsmpi_exponent_of(max_abs_bits(bits + start, len));
    }
}

int apsmpi_rank_headroom(int nranks)
{
    int h = 0;
    while ((1L << h) < (long)nranks)
        h++;
    return h;
}

int apsmpi_max_safe_exponent(int nranks) { return 127 - apsmpi_rank_headroom(nranks); }

enum apsmpi_fp32_reason apsmpi_fp32_reason(const int16_t *exps, size_t n, int nranks)
{
    int safe = apsmpi_max_safe_exponent(nranks);
    enum apsmpi_fp32_reason reason = APSMPI_FP32_NO;

    for (size_t i = 0; i < n; i++) {
        if (exps[i] == APSMPI_EXP_NONFINITE)
            return APSMPI_FP32_NONFINITE;
        if (exps[i] != APSMPI_EXP_ZERO && exps[i] > safe)
            reason = APSMPI_FP32_NEAR_FLT_MAX;
    }
    return reason;
}

void apsmpi_exponents_to_scales(int16_t *exps, size_t n, const apsmpi_format *f, int nranks)
{
    int headroom = apsmpi_rank_headroom(nranks);

    for (size_t i = 0; i < n; i++)
        exps[i] = exps[i] == APSMPI_EXP_ZERO ? 0 : (int16_t)(f->emax - exps[i] - headroom);
}
