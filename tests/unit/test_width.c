/* test_width.c: APSMPI_FORMAT=auto's controller without MPI: raise, hold, lower, the LRU bound, key reuse after a communicator is freed, the depth histogram's prediction against the codec's own flushes, and the GPU's block counts against the histogram. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "core/flush_depth.h"
#include "core/format.h"
#include "core/width_controller.h"

static const double BUDGET = 0.2;

static void test_raise(void **state)
{
    apsmpi_width_state st = {.rung = APSMPI_RUNG_MXFP4};
    double pred[APSMPI_RUNGS] = {0.5, 0.1, 0.0, 0.0};

    /* over the budget: at once to the narrowest wider rung predicted within it */
    assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP4, 0.5, pred, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, APSMPI_RUNG_MXFP6);
    /* none predicted within: FP32 */
    double none[APSMPI_RUNGS] = {0.9, 0.8, 0.7, 0.0};
    st.rung = APSMPI_RUNG_MXFP4;
    assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP4, 0.9, none, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, APSMPI_RUNG_FP32);
    /* a rank's agreed rung is another rank's raise: decided from there */
    double mid[APSMPI_RUNGS] = {0.9, 0.3, 0.0, 0.0};
    st.rung = APSMPI_RUNG_MXFP4;
    assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP6, 0.3, mid, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, APSMPI_RUNG_MXFP8);
}

static void test_hold(void **state)
{
    apsmpi_width_state st = {.rung = APSMPI_RUNG_MXFP6};
    double pred[APSMPI_RUNGS] = {0.3, 0.1, 0.0, 0.0};

    /* within the budget, the narrower rung predicted over it: stays, however long */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP6, 0.1, pred, BUDGET, 4), APSMPI_WIDTH_HELD);
        assert_int_equal(st.rung, APSMPI_RUNG_MXFP6);
    }
    /* exactly at the budget is within it */
    double at[APSMPI_RUNGS] = {0.5, BUDGET, 0.0, 0.0};
    assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP6, BUDGET, at, BUDGET, 4), APSMPI_WIDTH_HELD);
}

static void test_lower(void **state)
{
    apsmpi_width_state st = {.rung = APSMPI_RUNG_MXFP8};
    double good[APSMPI_RUNGS] = {0.1, 0.01, 0.0, 0.0}, bad[APSMPI_RUNGS] = {0.3, 0.3, 0.0, 0.0};

    /* hold-1 calls of evidence: not yet */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP8, 0.0, good, BUDGET, 4), APSMPI_WIDTH_HELD);
        assert_int_equal(st.rung, APSMPI_RUNG_MXFP8);
    }
    /* one call against it starts the count again */
    assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP8, 0.0, bad, BUDGET, 4), APSMPI_WIDTH_HELD);
    for (int i = 0; i < 3; i++)
        apsmpi_width_decide(&st, APSMPI_RUNG_MXFP8, 0.0, good, BUDGET, 4);
    assert_int_equal(st.rung, APSMPI_RUNG_MXFP8);
    /* the 4th in a row: straight to the narrowest rung with the evidence */
    assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP8, 0.0, good, BUDGET, 4), APSMPI_WIDTH_LOWERED);
    assert_int_equal(st.rung, APSMPI_RUNG_MXFP4);
    /* evidence for mxfp6 only: lowered to mxfp6, not further */
    st = (apsmpi_width_state){.rung = APSMPI_RUNG_MXFP8};
    double six[APSMPI_RUNGS] = {0.3, 0.01, 0.0, 0.0};
    for (int i = 0; i < 3; i++)
        apsmpi_width_decide(&st, APSMPI_RUNG_MXFP8, 0.0, six, BUDGET, 4);
    assert_int_equal(apsmpi_width_decide(&st, APSMPI_RUNG_MXFP8, 0.0, six, BUDGET, 4), APSMPI_WIDTH_LOWERED);
    assert_int_equal(st.rung, APSMPI_RUNG_MXFP6);
    /* from FP32 too (its measure is the histogram of the contribution it sent as it is) */
    st = (apsmpi_width_state){.rung = APSMPI_RUNG_FP32};
    double fp[APSMPI_RUNGS] = {0.9, 0.5, 0.01, 0.0};
    for (int i = 0; i < 4; i++)
        apsmpi_width_decide(&st, APSMPI_RUNG_FP32, 0.0, fp, BUDGET, 4);
    assert_int_equal(st.rung, APSMPI_RUNG_MXFP8);
}

static apsmpi_width_key key(uint64_t comm, uint64_t addr)
{
    apsmpi_width_key k = {comm, 1000, addr, 0};
    return k;
}

/* a measure whose every value lies 10 binades below its block's top: mxfp4 and mxfp6 flush it */
static apsmpi_flush_measure deep(void)
{
    apsmpi_flush_measure m = {0};
    m.elems = m.counted = m.nonzero = 100;
    m.deep[APSMPI_RUNG_MXFP4] = 90; /* depth 10: at or past mxfp4's 4 and mxfp6's 9, not mxfp8's 18 */
    m.deep[APSMPI_RUNG_MXFP6] = 90;
    return m;
}

