/* test_width.c: APSMPI_FORMAT=auto's controller without MPI: the ladders, raise, hold, lower, the LRU bound, key reuse after a communicator is freed, and the depth histogram's prediction against the codec's own flushes (MX and APS rungs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/aps.h"
#include "core/codec.h"
#include "core/format.h"
#include "core/width_controller.h"

static const double BUDGET = 0.2;
/* the default ladder's rungs */
enum { MXFP4, MXFP5, MXFP6, MXFP8, FP32, RUNGS };

static apsmpi_ladder ladder_of(const char *list)
{
    apsmpi_ladder l;
    char why[160];
    assert_int_equal(apsmpi_ladder_parse(list, &l, why, sizeof why), 0);
    return l;
}

/* the ladders: the default's names, depths and first rung; an APS one; the lists refused */
static void test_ladders(void **state)
{
    apsmpi_ladder l = ladder_of(APSMPI_LADDER_DEFAULT), a = ladder_of("e2m1,e3m2,e4m3");
    char why[160];
    static const int depth[RUNGS] = {4, 8, 9, 18, APSMPI_DEPTH_NONE};
    static const char *const names[RUNGS] = {"mxfp4", "mxfp5", "mxfp6", "mxfp8", "fp32"};

    (void)state;
    assert_int_equal(l.rungs, RUNGS);
    assert_int_equal(l.mx, 1);
    assert_int_equal(apsmpi_ladder_fp32(&l), FP32);
    assert_int_equal(apsmpi_ladder_first(&l), MXFP8);
    for (int r = 0; r < RUNGS; r++) {
        assert_int_equal(l.depth[r], depth[r]);
        assert_string_equal(apsmpi_ladder_name(&l, r), names[r]);
    }
    assert_string_equal(apsmpi_ladder_name(&l, RUNGS), "?");
    /* e2m1 and e3m2 as eXmY formats are IEEE-like (their top exponent is inf/NaN) */
    assert_int_equal(a.rungs, 4);
    assert_int_equal(a.mx, 0);
    assert_int_equal(a.depth[0], 3);
    assert_int_equal(a.depth[1], 3 + 2 + 2 + 1);
    assert_int_equal(a.depth[2], 18);
    assert_int_equal(a.depth[3], APSMPI_DEPTH_NONE);
    assert_int_equal(a.depth[4], APSMPI_DEPTH_NONE);
    assert_string_equal(apsmpi_ladder_name(&a, 3), "fp32");
    assert_int_equal(ladder_of("mxfp8").rungs, 2);
    static const char *const bad[] = {"",
                                      "mxfp4,",
                                      ",mxfp4",
                                      "mxfp4,e4m3",
                                      "e4m3,mxfp4",
                                      "mxfp8,mxfp4",
                                      "mxfp4,mxfp4",
                                      "mxfp6,mxfp6e2m3",
                                      "fp32",
                                      "auto",
                                      "e2m1,e3m2,e4m3,e5m7,fp16",
                                      "mxfp9",
                                      "mxfp4 ,mxfp6"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        assert_int_equal(apsmpi_ladder_parse(bad[i], &l, why, sizeof why), -1);
        assert_true(why[0] != '\0');
    }
}

static void test_raise(void **state)
{
    apsmpi_width_state st = {.rung = MXFP4};
    double pred[RUNGS] = {0.5, 0.3, 0.1, 0.0, 0.0};

    /* over the budget: at once to the narrowest wider rung predicted within it */
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP4, 0.5, pred, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, MXFP6);
    double five[RUNGS] = {0.5, 0.15, 0.1, 0.0, 0.0};
    st.rung = MXFP4;
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP4, 0.5, five, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, MXFP5);
    /* none predicted within: FP32 */
    double none[RUNGS] = {0.9, 0.85, 0.8, 0.7, 0.0};
    st.rung = MXFP4;
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP4, 0.9, none, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, FP32);
    /* a rank's agreed rung is another rank's raise: decided from there */
    double mid[RUNGS] = {0.9, 0.5, 0.3, 0.0, 0.0};
    st.rung = MXFP4;
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP6, 0.3, mid, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, MXFP8);
    /* a shorter ladder's top is its own FP32 */
    double two[2] = {0.5, 0.0};
    st.rung = 0;
    assert_int_equal(apsmpi_width_decide(&st, 2, 0, 0.5, two, BUDGET, 4), APSMPI_WIDTH_RAISED);
    assert_int_equal(st.rung, 1);
}

