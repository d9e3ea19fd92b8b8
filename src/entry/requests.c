/* requests.c: apsmpi's requests: made, ordered per communicator, progressed (a progress thread, the job's test and wait calls), completed and released, from a pool. */
#define _GNU_SOURCE
#include "entry/requests.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "call/device_steps.h"
#include "device/device.h"
#include "entry/reduction.h"
#include "entry/worker_threads.h"
#include "state/comm_info.h"
#include "state/private_comm.h"
#include "state/comm_prepare.h"
#include "state/runtime_state.h"
#include "state/scratch.h"
#include "state/stats.h"

typedef struct apsmpi_request {
    struct apsmpi_request *prev, *next; /* the live requests, in the order of their (last) start */
    MPI_Request handle;                 /* the job's: a generalized request, or a persistent receive */
    int persistent;
    int active;             /* started, its handle not yet completed */
    int user_freed;         /* the job freed it before it was complete: released at its end */
    int drive;              /* a thread runs it to its end, outside the engine lock (it may wait in MPI:
                     * see request_begin); progress_locked leaves it alone */
    int unlocked;           /* it is running outside the lock now: later ones on its communicator wait */
    void *staged_out;       /* below MPI_THREAD_MULTIPLE, a GPU call reduced on host copies: where its
                          * result goes on the GPU when it completes (else NULL) */
    const float *staged_in; /* the host copies: the input, the result and its bytes */
    float *staged_result;
    size_t staged_bytes;
    int tag;             /* a persistent request's message to self */
    atomic_int released; /* MPI freed the generalized request (free_fn) */
    int rc;
    /* the call, as the job made it (recvcounts: the job's, or a persistent request's copy) */
    int kind;
    const void *sendbuf;
    void *recvbuf;
    const int *recvcounts; /* a copy of the job's (MPI copies them too: the job may free its array) */
    int *counts_copy;
    int count;
    size_t total;
    MPI_Datatype datatype;
    MPI_Op op;
    MPI_Comm comm;
    const apsmpi_comm_info *info; /* comm's node layout and private duplicate, held while the request */
    apsmpi_private_comm_t *priv;  /* lives: the job may free comm meanwhile (comm_info.h, private_comm.h) */
    apsmpi_reduction red;
    apsmpi_owned_memory owned; /* its memory, kept while the object waits in the pool */
    apsmpi_memory mem;
} apsmpi_request;

/* The engine: the live list and the pool, under one lock; progress holds it while it runs
 * the reductions (one thread at a time advances them). */
static pthread_mutex_t engine = PTHREAD_MUTEX_INITIALIZER;
static apsmpi_request *live_head, *live_tail, *pool;
static int pooled;
static atomic_int outstanding; /* requests started and not complete */
enum { POOL_KEEP = 16 };

/* The progress thread (only at MPI_THREAD_MULTIPLE, APSMPI_PROGRESS_THREAD=1). */
static pthread_mutex_t thread_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t thread_wake = PTHREAD_COND_INITIALIZER;
static pthread_t progress_thread;
static int thread_level = MPI_THREAD_SINGLE, thread_running, thread_stop;
enum { PROGRESS_POLL_NS = 50000 }; /* the thread's pause between rounds while requests are outstanding */

/* A private duplicate of MPI_COMM_SELF for the persistent requests' messages to self. */
static MPI_Comm self_comm = MPI_COMM_NULL;
static int next_tag;

int apsmpi_requests_outstanding(void) { return atomic_load_explicit(&outstanding, memory_order_acquire) > 0; }

/* ---- the generalized request's callbacks ---- */

static int query_fn(void *extra, MPI_Status *status)
{
    apsmpi_request *q = extra;

    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = q->rc;
    return q->rc;
}

/* MPI released the generalized request (after the job's wait, test or free): the object
 * goes back to the pool at the next sweep. Takes no lock: MPI may call it from inside
 * progress. */
static int free_fn(void *extra)
{
    apsmpi_request *q = extra;
    atomic_store_explicit(&q->released, 1, memory_order_release);
    return MPI_SUCCESS;
}

/* A started collective cannot be cancelled: it completes normally. */
static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* ---- the list and the pool (under the engine lock) ---- */

