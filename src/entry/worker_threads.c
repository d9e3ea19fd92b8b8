/* worker_threads.c: a pool of threads that each run one job at a time to its end, kept between jobs (worker_threads.h). */
#include "entry/worker_threads.h"

#include <pthread.h>
#include <stdlib.h>

struct job {
    void (*run)(void *arg);
    void *arg;
    struct job *next;
};

struct worker {
    pthread_t thread;
    struct worker *next;
};

/* Under lock: the jobs not yet taken (first in, first out), the workers, how many are idle. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct job *queue_head, *queue_tail;
static struct worker *workers;
static int idle, stopping;

static void *worker_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        struct job *j;
        while (queue_head == NULL && !stopping)
            pthread_cond_wait(&wake, &lock);
        if (queue_head == NULL) /* stopping, and nothing left to run */
            break;
        j = queue_head;
        queue_head = j->next;
        if (queue_head == NULL)
            queue_tail = NULL;
        idle--;
        pthread_mutex_unlock(&lock);
        j->run(j->arg);
        free(j);
        pthread_mutex_lock(&lock);
        idle++;
    }
    idle--;
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Another worker, idle (under lock). 0, or -1. */
static int add_worker(void)
{
    struct worker *w = malloc(sizeof *w);

    if (w == NULL || pthread_create(&w->thread, NULL, worker_main, NULL) != 0) {
        free(w);
        return -1;
    }
    w->next = workers;
    workers = w;
    idle++;
    return 0;
}

int apsmpi_workers_run(void (*run)(void *arg), void *arg)
{
    struct job *j = malloc(sizeof *j);
    int queued = 0, waiting = 0;

    if (j == NULL)
        return -1;
    *j = (struct job){run, arg, NULL};
    pthread_mutex_lock(&lock);
    /* idle counts the workers not running a job; the jobs queued already will take some */
    for (struct job *q = queue_head; q; q = q->next)
        waiting++;
    if (!stopping && (idle > waiting || add_worker() == 0)) {
        if (queue_tail)
            queue_tail->next = j;
        else
            queue_head = j;
        queue_tail = j;
        queued = 1;
        pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&lock);
    if (!queued)
        free(j);
    return queued ? 0 : -1;
}

void apsmpi_workers_stop(void)
{
    struct worker *w;

    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_broadcast(&wake);
    w = workers;
    workers = NULL;
    pthread_mutex_unlock(&lock);
    while (w != NULL) {
        struct worker *next = w->next;
        pthread_join(w->thread, NULL);
        free(w);
        w = next;
    }
}
