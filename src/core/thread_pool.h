/* thread_pool.h: helper threads that share one loop over a range with the calling thread (the host codec's work on a piece). */
#ifndef APSMPI_THREAD_POOL_H
#define APSMPI_THREAD_POOL_H

#include <stddef.h>

/* The most threads (the caller included) one loop runs on. */
#define APSMPI_MAX_CODEC_THREADS 64

/* fn(arg, lo, hi, part) does elements [lo, hi) of a loop; part is 0..parts-1, each once. */
typedef void (*apsmpi_range_fn)(void *arg, size_t lo, size_t hi, int part);

/* Runs fn over [0, n) cut into at most `threads` parts, each a multiple of grain elements but
 * the last, and each at least min_part elements: part 0 on the calling thread, the others on
 * helper threads started on first use, which then wait for the next loop (spinning a little,
 * then asleep). Returns when every part is done; the number of parts it used. With one part,
 * or when the pool cannot start a thread or is busy with another caller's loop, fn runs on
 * the calling thread alone, over the whole range (part 0): the results must not depend on
 * how the range is cut. fn must not call MPI. */
int apsmpi_pool_run(int threads, size_t n, size_t grain, size_t min_part, apsmpi_range_fn fn, void *arg);

/* The parts apsmpi_pool_run would cut [0, n) into, without running anything. */
int apsmpi_pool_parts(int threads, size_t n, size_t grain, size_t min_part);

/* Stops and joins the helper threads (at MPI_Finalize); a later loop starts them again. */
void apsmpi_pool_stop(void);

/* Threads per rank for `auto`: the CPUs this process may run on divided by the ranks on its
 * node (local_ranks < 1: one), between 1 and cap. */
int apsmpi_pool_auto_threads(int local_ranks, int cap);

#endif