static void test_store_lru(void **state)
{
    apsmpi_width_store s;
    apsmpi_flush_measure m = deep();
    assert_int_equal(apsmpi_width_store_init(&s, 2), 0);
    apsmpi_width_key a = key(1, 0xa000), b = key(1, 0xb000), c = key(1, 0xc000);

    assert_int_equal(apsmpi_width_proposal(&s, &a), APSMPI_RUNG_FIRST);
    /* mxfp8 measured 0 flushed; mxfp4 and mxfp6 predicted at 90%: held at mxfp8 */
    assert_int_equal(apsmpi_width_after_call(&s, &a, APSMPI_RUNG_MXFP8, &m, 1, BUDGET, 4, NULL), APSMPI_WIDTH_HELD);
    /* a call on mxfp4 that flushed 90%: raised to mxfp8 */
    m.flushed = 90;
    assert_int_equal(apsmpi_width_after_call(&s, &b, APSMPI_RUNG_MXFP4, &m, 1, BUDGET, 4, NULL), APSMPI_WIDTH_RAISED);
    assert_int_equal(apsmpi_width_proposal(&s, &b), APSMPI_RUNG_MXFP8);
    assert_int_equal(apsmpi_width_entries(&s), 2);
    /* a third key drops the least recently used: a (b was used after it) */
    apsmpi_width_proposal(&s, &b);
    apsmpi_width_after_call(&s, &c, APSMPI_RUNG_FP32, &m, 1, BUDGET, 4, NULL);
    assert_int_equal(apsmpi_width_entries(&s), 2);
    assert_int_equal(s.evicted, 1);
    assert_int_equal(apsmpi_width_proposal(&s, &c), APSMPI_RUNG_FP32);
    assert_int_equal(apsmpi_width_proposal(&s, &b), APSMPI_RUNG_MXFP8);
    apsmpi_width_store_free(&s);
}

static void test_key_reuse(void **state)
{
    apsmpi_width_store s;
    apsmpi_flush_measure m = deep();
    m.flushed = 90;
    assert_int_equal(apsmpi_width_store_init(&s, 16), 0);
    apsmpi_width_key a = key(7, 0xa000), other = key(8, 0xa000);

    apsmpi_width_after_call(&s, &a, APSMPI_RUNG_MXFP4, &m, 1, BUDGET, 4, NULL);
    apsmpi_width_after_call(&s, &other, APSMPI_RUNG_MXFP4, &m, 1, BUDGET, 4, NULL);
    assert_int_equal(apsmpi_width_proposal(&s, &a), APSMPI_RUNG_MXFP8);
    /* the communicator was freed: its handle, made again for another, starts afresh */
    apsmpi_width_forget_comm(&s, 7);
    assert_int_equal(apsmpi_width_proposal(&s, &a), APSMPI_RUNG_FIRST);
    assert_int_equal(apsmpi_width_entries(&s), 1);
    assert_int_equal(s.forgotten, 1);
    assert_int_equal(apsmpi_width_proposal(&s, &other), APSMPI_RUNG_MXFP8); /* another communicator's kept */
    apsmpi_width_store_free(&s);
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 11;
}

/* values spread over `binades` binades within each block (and some exact powers of two, the
 * ties of the depth one above the flush), mantissas random */
static void spread(float *x, size_t n, int binades, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = lcg(&seed);
        double m = 1.0 + (double)(r % 1000000) / 1000000.0;
        if (r % 7 == 0)
            m = 1.0;
        int e = (int)(lcg(&seed) % (uint64_t)binades) - 20;
        x[i] = (float)((lcg(&seed) & 1 ? -1 : 1) * ldexp(m, e));
        if (lcg(&seed) % 13 == 0)
            x[i] = 0;
    }
}

/* the histogram's prediction is the codec's own count of flushes, for each rung, on data
 * spread over many binades and on Gaussian-like data, with a tail block */
static void test_prediction_exact(void **state)
{
    const size_t n = 32 * 997 + 13;
    float *x = malloc(n * sizeof *x);
    void *out = malloc(n * 2);
    apsmpi_rounding nearest = {0};
    apsmpi_scales none = {NULL, n};
    const char *names[3] = {"mxfp4", "mxfp6", "mxfp8"};

    for (int binades = 2; binades <= 28; binades += 13) {
        spread(x, n, binades, 42 + (uint64_t)binades);
        apsmpi_flush_measure m = {0};
        apsmpi_flush_depths(x, n, &m);
        for (int rung = 0; rung < 3; rung++) {
            apsmpi_format f;
            assert_int_equal(apsmpi_format_parse(names[rung], &f), 0);
            apsmpi_codec *c = apsmpi_codec_create(&f);
            uint64_t flushed = 0;
            assert_non_null(c);
            apsmpi_encode(c, x, n, 0, none, nearest, out, &flushed);
            assert_int_equal(m.counted, n); /* (fewer than APSMPI_MEASURE_BLOCKS blocks: all counted) */
            double share = (double)flushed / (double)m.nonzero;
            assert_true(fabs(share - apsmpi_flush_predicted(&m, rung)) < 1e-12);
            apsmpi_codec_free(c);
        }
        assert_true(apsmpi_flush_predicted(&m, APSMPI_RUNG_FP32) == 0.0);
    }
    /* 28 binades: mxfp4 and mxfp6 flush much, mxfp8 some */
    apsmpi_flush_measure m = {0};
    apsmpi_flush_depths(x, n, &m);
    assert_true(apsmpi_flush_predicted(&m, APSMPI_RUNG_MXFP4) > 0.5);
    assert_true(apsmpi_flush_predicted(&m, APSMPI_RUNG_MXFP8) > 0.0);
    free(x);
    free(out);
}