static void link_tail(apsmpi_request *q)
{
    q->next = NULL;
    q->prev = live_tail;
    if (live_tail)
        live_tail->next = q;
    else
        live_head = q;
    live_tail = q;
}

static void unlink_live(apsmpi_request *q)
{
    if (q->prev)
        q->prev->next = q->next;
    else
        live_head = q->next;
    if (q->next)
        q->next->prev = q->prev;
    else
        live_tail = q->prev;
    q->prev = q->next = NULL;
}

static void release(apsmpi_request *q)
{
    unlink_live(q);
    free(q->counts_copy);
    q->counts_copy = NULL;
    apsmpi_comm_info_release(q->info);
    apsmpi_private_comm_release(q->priv);
    q->info = NULL;
    q->priv = NULL;
    if (pooled < POOL_KEEP) {
        q->next = pool;
        pool = q;
        pooled++;
    } else {
        apsmpi_owned_memory_free(&q->owned);
        free(q);
    }
}

static apsmpi_request *take(void)
{
    apsmpi_request *q;

    pthread_mutex_lock(&engine);
    q = pool;
    if (q) {
        pool = q->next;
        pooled--;
    }
    pthread_mutex_unlock(&engine);
    if (q == NULL && (q = calloc(1, sizeof *q)) == NULL)
        return NULL;
    q->prev = q->next = NULL;
    q->persistent = q->active = q->user_freed = q->drive = q->unlocked = 0;
    q->staged_out = NULL;
    q->recvcounts = q->counts_copy = NULL;
    q->info = NULL;
    q->priv = NULL;
    q->rc = MPI_SUCCESS;
    atomic_store(&q->released, 0);
    q->handle = MPI_REQUEST_NULL;
    q->mem = (apsmpi_memory){apsmpi_owned_memory_get, &q->owned};
    return q;
}

/* The live request whose handle is h, or NULL. A request that MPI released (free_fn ran: the
 * job's wait, test or free took it) is never found again, even before the sweep returns it
 * to the pool: MPI may already have given the same handle value to another request (MPICH
 * does at once), which must reach the MPI's own calls. */
static apsmpi_request *find(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    for (apsmpi_request *q = live_head; q; q = q->next)
        if (q->handle == h && !q->user_freed && !atomic_load_explicit(&q->released, memory_order_acquire))
            return q;
    return NULL;
}

/* ---- order and progress ---- */

/* How many requests on one communicator may be running at once: each rsag or ring call
 * takes one of the private duplicate's tag ranges, and one is left for a blocking call. */
static int running_limit(void)
{
    int ranges = apsmpi_private_comm_tag_ranges();
    return ranges > 2 ? ranges - 1 : 1;
}

/* 1 when q may advance: every earlier running request on its communicator has posted all its
 * collectives, and fewer than running_limit() of them are running. */
static int may_advance(const apsmpi_request *q)
{
    int earlier = 0, limit = running_limit();

    for (const apsmpi_request *p = live_head; p && p != q; p = p->next) {
        if (!p->active || p->comm != q->comm || (!p->unlocked && p->red.step == APSMPI_STEP_DONE))
            continue;
        if (p->unlocked || !apsmpi_reduction_posted_all(&p->red) || ++earlier >= limit)
            return 0;
    }
    return 1;
}

/* q's reduction is complete: a staged result copied to the GPU, its handle completed (a
 * persistent one's message to self), and a request the job already freed released. */
static void complete(apsmpi_request *q, int rc)
{
    if (q->staged_out != NULL && rc == MPI_SUCCESS) {
        const apsmpi_device_ops *o = apsmpi_device_ops_get();
        if (o->copy(q->staged_out, q->staged_result, q->staged_bytes, NULL) != 0 || o->stream_sync(NULL) != 0) {
            APSMPI_ERROR("a request's result could not be copied to the GPU");
            rc = MPI_ERR_OTHER;
        }
    }
    q->staged_out = NULL;
    q->rc = rc;
    q->active = 0;
    if (q->persistent)
        PMPI_Send(NULL, 0, MPI_BYTE, 0, q->tag, self_comm);
    else
        PMPI_Grequest_complete(q->handle);
    atomic_fetch_sub_explicit(&outstanding, 1, memory_order_acq_rel);
    if (q->user_freed) { /* nobody will wait for it: apsmpi does, and frees it */
        MPI_Request h = q->handle;
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
        if (q->persistent) {
            PMPI_Request_free(&h);
            atomic_store(&q->released, 1);
        }
    }
}