static void test_hold(void **state)
{
    apsmpi_width_state st = {.rung = MXFP6};
    double pred[RUNGS] = {0.3, 0.25, 0.1, 0.0, 0.0};

    /* within the budget, the narrower rungs predicted over it: stays, however long */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP6, 0.1, pred, BUDGET, 4), APSMPI_WIDTH_HELD);
        assert_int_equal(st.rung, MXFP6);
    }
    /* exactly at the budget is within it */
    double at[RUNGS] = {0.5, 0.4, BUDGET, 0.0, 0.0};
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP6, BUDGET, at, BUDGET, 4), APSMPI_WIDTH_HELD);
}

static void test_lower(void **state)
{
    apsmpi_width_state st = {.rung = MXFP8};
    double good[RUNGS] = {0.1, 0.05, 0.01, 0.0, 0.0}, bad[RUNGS] = {0.3, 0.3, 0.3, 0.0, 0.0};

    /* hold-1 calls of evidence: not yet */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP8, 0.0, good, BUDGET, 4), APSMPI_WIDTH_HELD);
        assert_int_equal(st.rung, MXFP8);
    }
    /* one call against it starts the count again */
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP8, 0.0, bad, BUDGET, 4), APSMPI_WIDTH_HELD);
    for (int i = 0; i < 3; i++)
        apsmpi_width_decide(&st, RUNGS, MXFP8, 0.0, good, BUDGET, 4);
    assert_int_equal(st.rung, MXFP8);
    /* the 4th in a row: straight to the narrowest rung with the evidence */
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP8, 0.0, good, BUDGET, 4), APSMPI_WIDTH_LOWERED);
    assert_int_equal(st.rung, MXFP4);
    /* evidence for mxfp5 and mxfp6 only: lowered to mxfp5, not further */
    st = (apsmpi_width_state){.rung = MXFP8};
    double five[RUNGS] = {0.3, 0.05, 0.01, 0.0, 0.0};
    for (int i = 0; i < 3; i++)
        apsmpi_width_decide(&st, RUNGS, MXFP8, 0.0, five, BUDGET, 4);
    assert_int_equal(apsmpi_width_decide(&st, RUNGS, MXFP8, 0.0, five, BUDGET, 4), APSMPI_WIDTH_LOWERED);
    assert_int_equal(st.rung, MXFP5);
    /* from FP32 too (its measure is the histogram of the contribution it sent as it is) */
    st = (apsmpi_width_state){.rung = FP32};
    double fp[RUNGS] = {0.9, 0.6, 0.5, 0.01, 0.0};
    for (int i = 0; i < 4; i++)
        apsmpi_width_decide(&st, RUNGS, FP32, 0.0, fp, BUDGET, 4);
    assert_int_equal(st.rung, MXFP8);
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
    m.deep[MXFP4] = 90; /* depth 10: at or past mxfp4's 4, mxfp5's 8 and mxfp6's 9, not mxfp8's 18 */
    m.deep[MXFP5] = 90;
    m.deep[MXFP6] = 90;
    return m;
}

static void test_store_lru(void **state)
{
    apsmpi_width_store s;
    apsmpi_flush_measure m = deep();
    apsmpi_ladder l = ladder_of(APSMPI_LADDER_DEFAULT);
    assert_int_equal(apsmpi_width_store_init(&s, 2, &l), 0);
    apsmpi_width_key a = key(1, 0xa000), b = key(1, 0xb000), c = key(1, 0xc000);

    assert_int_equal(apsmpi_width_proposal(&s, &a), MXFP8);
    /* mxfp8 measured 0 flushed; mxfp4 and mxfp6 predicted at 90%: held at mxfp8 */
    assert_int_equal(apsmpi_width_after_call(&s, &a, MXFP8, &m, 1, BUDGET, 4, NULL), APSMPI_WIDTH_HELD);
    /* a call on mxfp4 that flushed 90%: raised to mxfp8 */
    m.flushed = 90;
    assert_int_equal(apsmpi_width_after_call(&s, &b, MXFP4, &m, 1, BUDGET, 4, NULL), APSMPI_WIDTH_RAISED);
    assert_int_equal(apsmpi_width_proposal(&s, &b), MXFP8);
    assert_int_equal(apsmpi_width_entries(&s), 2);
    /* a third key drops the least recently used: a (b was used after it) */
    apsmpi_width_proposal(&s, &b);
    apsmpi_width_after_call(&s, &c, FP32, &m, 1, BUDGET, 4, NULL);
    assert_int_equal(apsmpi_width_entries(&s), 2);
    assert_int_equal(s.evicted, 1);
    /* (c's first call, on FP32, predicted mxfp8 within the budget: lowered to it at once) */
    assert_int_equal(apsmpi_width_proposal(&s, &c), MXFP8);
    assert_int_equal(apsmpi_width_proposal(&s, &b), MXFP8);
    apsmpi_width_store_free(&s);
}

/* a new bucket lowers after its first call, to what that call predicts; from then on the hold
 * applies */
