/* test_feedback.c: error feedback without MPI: the residual store (keys, least recently used dropped first, the bound, statistics) and the property that makes it right, on the codec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "feedback/arithmetic.h"
#include "core/own_scales.h"
#include "feedback/residuals.h"

static apsmpi_residual_key key_of(uint64_t comm, uint64_t count, uint64_t addr, uint64_t offset, uint32_t role)
{
    apsmpi_residual_key k = {comm, count, addr, offset, role};
    return k;
}

/* ---- the store ---- */

static void test_keys(void **state)
{
    apsmpi_residual_store s;
    int fresh;
    assert_int_equal(apsmpi_residual_store_init(&s, 1 << 20), 0);
    apsmpi_residual_key k = key_of(7, 100, 0x1000, 0, APSMPI_RESIDUAL_CONTRIBUTION);
    apsmpi_residual *r = apsmpi_residual_get(&s, &k, 100, &fresh);
    assert_non_null(r);
    assert_int_equal(fresh, 1);
    for (size_t i = 0; i < 100; i++) {
        assert_true(r->r[i] == 0.0f); /* a new residual is zero */
        r->r[i] = (float)i;
    }
    apsmpi_residual_put(&s, r, 1.0, 2.0, 1);
    /* the same key: the same residual, as it was left */
    apsmpi_residual *again = apsmpi_residual_get(&s, &k, 100, &fresh);
    assert_ptr_equal(again, r);
    assert_int_equal(fresh, 0);
    assert_true(again->r[42] == 42.0f);
    apsmpi_residual_put(&s, again, 1.0, 2.0, 1);
    /* every other key, one field changed at a time, starts from zero */
    apsmpi_residual_key others[] = {key_of(8, 100, 0x1000, 0, 0), key_of(7, 101, 0x1000, 0, 0),
                                    key_of(7, 100, 0x2000, 0, 0), key_of(7, 100, 0x1000, 64, 0),
                                    key_of(7, 100, 0x1000, 0, APSMPI_RESIDUAL_SUM)};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        apsmpi_residual *o = apsmpi_residual_get(&s, &others[i], 100, &fresh);
        assert_non_null(o);
        assert_int_equal(fresh, 1);
        assert_ptr_not_equal(o, r);
        assert_true(o->r[42] == 0.0f);
        apsmpi_residual_put(&s, o, 0, 0, 1);
    }
    apsmpi_residual_stats st;
    apsmpi_residual_stats_of(&s, &st);
    assert_int_equal(st.entries, 6);
    assert_int_equal(st.made, 6);
    assert_int_equal(st.reused, 1);
    assert_int_equal(st.held_bytes, 6 * 100 * sizeof(float));
    /* another length for a key: a new residual of zeros */
    apsmpi_residual *longer = apsmpi_residual_get(&s, &k, 200, &fresh);
    assert_int_equal(fresh, 1);
    assert_int_equal(longer->n, 200);
    assert_true(longer->r[42] == 0.0f);
    apsmpi_residual_put(&s, longer, 0, 0, 1);
    apsmpi_residual_store_free(&s);
}