/* One round over the live requests, under the engine lock. */
static void progress_locked(void)
{
    apsmpi_request *q, *next;

    for (q = live_head; q; q = q->next) {
        int done = 0, rc;
        if (!q->active || q->drive || !may_advance(q))
            continue;
        rc = apsmpi_reduction_progress(&q->red, &done);
        if (done)
            complete(q, rc);
    }
    for (q = live_head; q; q = next) { /* released by MPI: back to the pool */
        next = q->next;
        if (!q->active && atomic_load_explicit(&q->released, memory_order_acquire))
            release(q);
    }
}

void apsmpi_requests_progress(void)
{
    if (!apsmpi_requests_outstanding())
        return;
    pthread_mutex_lock(&engine);
    progress_locked();
    pthread_mutex_unlock(&engine);
}

/* Runs q (a request its start drives) to its end: once the earlier requests on its
 * communicator have posted their collectives (they progress meanwhile), q runs outside the
 * engine lock, so that a wait in MPI there never holds up another thread's requests (whose
 * peers may be what q waits for). */
static void progress_until_done(apsmpi_request *q)
{
    int ready = 0, done = 0, rc;

    while (!ready) {
        pthread_mutex_lock(&engine);
        progress_locked();
        ready = may_advance(q);
        q->unlocked = ready;
        pthread_mutex_unlock(&engine);
        if (!ready)
            sched_yield();
    }
    do
        rc = apsmpi_reduction_progress(&q->red, &done);
    while (!done);
    pthread_mutex_lock(&engine);
    q->unlocked = 0;
    complete(q, rc);
    pthread_mutex_unlock(&engine);
}

void apsmpi_requests_before_blocking(MPI_Comm comm)
{
    while (apsmpi_requests_outstanding()) {
        int ready = 1, running = 0, limit = running_limit();
        pthread_mutex_lock(&engine);
        progress_locked();
        for (apsmpi_request *p = live_head; p && ready; p = p->next)
            if (p->active && p->comm == comm && (p->unlocked || p->red.step != APSMPI_STEP_DONE))
                ready = !p->unlocked && apsmpi_reduction_posted_all(&p->red) && ++running < limit;
        pthread_mutex_unlock(&engine);
        if (ready)
            return;
        sched_yield();
    }
}

/* ---- the progress thread ---- */

static void *progress_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&thread_lock);
    while (!thread_stop) {
        if (!apsmpi_requests_outstanding()) {
            pthread_cond_wait(&thread_wake, &thread_lock);
            continue;
        }
        pthread_mutex_unlock(&thread_lock);
        if (pthread_mutex_trylock(&engine) == 0) { /* else another thread is progressing them */
            progress_locked();
            pthread_mutex_unlock(&engine);
        }
        nanosleep(&(struct timespec){0, PROGRESS_POLL_NS}, NULL);
        pthread_mutex_lock(&thread_lock);
    }
    pthread_mutex_unlock(&thread_lock);
    return NULL;
}

/* Wakes the progress thread, starting it on the first request when the thread level and
 * APSMPI_PROGRESS_THREAD allow. */
static void wake_progress_thread(void)
{
    if (thread_level != MPI_THREAD_MULTIPLE || !apsmpi_rt.cfg.progress_thread)
        return;
    pthread_mutex_lock(&thread_lock);
    if (!thread_running && !thread_stop) {
        if (pthread_create(&progress_thread, NULL, progress_main, NULL) == 0)
            thread_running = 1;
        else
            APSMPI_WARN("cannot start the progress thread: requests progress only in MPI_Test and MPI_Wait calls");
    }
    pthread_cond_signal(&thread_wake);
    pthread_mutex_unlock(&thread_lock);
}

void apsmpi_requests_init(int level) { thread_level = level; }