/* a range of more than APSMPI_MEASURE_BLOCKS blocks counts every k-th block: its measured share
 * and predictions stay within 1.5 points of the exact ones (the same blocks at every run) */
static void test_sampled(void **state)
{
    const size_t n = 32 * 20000 + 5;
    float *x = malloc(n * sizeof *x);
    void *out = malloc(n);
    apsmpi_rounding nearest = {0};
    apsmpi_scales none = {NULL, n};
    apsmpi_format f;
    apsmpi_flush_measure m = {0}, again = {0};
    uint64_t flushed = 0, nonzero = 0;

    spread(x, n, 9, 7);
    apsmpi_flush_depths(x, n, &m);
    apsmpi_flush_depths(x, n, &again);
    assert_memory_equal(&m, &again, sizeof m);
    assert_true(m.counted < n / 4 && m.counted >= 32 * 3000);
    assert_int_equal(apsmpi_format_parse("mxfp4", &f), 0);
    apsmpi_codec *c = apsmpi_codec_create(&f);
    apsmpi_encode(c, x, n, 0, none, nearest, out, &flushed);
    for (size_t i = 0; i < n; i++)
        nonzero += x[i] != 0;
    m.flushed = flushed;
    double exact = (double)flushed / (double)nonzero;
    assert_true(exact > 0.2 && exact < 0.8);
    assert_true(fabs(apsmpi_flush_share(&m) - exact) < 0.015);
    assert_true(fabs(apsmpi_flush_predicted(&m, APSMPI_RUNG_MXFP4) - exact) < 0.015);
    apsmpi_codec_free(c);
    free(x);
    free(out);
}

/* core/flush_depth.h's block counts (what the GPU's measuring encode and the mock GPU run) with
 * the ladder's bins are the host histogram's, over every block; bins it is not given count nothing */
static void test_depth_bins_are_the_histogram(void **state)
{
    const size_t n = 32 * 3001 + 7;
    float *x = malloc(n * sizeof *x);
    apsmpi_depth_bins ladder;

    for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
        ladder.depth[k] = k < APSMPI_RUNG_FP32 ? apsmpi_rung_flush_depth(k) : APSMPI_DEPTH_NONE;
    for (int binades = 1; binades <= 40; binades += 13) {
        apsmpi_flush_measure m = {0};
        uint64_t counts[APSMPI_MEASURE_COUNTERS] = {0};
        spread(x, n, binades, 99 + (uint64_t)binades);
        x[5] = 1e-40f; /* subnormals, counted alike */
        x[40] = -3e-42f;
        apsmpi_flush_depths(x, n, &m);
        assert_int_equal(m.counted, n);
        for (size_t b = 0; b < n; b += 32)
            apsmpi_block_depth_counts((const uint32_t *)(const void *)(x + b), n - b < 32 ? (int)(n - b) : 32, &ladder,
                                      counts);
        assert_int_equal(counts[APSMPI_COUNT_NONZERO], m.nonzero);
        assert_int_equal(counts[APSMPI_COUNT_FLUSHED], 0);
        for (int r = 0; r < APSMPI_RUNG_FP32; r++)
            assert_int_equal(counts[APSMPI_COUNT_DEEP + r], m.deep[r]);
        for (int k = APSMPI_RUNG_FP32; k < APSMPI_DEPTH_BINS; k++)
            assert_int_equal(counts[APSMPI_COUNT_DEEP + k], 0);
    }
    free(x);
}

static void test_names(void **state)
{
    assert_string_equal(apsmpi_rung_name(APSMPI_RUNG_MXFP4), "mxfp4");
    assert_string_equal(apsmpi_rung_name(APSMPI_RUNG_FP32), "fp32");
    assert_int_equal(apsmpi_rung_flush_depth(APSMPI_RUNG_MXFP6), 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raise),     cmocka_unit_test(test_hold),
        cmocka_unit_test(test_lower),     cmocka_unit_test(test_store_lru),
        cmocka_unit_test(test_key_reuse), cmocka_unit_test(test_prediction_exact),
        cmocka_unit_test(test_sampled),   cmocka_unit_test(test_depth_bins_are_the_histogram),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