static void test_new_bucket(void **state)
{
    apsmpi_width_store s;
    apsmpi_ladder l = ladder_of(APSMPI_LADDER_DEFAULT);
    apsmpi_width_key a = key(3, 0xa000);
    apsmpi_flush_measure m = {0};
    (void)state;
    m.elems = m.counted = m.nonzero = 100;
    m.deep[MXFP4] = 30; /* mxfp4 would flush 30%, mxfp5 10%: mxfp5 */
    m.deep[MXFP5] = 10;
    m.deep[MXFP6] = 5;
    assert_int_equal(apsmpi_width_store_init(&s, 8, &l), 0);
    assert_int_equal(apsmpi_width_proposal(&s, &a), MXFP8);
    assert_int_equal(apsmpi_width_after_call(&s, &a, MXFP8, &m, 1, BUDGET, 4, NULL), APSMPI_WIDTH_LOWERED);
    assert_int_equal(apsmpi_width_proposal(&s, &a), MXFP5);
    /* mxfp4 within the budget from now on: lowered after 4 calls in a row, not at once */
    m.deep[MXFP4] = 10;
    m.flushed = 5;
    for (int i = 0; i < 3; i++)
        assert_int_equal(apsmpi_width_after_call(&s, &a, MXFP5, &m, 1, BUDGET, 4, NULL), APSMPI_WIDTH_HELD);
    assert_int_equal(apsmpi_width_after_call(&s, &a, MXFP5, &m, 1, BUDGET, 4, NULL), APSMPI_WIDTH_LOWERED);
    assert_int_equal(apsmpi_width_proposal(&s, &a), MXFP4);
    apsmpi_width_store_free(&s);
}

