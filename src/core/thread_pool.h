/* thread_pool.h: helper threads that share one loop over a range with the calling thread (the host codec's work on a piece). */
#ifndef APSMPI_THREAD_POOL_H
#define APSMPI_THREAD_POOL_H

#include <stddef.h>

/* The most threads (the caller included) one loop runs on. */
#define APSMPI_MAX_CODEC_THREADS 64

/* fn(arg, lo, hi, span) does elements [lo, hi) of a loop; span is 0..spans-1, each once. */
typedef void (*apsmpi_range_fn)(void *arg, size_t lo, size_t hi, int span);

/* Runs fn over [0, n) cut into at most `threads` spans, each a multiple of grain elements but
 * the last, and each at least min_span elements: span 0 on the calling thread, the others on
 * helper threads started on first use, which then wait for the next loop (spinning a little,
 * then asleep). Returns when every span is done; the number of spans it used. With one span,
 * or when the pool cannot start a thread or is busy with another caller's loop, fn runs on
 * the calling thread alone, over the whole range (span 0): the results must not depend on
 * how the range is cut. fn must not call MPI. */
int apsmpi_pool_run(int threads, size_t n, size_t grain, size_t min_span, apsmpi_range_fn fn, void *arg);

/* The spans apsmpi_pool_run would cut [0, n) into, without running anything. */
int apsmpi_pool_spans(int threads, size_t n, size_t grain, size_t min_span);

/* Stops and joins the helper threads (at MPI_Finalize); a later loop starts them again. */
void apsmpi_pool_stop(void);

/* Threads per rank for `auto`: the CPUs this process may run on divided by the ranks on its
 * node (local_ranks < 1: one), between 1 and cap. */
int apsmpi_pool_auto_threads(int local_ranks, int cap);

#endif
