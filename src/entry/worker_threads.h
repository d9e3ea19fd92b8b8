/* worker_threads.h: a pool of threads that each run one job at a time to its end, kept between jobs: the requests on GPU buffers, whose steps wait in MPI and use their thread's GPU resources. */
#ifndef APSMPI_WORKER_THREADS_H
#define APSMPI_WORKER_THREADS_H

/* Runs job(arg) on an idle worker, or on a new one when none is idle (so that jobs never wait
 * for each other: one may wait in MPI for what another one sends). A worker keeps its thread
 * (and what the job made thread-local: its GPU streams and buffers) for later jobs. 0, or -1
 * when no thread can be started (the job did not run). */
int apsmpi_workers_run(void (*job)(void *arg), void *arg);

/* Stops and joins every worker, once its job is done; each frees its thread-local resources as
 * it exits. Before MPI_Finalize ends (a worker's GPU resources go while the GPU is there). */
void apsmpi_workers_stop(void);

#endif