void apsmpi_requests_finalize(void)
{
    apsmpi_request *q;

    while (apsmpi_requests_outstanding()) { /* (a job's requests complete before MPI_Finalize) */
        apsmpi_requests_progress();
        sched_yield();
    }
    pthread_mutex_lock(&thread_lock);
    thread_stop = 1;
    pthread_cond_signal(&thread_wake);
    pthread_mutex_unlock(&thread_lock);
    if (thread_running)
        pthread_join(progress_thread, NULL);
    thread_running = 0;
    apsmpi_workers_stop();
    pthread_mutex_lock(&engine);
    progress_locked(); /* (the released ones to the pool) */
    while ((q = pool) != NULL) {
        pool = q->next;
        apsmpi_owned_memory_free(&q->owned);
        free(q);
    }
    pooled = 0;
    pthread_mutex_unlock(&engine);
    if (self_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&self_comm);
}

/* ---- starting ---- */

/* q's reduction begun on its call on this thread (a GPU call takes this thread's GPU
 * resources), on apsmpi's own communicators. */
static void begin_reduction(apsmpi_request *q)
{
    const void *send = q->staged_out ? q->staged_in : q->sendbuf;
    void *recv = q->staged_out ? q->staged_result : q->recvbuf;

    apsmpi_reduction_begin(&q->red, q->kind, send, recv, q->recvcounts, q->count, q->total, q->datatype, q->op, q->comm,
                           &q->mem, 0);
    if (q->staged_out) /* auto's buckets and error feedback's residuals go by the job's buffer, not the copy */
        q->red.c.origin.buf = q->sendbuf == MPI_IN_PLACE ? q->recvbuf : q->sendbuf;
    q->red.c.request = 1;
    q->red.info = q->info;
    q->red.c.priv = q->priv;
    q->red.c.coll = apsmpi_private_comm_dup_of(q->priv);
}

/* A worker's job: a request on GPU buffers begun on the worker's thread and run to its end. */
static void run_on_worker(void *arg)
{
    apsmpi_request *q = arg;

    begin_reduction(q);
    progress_until_done(q);
}

/* 1 if the call's input or output is GPU memory. */
static int on_gpu(const apsmpi_request *q)
{
    const void *in = q->sendbuf == MPI_IN_PLACE ? q->recvbuf : q->sendbuf;
    return apsmpi_device_of(in) >= 0 || apsmpi_device_of(q->recvbuf) >= 0;
}

/* Below MPI_THREAD_MULTIPLE, where no other thread may call MPI: q, a call on GPU buffers, is
 * made a call on host copies (its input copied from the GPU now; its result copied back when it
 * completes, in the job's test or wait), so that it progresses as host requests do and this
 * call returns at once. 0; 1 without a device plugin (the call then goes in fp32, as the
 * blocking one would); -1 when it cannot be (no memory, a failed copy). */
static int stage_on_host(apsmpi_request *q)
{
    const apsmpi_device_ops *o = apsmpi_device_ops_get();
    const void *in = q->sendbuf == MPI_IN_PLACE ? q->recvbuf : q->sendbuf;
    size_t in_bytes = q->total * sizeof(float), out_bytes = in_bytes;
    char *host;
    int rank;

    if (q->kind != APSMPI_ALLREDUCE) {
        PMPI_Comm_rank(q->comm, &rank);
        out_bytes = (size_t)(q->kind == APSMPI_REDUCE_SCATTER ? q->recvcounts[rank] : q->count) * sizeof(float);
    }
    if (o == NULL)
        return 1;
    host = apsmpi_memory_get(&q->mem, APSMPI_SCRATCH_STAGING, in_bytes + out_bytes);
    if (host == NULL || o->copy(host, in, in_bytes, NULL) != 0 || o->stream_sync(NULL) != 0)
        return -1;
    q->staged_out = q->recvbuf;
    q->staged_in = (const float *)(void *)host;
    q->staged_result = (float *)(void *)(host + in_bytes);
    q->staged_bytes = out_bytes;
    return 0;
}

