/* thread_pool.c: helper threads that share one loop over a range with the calling thread (the host codec's work on a piece). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "core/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* A helper spins this long for the next loop before it sleeps: loops that follow each other
 * closely (the decode and add of one piece, the encode of the next) find it awake, without
 * its spinning taking for long a core that the job's other threads and ranks may need
 * (a longer spin loses more to them than it saves: results/codec_threads.md). */
enum { SPIN_NS = 20000 };

/* The loop the helpers run; job = (loop number << 8) | spans. A helper reads the fields only
 * for a span it runs, and the caller writes them again only after every span has finished. */
static struct {
    pthread_mutex_t lock; /* sleeping, waking, starting, stopping */
    pthread_cond_t wake;
    pthread_mutex_t busy; /* one loop at a time */
    pthread_t tid[APSMPI_MAX_CODEC_THREADS];
    uint64_t start_job[APSMPI_MAX_CODEC_THREADS]; /* the job when each helper was started */
    int started;                                  /* helpers 1..started-1 run */
    atomic_uint_fast64_t job;
    atomic_int pending;  /* the helpers' spans of the current loop not yet done */
    atomic_int sleepers; /* helpers asleep, or about to be */
    atomic_int stop;
    apsmpi_range_fn fn;
    void *arg;
    size_t n, span;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .busy = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void run_span(int span)
{
    size_t lo = (size_t)span * pool.span, hi = lo + pool.span < pool.n ? lo + pool.span : pool.n;
    pool.fn(pool.arg, lo, hi, span);
}

/* The next job after `seen`, spinning a while, then asleep; `seen` itself when stopping. */
static uint64_t wait_job(uint64_t seen)
{
    uint64_t job, t0 = now_ns();

    for (unsigned i = 1;; i++) {
        job = atomic_load(&pool.job);
        if (job != seen || atomic_load(&pool.stop))
            return job;
        if (i % 16 == 0 && now_ns() - t0 > SPIN_NS)
            break;
        relax();
    }
    pthread_mutex_lock(&pool.lock);
    atomic_fetch_add(&pool.sleepers, 1);
    while ((job = atomic_load(&pool.job)) == seen && !atomic_load(&pool.stop))
        pthread_cond_wait(&pool.wake, &pool.lock);
    atomic_fetch_sub(&pool.sleepers, 1);
    pthread_mutex_unlock(&pool.lock);
    return job;
}

static void *helper(void *p)
{
    int me = (int)(intptr_t)p;
    uint64_t seen = pool.start_job[me];

    for (;;) {
        uint64_t job = wait_job(seen);
        if (atomic_load(&pool.stop))
            return NULL;
        seen = job;
        if (me < (int)(job & 0xFF)) {
            run_span(me);
            atomic_fetch_sub(&pool.pending, 1);
        }
    }
}

/* Starts helpers up to index want - 1 (signals blocked in them: they stay the job's
 * threads' business); returns how many threads a loop can use. */
static int start_helpers(int want)
{
    sigset_t all, old;

    if (pool.started >= want)
        return want;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_mutex_lock(&pool.lock);
    if (pool.started == 0)
        pool.started = 1;
    while (pool.started < want && (pool.start_job[pool.started] = atomic_load(&pool.job), 1) &&
           pthread_create(&pool.tid[pool.started], NULL, helper, (void *)(intptr_t)pool.started) == 0)
        pool.started++;
    pthread_mutex_unlock(&pool.lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return pool.started < want ? pool.started : want;
}

/* Elements per span when [0, n) is cut into `spans` spans of whole grains (the last shorter). */
static size_t span_of(size_t n, size_t spans, size_t grain)
{
    return ((n + spans - 1) / spans + grain - 1) / grain * grain;
}

int apsmpi_pool_spans(int threads, size_t n, size_t grain, size_t min_span)
{
    size_t spans = min_span ? n / min_span : n, span;

    if (threads > APSMPI_MAX_CODEC_THREADS)
        threads = APSMPI_MAX_CODEC_THREADS;
    if (spans > (size_t)threads)
        spans = (size_t)threads;
    if (spans <= 1 || grain == 0)
        return 1;
    span = span_of(n, spans, grain);
    return (int)((n + span - 1) / span);
}

int apsmpi_pool_run(int threads, size_t n, size_t grain, size_t min_span, apsmpi_range_fn fn, void *arg)
{
    int spans = apsmpi_pool_spans(threads, n, grain, min_span);
    unsigned spins = 0;

    if (spans > 1 && pthread_mutex_trylock(&pool.busy) != 0)
        spans = 1; /* another thread's loop (the progress thread's, say) has the helpers */
    else if (spans > 1 && (spans = start_helpers(spans)) <= 1)
        pthread_mutex_unlock(&pool.busy);
    if (spans <= 1) {
        fn(arg, 0, n, 0);
        return 1;
    }
    pool.fn = fn;
    pool.arg = arg;
    pool.n = n;
    pool.span = span_of(n, (size_t)spans, grain);
    spans = (int)((n + pool.span - 1) / pool.span);
    atomic_store(&pool.pending, spans - 1);
    atomic_store(&pool.job, ((atomic_load(&pool.job) >> 8) + 1) << 8 | (uint64_t)spans);
    if (atomic_load(&pool.sleepers) > 0) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.lock);
    }
    run_span(0);
    while (atomic_load(&pool.pending) > 0) /* a helper that has no CPU of its own gets ours */
        if (++spins % 256 == 0)
            sched_yield();
        else
            relax();
    pthread_mutex_unlock(&pool.busy);
    return spans;
}

void apsmpi_pool_stop(void)
{
    int started;

    pthread_mutex_lock(&pool.busy);
    pthread_mutex_lock(&pool.lock);
    atomic_store(&pool.stop, 1);
    pthread_cond_broadcast(&pool.wake);
    started = pool.started;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 1; i < started; i++)
        pthread_join(pool.tid[i], NULL);
    pool.started = 0;
    atomic_store(&pool.stop, 0);
    pthread_mutex_unlock(&pool.busy);
}

int apsmpi_pool_auto_threads(int local_ranks, int cap)
{
    cpu_set_t set;
    int cpus = 1, t;

    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
    t = cpus / (local_ranks < 1 ? 1 : local_ranks);
    return t < 1 ? 1 : t > cap ? cap : t;
}
