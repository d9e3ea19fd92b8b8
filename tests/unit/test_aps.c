/* test_aps.c: unit tests of the APS exponents and scales: edge values, block splits, rank counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/aps.h"
#include "core/format.h"
#include "core/fpconv.h"
#include "core/own_scales.h"

static uint32_t bits_of(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b & 0x7fffffffu;
}

static void test_exponent_edge_values(void **state)
{
    assert_int_equal(apsmpi_exponent_of(0), APSMPI_EXP_ZERO);
    assert_int_equal(apsmpi_exponent_of(bits_of(1.0f)), 0);
    assert_int_equal(apsmpi_exponent_of(bits_of(1.5f)), 1);
    assert_int_equal(apsmpi_exponent_of(bits_of(2.0f)), 1);
    assert_int_equal(apsmpi_exponent_of(bits_of(0.75f)), 0);
    assert_int_equal(apsmpi_exponent_of(bits_of(0.5f)), -1);
    assert_int_equal(apsmpi_exponent_of(bits_of(448.0f)), 9);
    assert_int_equal(apsmpi_exponent_of(bits_of(3.4028235e38f)), 128);
    assert_int_equal(apsmpi_exponent_of(bits_of(1.1754944e-38f)), -126); /* smallest normal */
    assert_int_equal(apsmpi_exponent_of(1), -149);                       /* smallest subnormal */
    assert_int_equal(apsmpi_exponent_of(2), -148);
    assert_int_equal(apsmpi_exponent_of(3), -147);
    assert_int_equal(apsmpi_exponent_of(0x7fffff), -126); /* largest subnormal: just below 2^-126 */
    assert_int_equal(apsmpi_exponent_of(bits_of(INFINITY)), APSMPI_EXP_NONFINITE);
    assert_int_equal(apsmpi_exponent_of(bits_of(NAN)), APSMPI_EXP_NONFINITE);
    assert_int_equal(apsmpi_exponent_of(0x7f800001u), APSMPI_EXP_NONFINITE); /* signalling NaN */
}

/* ceil(log2(x)) by the C library, for every kind of finite positive float. */
static void test_exponent_matches_libm(void **state)
{
    uint32_t b = 1;
    for (int i = 0; i < 200000; i++, b = b * 1664525u + 1013904223u) {
        uint32_t abs = b & 0x7fffffffu;
        float x;
        if (abs == 0 || abs >= 0x7f800000u)
            continue;
        memcpy(&x, &abs, sizeof x);
        assert_int_equal(apsmpi_exponent_of(abs), (int)ceil(log2((double)x)));
    }
}

static void test_block_exponents(void **state)
{
    float x[10] = {0.25f, -3.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1e-40f, -0.0f, NAN, 2.0f};
    int16_t e[4];

    apsmpi_block_exponents(x, 10, 3, e); /* blocks [0,3) [3,6) [6,9) [9,10) */
    assert_int_equal(e[0], 2);
    assert_int_equal(e[1], APSMPI_EXP_ZERO);
    assert_int_equal(e[2], APSMPI_EXP_NONFINITE);
    assert_int_equal(e[3], 1);
    assert_int_equal(apsmpi_fp32_reason(e, 4, 2), APSMPI_FP32_NONFINITE);
    assert_int_equal(apsmpi_fp32_reason(e, 2, 2), APSMPI_FP32_NO);

    x[8] = -INFINITY;
    apsmpi_block_exponents(x, 10, 10, e); /* one block: the per-call mode */
    assert_int_equal(e[0], APSMPI_EXP_NONFINITE);
    x[8] = 0.0f;
    apsmpi_block_exponents(x + 6, 1, 4, e); /* a subnormal alone */
    assert_int_equal(e[0], (int)ceil(log2(1e-40)));
    assert_int_equal(apsmpi_block_count(10, 3), 4);
    assert_int_equal(apsmpi_block_count(9, 3), 3);
}

static void test_rank_headroom(void **state)
{
    assert_int_equal(apsmpi_rank_headroom(1), 0);
    assert_int_equal(apsmpi_rank_headroom(2), 1);
    assert_int_equal(apsmpi_rank_headroom(3), 2);
    assert_int_equal(apsmpi_rank_headroom(4), 2);
    assert_int_equal(apsmpi_rank_headroom(1000), 10);
    assert_int_equal(apsmpi_rank_headroom(1024), 10);
    assert_int_equal(apsmpi_rank_headroom(1025), 11);
}