/* Starts q's reduction on its call, without a collective: what it needs that only a
 * collective makes (its communicator's node layout and private duplicates) was made when the
 * communicator was prepared (state/comm_prepare.h), and q holds it. On host buffers it
 * returns at once (every algorithm returns where it would wait in MPI). A GPU call's steps
 * wait in MPI and use their thread's GPU resources: at MPI_THREAD_MULTIPLE a worker thread runs
 * it to its end (worker_threads.h), after the earlier requests on the communicator, and this
 * call returns at once (q->drive); below it, MPI may not be called from another thread, so it
 * is reduced on host copies (stage_on_host), a host request (or, if that cannot be, run to its
 * end by this call). */
static int request_begin(apsmpi_request *q)
{
    int gpu = on_gpu(q), worker = gpu && thread_level == MPI_THREAD_MULTIPLE;

    if (gpu && !worker && stage_on_host(q) < 0)
        APSMPI_WARN("a request on GPU buffers could not be staged on the host: it runs in the call that starts it");

    if (!worker)
        begin_reduction(q);
    q->drive = worker || apsmpi_device_on_gpu(&q->red.c);
    q->unlocked = worker; /* until the worker has begun it: later ones on its communicator wait */
    q->active = 1;
    atomic_fetch_add_explicit(&outstanding, 1, memory_order_acq_rel);
    pthread_mutex_lock(&engine);
    link_tail(q);
    progress_locked(); /* posts its agreement now if it may (not a request a thread drives) */
    pthread_mutex_unlock(&engine);
    if (worker && apsmpi_workers_run(run_on_worker, q) != 0) {
        APSMPI_WARN("cannot start a worker thread: this request on GPU buffers runs in the call that starts it");
        run_on_worker(q);
    } else if (!worker && q->drive) {
        progress_until_done(q);
    } else if (!worker) {
        wake_progress_thread();
    }
    return MPI_SUCCESS;
}

int apsmpi_request_readiness(MPI_Comm comm)
{
    const apsmpi_comm_info *info = apsmpi_comm_info_hold(comm);
    int why = 0;

    if (info == NULL || !info->prepared) {
        why = APSMPI_STAT_PASS_UNPREPARED;
    } else if (info->nnodes == 1 && apsmpi_rt.cfg.intranode == APSMPI_INTRANODE_PASS) {
        apsmpi_comm_info_announce(info, 1);
        why = APSMPI_STAT_CALLS_ONE_NODE;
    }
    apsmpi_comm_info_release(info);
    return why;
}

/* q's communicator's layout and private duplicate, held by q: MPI_SUCCESS, or MPI_ERR_COMM if
 * the communicator is not prepared (apsmpi_request_readiness said it was: the job freed it
 * from another thread meanwhile). */
static int hold_comm(apsmpi_request *q)
{
    q->info = apsmpi_comm_info_hold(q->comm);
    q->priv = q->info != NULL ? apsmpi_private_comm_hold(q->comm) : NULL;
    return q->info != NULL && q->priv != NULL ? MPI_SUCCESS : MPI_ERR_COMM;
}

/* The call's arguments into q: recvcounts copied (the job may free or change its array once
 * the call returns, as MPI allows), its communicator's layout and duplicate held.
 * MPI_SUCCESS or an MPI error code. */
static int set_call(apsmpi_request *q, int kind, const void *sendbuf, void *recvbuf, const int *recvcounts, int count,
                    size_t total, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int nranks;

    q->kind = kind;
    q->sendbuf = sendbuf;
    q->recvbuf = recvbuf;
    q->recvcounts = NULL;
    q->count = count;
    q->total = total;
    q->datatype = datatype;
    q->op = op;
    q->comm = comm;
    if (recvcounts != NULL) {
        PMPI_Comm_size(comm, &nranks);
        if ((q->counts_copy = malloc((size_t)nranks * sizeof *q->counts_copy)) == NULL)
            return MPI_ERR_NO_MEM;
        memcpy(q->counts_copy, recvcounts, (size_t)nranks * sizeof *q->counts_copy);
        q->recvcounts = q->counts_copy;
    }
    return hold_comm(q);
}

/* A request that could not start: its handle completed and freed, the object pooled. */
static void abandon(apsmpi_request *q, int rc)
{
    MPI_Request h = q->handle;

    q->rc = rc;
    if (h != MPI_REQUEST_NULL) {
        if (q->persistent) {
            PMPI_Request_free(&h);
        } else {
            PMPI_Grequest_complete(h);
            PMPI_Wait(&h, MPI_STATUS_IGNORE);
        }
    }
    pthread_mutex_lock(&engine);
    link_tail(q); /* (release unlinks it) */
    release(q);
    pthread_mutex_unlock(&engine);
}