static void test_least_recently_used_dropped_first(void **state)
{
    apsmpi_residual_store s;
    int fresh;
    const size_t n = 1000, bytes = n * sizeof(float);
    assert_int_equal(apsmpi_residual_store_init(&s, 3 * bytes), 0); /* room for three */
    apsmpi_residual_key k[5];
    for (int i = 0; i < 5; i++)
        k[i] = key_of(1, n, 0x1000 * (uint64_t)(i + 1), 0, 0);
    for (int i = 0; i < 3; i++) {
        apsmpi_residual *r = apsmpi_residual_get(&s, &k[i], n, &fresh);
        r->r[0] = (float)(i + 1);
        apsmpi_residual_put(&s, r, 0, 0, 1);
    }
    /* use 0 again: 1 is now the least recently used, and goes first */
    apsmpi_residual_put(&s, apsmpi_residual_get(&s, &k[0], n, &fresh), 0, 0, 1);
    apsmpi_residual *r3 = apsmpi_residual_get(&s, &k[3], n, &fresh);
    assert_non_null(r3);
    apsmpi_residual_put(&s, r3, 0, 0, 1);
    apsmpi_residual_stats st;
    apsmpi_residual_stats_of(&s, &st);
    assert_int_equal(st.entries, 3);
    assert_int_equal(st.evicted, 1);
    assert_true(st.held_bytes <= 3 * bytes);
    apsmpi_residual *r0 = apsmpi_residual_get(&s, &k[0], n, &fresh);
    assert_int_equal(fresh, 0);
    assert_true(r0->r[0] == 1.0f);
    apsmpi_residual_put(&s, r0, 0, 0, 1);
    apsmpi_residual *r2 = apsmpi_residual_get(&s, &k[2], n, &fresh);
    assert_int_equal(fresh, 0);
    assert_true(r2->r[0] == 3.0f);
    apsmpi_residual_put(&s, r2, 0, 0, 1);
    apsmpi_residual *r1 = apsmpi_residual_get(&s, &k[1], n, &fresh); /* dropped: back from zero */
    assert_int_equal(fresh, 1);
    assert_true(r1->r[0] == 0.0f);
    apsmpi_residual_put(&s, r1, 0, 0, 1);
    apsmpi_residual_stats_of(&s, &st);
    assert_int_equal(st.evicted, 2); /* 3, the least recently used then, made room for 1 */
    assert_int_equal(st.peak_bytes, 3 * bytes);
    apsmpi_residual_store_free(&s);
}

static void test_bound_and_pins(void **state)
{
    apsmpi_residual_store s;
    int fresh;
    const size_t n = 1000, bytes = n * sizeof(float);
    assert_int_equal(apsmpi_residual_store_init(&s, 2 * bytes), 0);
    apsmpi_residual_key a = key_of(1, n, 1, 0, 0), b = key_of(1, n, 2, 0, 0), c = key_of(1, n, 3, 0, 0);
    apsmpi_residual_key big = key_of(1, 3 * n, 4, 0, 0);
    /* larger than the bound: none */
    assert_null(apsmpi_residual_get(&s, &big, 3 * n, &fresh));
    /* pinned residuals are never dropped: a third one finds no room while both are in use */
    apsmpi_residual *ra = apsmpi_residual_get(&s, &a, n, &fresh), *rb = apsmpi_residual_get(&s, &b, n, &fresh);
    assert_non_null(ra);
    assert_non_null(rb);
    assert_null(apsmpi_residual_get(&s, &c, n, &fresh));
    /* a key in use is not handed out twice */
    assert_null(apsmpi_residual_get(&s, &a, n, &fresh));
    apsmpi_residual_put(&s, ra, 0, 0, 1);
    apsmpi_residual *rc = apsmpi_residual_get(&s, &c, n, &fresh); /* now a goes */
    assert_non_null(rc);
    apsmpi_residual_stats st;
    apsmpi_residual_stats_of(&s, &st);
    assert_int_equal(st.refused, 3);
    assert_int_equal(st.evicted, 1);
    assert_int_equal(st.entries, 2);
    /* a failed call's residual is dropped, not kept */
    apsmpi_residual_put(&s, rc, 0, 0, 0);
    apsmpi_residual_put(&s, rb, 0, 0, 1);
    apsmpi_residual_stats_of(&s, &st);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.held_bytes, bytes);
    assert_int_equal(st.max_bytes, 2 * bytes);
    /* a bound of 0: error feedback holds nothing */
    apsmpi_residual_store_free(&s);
    assert_int_equal(apsmpi_residual_store_init(&s, 0), 0);
    assert_null(apsmpi_residual_get(&s, &a, n, &fresh));
    apsmpi_residual_store_free(&s);
}