static void test_scales_e4m3(void **state)
{
    apsmpi_format f;
    int16_t e[3] = {0, APSMPI_EXP_ZERO, -20};

    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    apsmpi_exponents_to_scales(e, 3, &f, 4);
    assert_int_equal(e[0], 8 - 0 - 2); /* max 1.0 on 4 ranks: 4 * 2^6 = 2^8 <= 448 */
    assert_int_equal(e[1], 0);
    assert_int_equal(e[2], 8 + 20 - 2);

    e[0] = 0;
    apsmpi_exponents_to_scales(e, 1, &f, 1); /* one rank: no headroom */
    assert_int_equal(e[0], 8);
    e[0] = 0;
    apsmpi_exponents_to_scales(e, 1, &f, 1024);
    assert_int_equal(e[0], 8 - 10);
}

/* For every format and rank count, the scale is safe (N addends of the scaled maximum stay
 * at or below 2^emax, itself at most the largest finite value) and the largest such power
 * of two (one more doubling would break the bound for a power-of-two rank count). */
static void test_scales_are_largest_safe(void **state)
{
    static const char *names[] = {"fp16", "bf16", "e5m2", "e4m3", "e4m3ieee", "e3m2", "e2m1", "e8m0"};
    static const int ranks[] = {1, 2, 3, 4, 7, 8, 1000, 1024};
    uint32_t b = 12345;

    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        apsmpi_format f;
        assert_int_equal(apsmpi_format_parse(names[k], &f), 0);
        assert_true(ldexp(1.0, f.emax) <= f.max_finite);
        for (size_t r = 0; r < sizeof ranks / sizeof *ranks; r++) {
            for (int i = 0; i < 2000; i++, b = b * 1664525u + 1013904223u) {
                uint32_t abs = b & 0x7fffffffu;
                int16_t e;
                float x;
                if (abs == 0 || abs >= 0x7f800000u)
                    continue;
                memcpy(&x, &abs, sizeof x);
                e = apsmpi_exponent_of(abs);
                apsmpi_exponents_to_scales(&e, 1, &f, ranks[r]);
                double scaled = ldexp((double)x, e);
                double bound = ldexp(1.0, f.emax);
                assert_true(scaled * ranks[r] <= bound);
                assert_true(2.0 * scaled * (1 << apsmpi_rank_headroom(ranks[r])) > bound);
            }
        }
    }
}

/* Issue 18, defect 2: a call goes in FP32 when a block's values come so near FLT_MAX that the
 * FP32 sum of nranks of them could overflow; inf/NaN anywhere wins over that. */
static void test_fp32_reason(void **state)
{
    int16_t e[3] = {APSMPI_EXP_ZERO, 126, -40};

    assert_int_equal(apsmpi_max_safe_exponent(1), 127);
    assert_int_equal(apsmpi_max_safe_exponent(2), 126);
    assert_int_equal(apsmpi_max_safe_exponent(3), 125);
    assert_int_equal(apsmpi_max_safe_exponent(1024), 117);
    assert_int_equal(apsmpi_max_safe_exponent(1025), 116);
    assert_int_equal(apsmpi_fp32_reason(e, 3, 2), APSMPI_FP32_NO); /* 2 x 2^126 = 2^127 < FLT_MAX */
    assert_int_equal(apsmpi_fp32_reason(e, 3, 3), APSMPI_FP32_NEAR_FLT_MAX);
    e[1] = 117;
    assert_int_equal(apsmpi_fp32_reason(e, 3, 1024), APSMPI_FP32_NO);
    assert_int_equal(apsmpi_fp32_reason(e, 3, 1025), APSMPI_FP32_NEAR_FLT_MAX);
    e[1] = apsmpi_exponent_of(bits_of(1.7e38f)); /* the two ranks of 1.7e38: 127 */
    assert_int_equal(e[1], 127);
    assert_int_equal(apsmpi_fp32_reason(e, 3, 2), APSMPI_FP32_NEAR_FLT_MAX);
    e[0] = APSMPI_EXP_NONFINITE;
    assert_int_equal(apsmpi_fp32_reason(e, 3, 2), APSMPI_FP32_NONFINITE);
    assert_int_equal(apsmpi_fp32_reason(e, 0, 2), APSMPI_FP32_NO);
}

/* Below the limit nothing the codec gives back can pass 2^127, in any format or rounding: the
 * largest magnitude of a block of exponent e, scaled to 2^emax, encoded and decoded, is at most
 * 2^e. At e = 128 (values above 2^127, which go in FP32) FLT_MAX rounded to nearest would come
 * back as 2^128: inf. */