int apsmpi_request_issue(int kind, const void *sendbuf, void *recvbuf, const int *recvcounts, int count, size_t total,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *handle)
{
    apsmpi_request *q;
    int rc;

    *handle = MPI_REQUEST_NULL;
    if ((q = take()) == NULL)
        return MPI_ERR_NO_MEM;
    rc = set_call(q, kind, sendbuf, recvbuf, recvcounts, count, total, datatype, op, comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, q, &q->handle);
    if (rc == MPI_SUCCESS) {
        *handle = q->handle;
        rc = request_begin(q);
    }
    if (rc != MPI_SUCCESS) {
        *handle = MPI_REQUEST_NULL;
        abandon(q, rc);
    }
    return rc;
}

int apsmpi_request_persistent(int kind, const void *sendbuf, void *recvbuf, const int *recvcounts, int count,
                              size_t total, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *handle)
{
    apsmpi_request *q;
    int rc;

    *handle = MPI_REQUEST_NULL;
    if ((q = take()) == NULL)
        return MPI_ERR_NO_MEM;
    q->persistent = 1;
    rc = set_call(q, kind, sendbuf, recvbuf, recvcounts, count, total, datatype, op, comm);
    if (rc != MPI_SUCCESS) {
        abandon(q, rc);
        return rc;
    }
    pthread_mutex_lock(&engine);
    rc = self_comm == MPI_COMM_NULL ? PMPI_Comm_dup(MPI_COMM_SELF, &self_comm) : MPI_SUCCESS;
    q->tag = next_tag++ & 0x7fff; /* (32767: the least MPI_TAG_UB) */
    pthread_mutex_unlock(&engine);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, q->tag, self_comm, &q->handle);
    if (rc != MPI_SUCCESS) {
        abandon(q, rc);
        return rc;
    }
    pthread_mutex_lock(&engine);
    link_tail(q);
    pthread_mutex_unlock(&engine);
    *handle = q->handle;
    return MPI_SUCCESS;
}

int apsmpi_request_start(MPI_Request *handle, int *rc)
{
    apsmpi_request *q;

    pthread_mutex_lock(&engine);
    q = find(*handle);
    if (q != NULL && !q->persistent)
        q = NULL;
    if (q != NULL && !q->active)
        unlink_live(q); /* request_begin links it again, last: the order of starts */
    pthread_mutex_unlock(&engine);
    if (q == NULL)
        return 0;
    if (q->active) {
        *rc = MPI_ERR_REQUEST; /* started twice */
        return 1;
    }
    *rc = PMPI_Start(&q->handle);
    if (*rc == MPI_SUCCESS)
        *rc = request_begin(q);
    if (*rc != MPI_SUCCESS) {
        pthread_mutex_lock(&engine);
        if (q->prev == NULL && q->next == NULL && live_head != q)
            link_tail(q);
        pthread_mutex_unlock(&engine);
    }
    return 1;
}

int apsmpi_request_free(MPI_Request *handle, int *rc)
{
    apsmpi_request *q;

    pthread_mutex_lock(&engine);
    q = find(*handle);
    if (q == NULL) {
        pthread_mutex_unlock(&engine);
        return 0;
    }
    *rc = MPI_SUCCESS;
    if (q->active) {
        q->user_freed = 1; /* complete() frees it */
    } else if (q->persistent) {
        *rc = PMPI_Request_free(&q->handle);
        release(q);
    } else {
        *rc = PMPI_Request_free(&q->handle); /* free_fn: released at the next sweep */
    }
    pthread_mutex_unlock(&engine);
    *handle = MPI_REQUEST_NULL;
    return 1;
}

int apsmpi_request_cancel(const MPI_Request *handle, int *rc)
{
    apsmpi_request *q;

    pthread_mutex_lock(&engine);
    q = find(*handle);
    pthread_mutex_unlock(&engine);
    if (q == NULL)
        return 0;
    *rc = MPI_SUCCESS;
    return 1;
}