static void test_many_keys_and_statistics(void **state)
{
    apsmpi_residual_store s;
    int fresh;
    assert_int_equal(apsmpi_residual_store_init(&s, 1000 * 16 * sizeof(float)), 0);
    double want_res = 0, want_in = 0;
    for (uint64_t i = 0; i < 3000; i++) { /* the table grows; the oldest keep going */
        apsmpi_residual_key k = key_of(i % 3, 16, i, 0, 0);
        apsmpi_residual *r = apsmpi_residual_get(&s, &k, 16, &fresh);
        assert_non_null(r);
        assert_int_equal(fresh, 1);
        apsmpi_residual_put(&s, r, 1.0, 4.0, 1);
    }
    apsmpi_residual_stats st;
    apsmpi_residual_stats_of(&s, &st);
    assert_int_equal(st.entries, 1000);
    assert_int_equal(st.evicted, 2000);
    want_res = 1000 * 1.0;
    want_in = 1000 * 4.0;
    assert_true(st.res_sq == want_res);
    assert_true(st.in_sq == want_in);
    for (uint64_t i = 2000; i < 3000; i++) { /* the 1000 most recent are there */
        apsmpi_residual_key k = key_of(i % 3, 16, i, 0, 0);
        apsmpi_residual *r = apsmpi_residual_get(&s, &k, 16, &fresh);
        assert_int_equal(fresh, 0);
        apsmpi_residual_put(&s, r, 1.0, 4.0, 1);
    }
    apsmpi_residual_store_free(&s);
}

/* Threads with keys of their own share one store. */
struct worker {
    apsmpi_residual_store *s;
    int id, bad;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    int fresh;
    for (int i = 0; i < 2000; i++) {
        apsmpi_residual_key k = key_of((uint64_t)w->id, 64, (uint64_t)(i % 50), 0, 0);
        apsmpi_residual *r = apsmpi_residual_get(w->s, &k, 64, &fresh);
        if (r == NULL)
            continue; /* no room beside the others' pinned ones */
        if (!fresh && r->r[0] != (float)w->id)
            w->bad++;
        r->r[0] = (float)w->id;
        apsmpi_residual_put(w->s, r, 0, 0, 1);
    }
    return NULL;
}

static void test_threads(void **state)
{
    apsmpi_residual_store s;
    assert_int_equal(apsmpi_residual_store_init(&s, 120 * 64 * sizeof(float)), 0);
    pthread_t t[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){&s, i + 1, 0};
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].bad, 0);
    }
    apsmpi_residual_stats st;
    apsmpi_residual_stats_of(&s, &st);
    assert_true(st.held_bytes <= 120 * 64 * sizeof(float));
    apsmpi_residual_store_free(&s);
}

/* ---- the arithmetic ---- */

static void test_add_and_take(void **state)
{
    float in[37], r[37], x[37], dec[37];
    double in_sq = 0, res_sq = 0, want_in = 0, want_res = 0;
    for (int i = 0; i < 37; i++) {
        in[i] = (float)(i - 18) * 0.5f;
        r[i] = (float)i * 0.125f;
        dec[i] = (float)(i - 18) * 0.5f;
        want_in += (double)in[i] * in[i];
    }
    apsmpi_feedback_add(in, r, 37, x, &in_sq);
    for (int i = 0; i < 37; i++)
        assert_true(x[i] == in[i] + r[i]);
    assert_true(in_sq == want_in);
    apsmpi_feedback_take(x, dec, 37, r, &res_sq);
    for (int i = 0; i < 37; i++) {
        assert_true(r[i] == (float)i * 0.125f);
        want_res += (double)r[i] * r[i];
    }
    assert_true(fabs(res_sq - want_res) <= 1e-12 * want_res);
    apsmpi_feedback_add(in, r, 37, in, NULL); /* in place */
    for (int i = 0; i < 37; i++)
        assert_true(in[i] == x[i]);
}

/* ---- the property: the same input at every call ----
 * N ranks each encode x_r plus their residual; an owner decodes the N, sums them in fp32 and
 * encodes the sum plus its own residual, as rsag does (a whole buffer, one owner). Over T
 * calls, sum_t result_t - T exact = -(sum_r e_r + E) with the residuals left after call T:
 * it stays within what one call's roundings can take, for every T. Without feedback round
 * to nearest takes the same from every call and the difference grows with T. Values are
 * multiples of 2^-12 below 2^7, so that every fp32 addition here is exact and the only
 * errors are the encodings'. */
enum { NR = 5, N = 256, TMAX = 64, BLK = 32 };

struct ef_run {
    apsmpi_codec *c;
    apsmpi_format f;
    float x[NR][N], contrib_res[NR][N], sum_res[N];
    int feedback;
};

/* Encodes in (plus res, with feedback) and decodes it into out; a plain format gets scales of
 * its own per block of BLK, as the owner's sum does in rsag. */
