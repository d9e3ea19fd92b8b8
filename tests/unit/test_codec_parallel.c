/* test_codec_parallel.c: the thread pool's cuts of a range, and the codec's calls on several threads giving the bits of one thread. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/codec.h"
#include "core/codec_parallel.h"
#include "core/packed_layout.h"
#include "core/thread_pool.h"
#include "test_codec_common.h"

/* ---- the pool ---- */

static atomic_int seen[600000];
static atomic_int spans_seen[APSMPI_MAX_CODEC_THREADS];
static atomic_int misplaced; /* spans that did not start on the grain (cmocka asserts only on the test's thread) */

static void mark(void *arg, size_t lo, size_t hi, int span)
{
    size_t grain = *(const size_t *)arg;
    if (span < 0 || span >= APSMPI_MAX_CODEC_THREADS || lo % grain != 0) {
        atomic_fetch_add(&misplaced, 1);
        return;
    }
    atomic_fetch_add(&spans_seen[span], 1);
    for (size_t i = lo; i < hi; i++)
        atomic_fetch_add(&seen[i], 1);
}

/* Every element once, every span once, as many spans as apsmpi_pool_spans says. */
static void run_and_check(int threads, size_t n, size_t grain, size_t min_span)
{
    int want = apsmpi_pool_spans(threads, n, grain, min_span), got;

    for (size_t i = 0; i < n; i++)
        atomic_store(&seen[i], 0);
    for (int p = 0; p < APSMPI_MAX_CODEC_THREADS; p++)
        atomic_store(&spans_seen[p], 0);
    got = apsmpi_pool_run(threads, n, grain, min_span, mark, &grain);
    assert_int_equal(got, want);
    assert_int_equal(atomic_load(&misplaced), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(atomic_load(&seen[i]), 1);
    for (int p = 0; p < APSMPI_MAX_CODEC_THREADS; p++)
        assert_int_equal(atomic_load(&spans_seen[p]), p < got ? 1 : 0);
}

static void test_pool_cuts(void **state)
{
    (void)state;
    assert_int_equal(apsmpi_pool_spans(1, 1000000, 4096, 32768), 1);
    assert_int_equal(apsmpi_pool_spans(4, 65535, 4096, 32768), 1); /* too few elements for two */
    assert_int_equal(apsmpi_pool_spans(4, 65536, 4096, 32768), 2);
    assert_int_equal(apsmpi_pool_spans(4, 1 << 20, 4096, 32768), 4);
    assert_int_equal(apsmpi_pool_spans(0, 1 << 20, 4096, 32768), 1); /* an unset count: one */
    assert_int_equal(apsmpi_pool_spans(1000, 1 << 22, 64, 1), APSMPI_MAX_CODEC_THREADS);
    /* the grain rounds the spans up: 3 spans of 10 elements in grains of 8 are 16 + 14 */
    assert_int_equal(apsmpi_pool_spans(3, 30, 8, 1), 2);
    assert_int_equal(apsmpi_pool_spans(4, 0, 8, 1), 1);
}

static void test_pool_runs_every_element_once(void **state)
{
    static const size_t sizes[] = {0, 1, 4095, 65536, 100003, 262144, 599999};
    (void)state;
    for (int threads = 1; threads <= 9; threads++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            run_and_check(threads, sizes[s], 4096, 32768);
    run_and_check(APSMPI_MAX_CODEC_THREADS, 599999, 64, 1);
    run_and_check(3, 30, 8, 1);
    /* helpers stopped (MPI_Finalize) start again on the next loop */
    apsmpi_pool_stop();
    run_and_check(4, 262144, 4096, 32768);
    apsmpi_pool_stop();
    apsmpi_pool_stop(); /* twice: nothing to stop */
    run_and_check(2, 100003, 4096, 32768);
}

/* Many short loops in a row with the helpers awake: a helper late for one loop must not run
 * its span of the next with the old loop's range, nor miss a loop (every element once per loop;
 * alarm() turns a loop that never ends into a failure). */
static void test_pool_short_loops_in_a_row(void **state)
{
    size_t grain = 64;
    (void)state;
    alarm(120);
    for (int k = 0; k < 3000; k++)
        run_and_check(1 + k % 8, 64 * (size_t)(1 + k % 11), grain, 64);
    alarm(0);
}

/* Two threads looping at once: one has the helpers, the other runs its loop alone; both
 * loops still cover their ranges. */
typedef struct racer {
    size_t n;
    atomic_int *count;
} racer;

static void count_range(void *arg, size_t lo, size_t hi, int span)
{
    racer *r = arg;
    (void)span;
    for (size_t i = lo; i < hi; i++)
        atomic_fetch_add(&r->count[i], 1);
}

static void *race(void *arg)
{
    racer *r = arg;
    for (int k = 0; k < 200; k++)
        apsmpi_pool_run(4, r->n, 4096, 4096, count_range, r);
    return NULL;
}

static void test_pool_two_callers(void **state)
{
    racer a = {.n = 50000}, b = {.n = 70000};
    pthread_t t;
    (void)state;
    a.count = calloc(a.n, sizeof *a.count);
    b.count = calloc(b.n, sizeof *b.count);
    assert_non_null(a.count);
    assert_non_null(b.count);
    assert_int_equal(pthread_create(&t, NULL, race, &a), 0);
    race(&b);
    pthread_join(t, NULL);
    for (size_t i = 0; i < a.n; i++)
        assert_int_equal(atomic_load(&a.count[i]), 200);
    for (size_t i = 0; i < b.n; i++)
        assert_int_equal(atomic_load(&b.count[i]), 200);
    free(a.count);
    free(b.count);
}

/* ---- the codec on threads ---- */

static const char *const formats[] = {"fp16", "bf16", "e5m2",  "e4m3",  "e3m2", "e2m1",
                                      "e5m7", "e8m3", "mxfp8", "mxfp6", "mxfp4"};

enum { N = 300007, BLOCK = 4096 };

static void one_format(const char *name)
{
    apsmpi_format f;
    apsmpi_codec *c;
    size_t first = 3 * BLOCK + 100, nblocks = (first + N) / BLOCK + 1;
    int16_t *scale = malloc(nblocks * sizeof *scale);
    float *in = malloc(N * sizeof *in), *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *tmp;
    size_t bytes;
    unsigned char *one, *many;

    assert_int_equal(apsmpi_format_parse(name, &f), 0);
    c = apsmpi_codec_create(&f);
    assert_non_null(c);
    bytes = apsmpi_packed_bytes(&f, N);
    one = malloc(bytes);
    many = malloc(bytes);
    tmp = malloc(N * sizeof *tmp);
    assert_true(scale && in && a && b && one && many && tmp);
    for (size_t k = 0; k < nblocks; k++)
        scale[k] = (int16_t)rand_int(-20, 20);
    for (size_t i = 0; i < N; i++)
        in[i] = random_input_for(&f, scale[(first + i) / BLOCK]);
    for (int stochastic = 0; stochastic <= 1; stochastic++) {
        apsmpi_scales sc = {scale, BLOCK};
        apsmpi_rounding r = {.stochastic = stochastic, .seed = 42, .call = 7};
        uint64_t flushed_one = 0;
        memset(one, 0xA5, bytes);
        apsmpi_encode(c, in, N, first, sc, r, one, &flushed_one);
        for (int threads = 2; threads <= 8; threads += 3) {
            uint64_t flushed_many = 0;
            memset(many, 0x5A, bytes);
            apsmpi_encode_threads(c, threads, in, N, first, sc, r, many, &flushed_many);
            assert_memory_equal(one, many, bytes);
            assert_int_equal(flushed_one, flushed_many);
        }
    }
    apsmpi_decode(c, one, N, first, (apsmpi_scales){scale, BLOCK}, a);
    for (int threads = 1; threads <= 8; threads += 3) {
        apsmpi_decode_threads(c, threads, one, N, first, (apsmpi_scales){scale, BLOCK}, b);
        assert_memory_equal(a, b, N * sizeof *a);
        /* set: the decoded values; else added to what dst holds */
        for (size_t i = 0; i < N; i++)
            b[i] = in[i];
        apsmpi_decode_add_threads(c, threads, one, N, first, (apsmpi_scales){scale, BLOCK}, b, 0, tmp);
        for (size_t i = 0; i < N; i++) {
            float want = in[i] + a[i];
            assert_memory_equal(&want, &b[i], sizeof want);
        }
        apsmpi_decode_add_threads(c, threads, one, N, first, (apsmpi_scales){scale, BLOCK}, b, 1, tmp);
        assert_memory_equal(a, b, N * sizeof *a);
    }
    apsmpi_codec_free(c);
    free(scale);
    free(in);
    free(a);
    free(b);
    free(tmp);
    free(one);
    free(many);
}

static void test_codec_threads_same_bits(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++)
        one_format(formats[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_cuts),
        cmocka_unit_test(test_pool_runs_every_element_once),
        cmocka_unit_test(test_pool_two_callers),
        cmocka_unit_test(test_pool_short_loops_in_a_row),
        cmocka_unit_test(test_codec_threads_same_bits),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    apsmpi_pool_stop();
    return rc;
}