static void test_top_binade_decodes_finite(void **state)
{
    static const char *names[] = {"fp16", "bf16", "e5m2", "e4m3", "e4m3ieee", "e3m2", "e2m1", "e8m0", "e5m6"};
    const float below_2_127 = nextafterf(ldexpf(1.0f, 127), 0.0f);

    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        apsmpi_format f;
        assert_int_equal(apsmpi_format_parse(names[k], &f), 0);
        for (int stochastic = 0; stochastic < 2; stochastic++)
            for (uint32_t rnd = 0; rnd < 4; rnd++) {
                uint32_t r = rnd * 0x55555555u, code;
                code = apsmpi_encode_one(apsmpi_f2u(below_2_127), f.emax - 127, &f, stochastic, r);
                assert_true(apsmpi_decode_one(code, f.emax - 127, &f) <= ldexpf(1.0f, 127));
                code = apsmpi_encode_one(apsmpi_f2u(FLT_MAX), f.emax - 128, &f, stochastic, r);
                if (!stochastic) /* (stochastic rounding may round down) */
                    assert_true(isinf(apsmpi_decode_one(code, f.emax - 128, &f)));
            }
    }
}

/* Defect 5: the agreement's count was (int)nblocks + 1, which overflows near INT_MAX blocks
 * (a reduce-scatter's total may exceed INT_MAX elements): such calls get -1 (fp32). */
static void test_agreement_count(void **state)
{
    assert_int_equal(apsmpi_agreement_count(0), 2);
    assert_int_equal(apsmpi_agreement_count(4096), 4098);
    assert_int_equal(apsmpi_agreement_count((size_t)INT_MAX - 2), INT_MAX);
    assert_int_equal(apsmpi_agreement_count((size_t)INT_MAX - 1), -1);
    assert_int_equal(apsmpi_agreement_count((size_t)INT_MAX), -1);
    assert_int_equal(apsmpi_agreement_count((size_t)INT_MAX + 1), -1);
    assert_int_equal(apsmpi_agreement_count((size_t)3 << 31), -1);
}

/* Scales of an fp32 sum from its own values: blocks cut where the buffer's grid cuts them. */
static void test_own_scales(void **state)
{
    apsmpi_format f;
    /* element 1 of a grid of 4: blocks [1,4), [4,8), [8,12), [12,13) of the buffer */
    float x[12] = {1.0f, 0.5f, -0.25f, 0.0f, -3.0f, 2.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 6.0f};
    int16_t sc[5] = {99, 99, 99, 99, 99};

    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    assert_int_equal(apsmpi_own_scale_count(0, 0, 4), 0);
    assert_int_equal(apsmpi_own_scale_count(12, 1, 4), 4);
    assert_int_equal(apsmpi_own_scale_count(3, 1, 4), 1);
    assert_int_equal(apsmpi_own_scale_count(4, 1, 4), 2);
    apsmpi_own_scales(x, 12, 1, 4, &f, sc);
    assert_int_equal(sc[0], 8 - 0); /* max 1.0: ceil(log2) 0, emax 8, no headroom */
    assert_int_equal(sc[1], 8 - 2); /* max |-3.0| */
    assert_int_equal(sc[2], 0);     /* all zero */
    assert_int_equal(sc[3], 8 - 3); /* 6.0, alone in the last block */
    assert_int_equal(sc[4], 99);    /* nothing beyond the count */
    x[5] = INFINITY;                /* an fp32 sum that overflowed: no scaling */
    apsmpi_own_scales(x, 12, 1, 4, &f, sc);
    assert_int_equal(sc[1], 0);
    x[5] = 1e-30f; /* tiny values get large scales: the largest maps to 2^emax */
    x[4] = 0.0f;
    apsmpi_own_scales(x, 12, 1, 4, &f, sc);
    assert_int_equal(sc[1], 8 + 99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agreement_count),       cmocka_unit_test(test_exponent_edge_values),
        cmocka_unit_test(test_exponent_matches_libm), cmocka_unit_test(test_own_scales),
        cmocka_unit_test(test_block_exponents),       cmocka_unit_test(test_rank_headroom),
        cmocka_unit_test(test_scales_e4m3),           cmocka_unit_test(test_scales_are_largest_safe),
        cmocka_unit_test(test_fp32_reason),           cmocka_unit_test(test_top_binade_decodes_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