static void test_key_reuse(void **state)
{
    apsmpi_width_store s;
    apsmpi_flush_measure m = deep();
    m.flushed = 90;
    apsmpi_ladder l = ladder_of(APSMPI_LADDER_DEFAULT);
    assert_int_equal(apsmpi_width_store_init(&s, 16, &l), 0);
    apsmpi_width_key a = key(7, 0xa000), other = key(8, 0xa000);

    apsmpi_width_after_call(&s, &a, MXFP4, &m, 1, BUDGET, 4, NULL);
    apsmpi_width_after_call(&s, &other, MXFP4, &m, 1, BUDGET, 4, NULL);
    assert_int_equal(apsmpi_width_proposal(&s, &a), MXFP8);
    /* the communicator was freed: its handle, made again for another, starts afresh */
    apsmpi_width_forget_comm(&s, 7);
    assert_int_equal(apsmpi_width_proposal(&s, &a), MXFP8);
    assert_int_equal(apsmpi_width_entries(&s), 1);
    assert_int_equal(s.forgotten, 1);
    assert_int_equal(apsmpi_width_proposal(&s, &other), MXFP8); /* another communicator's kept */
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

/* the histogram's prediction is the codec's own count of flushes, for each rung of the default
 * ladder, on data spread over many binades and on Gaussian-like data, with a tail block */
static void test_prediction_exact(void **state)
{
    const size_t n = 32 * 997 + 13;
    float *x = malloc(n * sizeof *x);
    void *out = malloc(n * 2);
    apsmpi_rounding nearest = {0};
    apsmpi_scales none = {NULL, n};
    apsmpi_ladder l = ladder_of(APSMPI_LADDER_DEFAULT);

    for (int binades = 2; binades <= 28; binades += 13) {
        spread(x, n, binades, 42 + (uint64_t)binades);
        apsmpi_flush_measure m = {0};
        apsmpi_flush_depths(x, n, &l, &m);
        for (int rung = 0; rung < FP32; rung++) {
            apsmpi_codec *c = apsmpi_codec_create(&l.format[rung]);
            uint64_t flushed = 0;
            assert_non_null(c);
            apsmpi_encode(c, x, n, 0, none, nearest, out, &flushed);
            assert_int_equal(m.counted, n); /* (fewer than APSMPI_MEASURE_BLOCKS blocks: all counted) */
            double share = (double)flushed / (double)m.nonzero;
            assert_true(fabs(share - apsmpi_flush_predicted(&m, rung)) < 1e-12);
            apsmpi_codec_free(c);
        }
        assert_true(apsmpi_flush_predicted(&m, FP32) == 0.0);
    }
    /* 28 binades: mxfp4 to mxfp6 flush much, mxfp8 some; mxfp5 between mxfp4 and mxfp6 */
    apsmpi_flush_measure m = {0};
    apsmpi_flush_depths(x, n, &l, &m);
    assert_true(apsmpi_flush_predicted(&m, MXFP4) > 0.5);
    assert_true(apsmpi_flush_predicted(&m, MXFP5) < apsmpi_flush_predicted(&m, MXFP4));
    assert_true(apsmpi_flush_predicted(&m, MXFP5) > apsmpi_flush_predicted(&m, MXFP6));
    assert_true(apsmpi_flush_predicted(&m, MXFP8) > 0.0);
    free(x);
    free(out);
}

/* an APS ladder: the histogram against the agreed scales of one rung predicts every rung's
 * flushes exactly, blocks of 256 over a range that starts inside a block (a piece); and the
 * measure without scales (the top at the format's own largest binade) that of its own rung */
static void test_prediction_scaled(void **state)
{
    const size_t n = 256 * 37 + 11, first = 100, block = 256, total = first + n;
    const size_t nblocks = apsmpi_block_count(total, block);
    float *all = malloc(total * sizeof *all), *x = all + first;
    void *out = malloc(total * 2);
    int16_t *exps = malloc(nblocks * sizeof *exps), *sc = malloc(nblocks * sizeof *sc);
    apsmpi_rounding nearest = {0};
    apsmpi_ladder l = ladder_of("e2m1,e3m2,e4m3");

    (void)state;
    for (int binades = 3; binades <= 23; binades += 10) {
        spread(all, total, binades, 7 + (uint64_t)binades);
        /* tensors whose scales differ by 2^20 within the range: the first block's values far smaller */
        for (size_t i = 0; i < block; i++)
            all[i] = ldexpf(all[i], -20);
        apsmpi_block_exponents(all, total, block, exps);
        for (int with = 0; with < 2; with++) {
            /* the measure, from the widest rung's scales (or none) */
            const apsmpi_format *w = &l.format[apsmpi_ladder_first(&l)];
            memcpy(sc, exps, nblocks * sizeof *sc);
            apsmpi_exponents_to_scales(sc, nblocks, w, 1);
            apsmpi_flush_measure m = {0};
            apsmpi_flush_depths_scaled(x, n, first, with ? sc : NULL, block, w->emax, &l, &m);
            assert_int_equal(m.counted, n);
            for (int rung = 0; rung < apsmpi_ladder_fp32(&l); rung++) {
                const apsmpi_format *f = &l.format[rung];
                apsmpi_codec *c = apsmpi_codec_create(f);
                assert_non_null(c);
                uint64_t flushed = 0;
                memcpy(sc, exps, nblocks * sizeof *sc);
                apsmpi_exponents_to_scales(sc, nblocks, f, 1);
                if (!with)
                    memset(sc, 0, nblocks * sizeof *sc);
                apsmpi_scales s = {sc, block};
                apsmpi_encode(c, x, n, first, s, nearest, out, &flushed);
                apsmpi_codec_free(c);
                if (with || rung == apsmpi_ladder_first(&l)) /* (unscaled, each rung's top is its own) */
                    assert_true(fabs((double)flushed / (double)m.nonzero - apsmpi_flush_predicted(&m, rung)) < 1e-12);
            }
            if (with) /* the small tensor's block: e2m1 flushes most of the range, e4m3 less */
                assert_true(apsmpi_flush_predicted(&m, 0) > apsmpi_flush_predicted(&m, 2));
        }
    }
    free(all);
    free(out);
    free(exps);
    free(sc);
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
    apsmpi_ladder l = ladder_of(APSMPI_LADDER_DEFAULT);
    apsmpi_flush_measure m = {0}, again = {0};
    uint64_t flushed = 0, nonzero = 0;

    spread(x, n, 9, 7);
    apsmpi_flush_depths(x, n, &l, &m);
    apsmpi_flush_depths(x, n, &l, &again);
    assert_memory_equal(&m, &again, sizeof m);
    assert_true(m.counted < n / 4 && m.counted >= 32 * 3000);
    apsmpi_codec *c = apsmpi_codec_create(&l.format[MXFP4]);
    apsmpi_encode(c, x, n, 0, none, nearest, out, &flushed);
    for (size_t i = 0; i < n; i++)
        nonzero += x[i] != 0;
    m.flushed = flushed;
    double exact = (double)flushed / (double)nonzero;
    assert_true(exact > 0.2 && exact < 0.8);
    assert_true(fabs(apsmpi_flush_share(&m) - exact) < 0.015);
    assert_true(fabs(apsmpi_flush_predicted(&m, MXFP4) - exact) < 0.015);
    apsmpi_codec_free(c);
    free(x);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ladders),
        cmocka_unit_test(test_raise),
        cmocka_unit_test(test_hold),
        cmocka_unit_test(test_lower),
        cmocka_unit_test(test_store_lru),
        cmocka_unit_test(test_key_reuse),
        cmocka_unit_test(test_prediction_exact),
        cmocka_unit_test(test_prediction_scaled),
        cmocka_unit_test(test_sampled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
