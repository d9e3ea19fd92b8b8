/* thread_exit_check.c: a thread makes compressed calls on device buffers and exits after MPI_Finalize, as PyTorch's autograd threads do at a process's exit: the library must ask nothing of the GPU then (tests/mpi/device_mock.sh). */
/* Usage: thread_exit_check PLUGIN [--exit-before]. The thread (its own, as the autograd thread's
 * device state is its own) sums 300000 floats on device memory of PLUGIN twice, then waits;
 * the main thread calls MPI_Finalize and only then lets it end (--exit-before: it ends before
 * MPI_Finalize, when its release through the GPU is right). Run with the mock plugin and
 * MOCK_DEVICE_NOT_AFTER_FINALIZE=1, any GPU operation after MPI_Finalize stops the process.
 * Prints "thread_exit_check: ok" on rank 0. */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device_plugin.h"

enum { N = 300000 };
static const apsmpi_device_ops *dev;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int calls_done, may_end, failed;

static void *worker(void *arg)
{
    (void)arg;
    size_t bytes = N * sizeof(float);
    float *h = malloc(bytes);
    void *d = dev->device_alloc(bytes);
    for (int call = 0; call < 2 && h && d && !failed; call++) {
        for (int i = 0; i < N; i++)
            h[i] = (float)((i * 7 + call) % 1000 - 500) / 64.0f;
        if (dev->copy(d, h, bytes, NULL) || dev->stream_sync(NULL) ||
            MPI_Allreduce(MPI_IN_PLACE, d, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
            dev->copy(h, d, bytes, NULL) || dev->stream_sync(NULL))
            failed = 1;
    }
    if (!h || !d)
        failed = 1;
    if (d)
        dev->device_free(d);
    free(h);
    pthread_mutex_lock(&lock);
    calls_done = 1;
    pthread_cond_broadcast(&cond);
    while (!may_end)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL; /* the thread's device state is released now, by the library's key destructor */
}

int main(int argc, char **argv)
{
    int provided, rank;
    pthread_t t;
    if (argc < 2) {
        fprintf(stderr, "usage: thread_exit_check PLUGIN [--exit-before]\n");
        return 2;
    }
    int exit_before = argc > 2 && strcmp(argv[2], "--exit-before") == 0;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    apsmpi_device_plugin_fn get = h ? (apsmpi_device_plugin_fn)dlsym(h, APSMPI_DEVICE_PLUGIN_SYMBOL) : NULL;
    dev = get ? get() : NULL;
    if (dev == NULL) {
        fprintf(stderr, "thread_exit_check: %s is not a device plugin\n", argv[1]);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_MULTIPLE && rank == 0)
        fprintf(stderr, "thread_exit_check: MPI gives thread level %d (one thread calls MPI at a time here)\n",
                provided);
    pthread_create(&t, NULL, worker, NULL);
    pthread_mutex_lock(&lock);
    while (!calls_done)
        pthread_cond_wait(&cond, &lock);
    if (exit_before) {
        may_end = 1;
        pthread_cond_broadcast(&cond);
    }
    pthread_mutex_unlock(&lock);
    if (exit_before)
        pthread_join(t, NULL);
    int all_ok = 0, ok = !failed;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Finalize();
    if (!exit_before) {
        pthread_mutex_lock(&lock);
        may_end = 1;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
        pthread_join(t, NULL);
    }
    if (rank == 0)
        printf("thread_exit_check: %s\n", all_ok ? "ok" : "FAILED: a call or copy failed");
    return all_ok ? 0 : 1;
}