static void encode_with(struct ef_run *e, const float *in, float *res, float *out)
{
    static uint8_t packed[4 * N + 64];
    static int16_t scales[N / BLK + 2];
    float xprime[N];
    apsmpi_scales sc = {NULL, 0};
    apsmpi_rounding nearest = {0, 0, 0};
    if (e->feedback)
        apsmpi_feedback_add(in, res, N, xprime, NULL);
    else
        memcpy(xprime, in, sizeof xprime);
    if (!e->f.mx) {
        apsmpi_own_scales(xprime, N, 0, BLK, &e->f, scales);
        sc.scale = scales;
        sc.block_len = BLK;
    }
    apsmpi_encode(e->c, xprime, N, 0, sc, nearest, packed, NULL);
    apsmpi_decode(e->c, packed, N, 0, sc, out);
    if (e->feedback)
        apsmpi_feedback_take(xprime, out, N, res, NULL);
}

/* The largest ratio, over elements and T = 1..TMAX, of |sum over t <= T of result_t - T exact|
 * to one call's error bound there, r (2 + r) N B: B the largest input of the element's block
 * over the ranks, r what one encoding may move a value relative to its block's largest (the
 * larger of half a step and the saturation of an MX element; tests/mpi/fuzz.c derives it). */
static double worst_drift(const char *format, int feedback, int upto)
{
    struct ef_run e;
    memset(&e, 0, sizeof e);
    assert_int_equal(apsmpi_format_parse(format, &e.f), 0);
    e.c = apsmpi_codec_create(&e.f);
    e.feedback = feedback;
    double u = ldexp(1.0, -(e.f.mbits + 1));
    double sat = e.f.mx ? 1.0 - (double)e.f.max_finite / ldexp(1.0, e.f.emax + 1) : 0;
    double r = u > sat ? u : sat;
    uint64_t z = 12345;
    double exact[N] = {0}, acc[N] = {0}, B[N / BLK] = {0}, worst = 0;
    for (int k = 0; k < NR; k++)
        for (int i = 0; i < N; i++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            double v = ldexp((double)((int64_t)(z >> 40) % 4096), (int)(z >> 20 & 7) - 12);
            e.x[k][i] = (float)((z >> 33 & 1) ? v : -v);
            exact[i] += e.x[k][i];
            B[i / BLK] = fabs(e.x[k][i]) > B[i / BLK] ? fabs(e.x[k][i]) : B[i / BLK];
        }
    for (int t = 1; t <= upto; t++) {
        float sum[N] = {0}, dec[N], result[N];
        for (int k = 0; k < NR; k++) {
            encode_with(&e, e.x[k], e.contrib_res[k], dec);
            for (int i = 0; i < N; i++)
                sum[i] += dec[i];
        }
        encode_with(&e, sum, e.sum_res, result);
        for (int i = 0; i < N; i++) {
            acc[i] += result[i];
            double d = fabs(acc[i] - t * exact[i]) / (r * (2 + r) * NR * B[i / BLK]);
            worst = d > worst ? d : worst;
        }
    }
    apsmpi_codec_free(e.c);
    return worst;
}

static void test_same_input_every_call(void **state)
{
    static const char *const formats[] = {"mxfp4", "mxfp6", "mxfp6e2m3", "mxfp8", "mxfp8e5m2", "e2m1", "e3m2", "e4m3"};
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
        double with = worst_drift(formats[k], 1, TMAX);
        double without_one = worst_drift(formats[k], 0, 1), without = worst_drift(formats[k], 0, TMAX);
        printf("%-10s drift over %d calls / one call's bound: with feedback %.3f, without %.3f (one call %.3f)\n",
               formats[k], TMAX, with, without, without_one);
        /* with feedback: never more than what one call can be off, for every T */
        assert_true(with <= 1.0);
        assert_true(without_one <= 1.0); /* the bound is one call's */
        /* without: the same rounding at every call adds up past it */
        assert_true(without > 4.0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_least_recently_used_dropped_first),
        cmocka_unit_test(test_bound_and_pins),
        cmocka_unit_test(test_many_keys_and_statistics),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_add_and_take),
        cmocka_unit_test(test_same_input_every_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
