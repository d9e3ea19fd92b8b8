/* nonblocking_check.c: the non-blocking and persistent float sums as a job makes them, with libapsmpi.so preloaded: several outstanding on one or several communicators, completed in any order, mixed with plain requests, freed early, from several threads; each result equal bit for bit to the blocking call's, the same on every rank, within a bound of the exact sum. */
/* usage: nonblocking_check [--op allreduce|reduce_scatter|reduce_scatter_block] [--count N]
 *        [--ops K] [--comms one|own] [--complete wait|reverse|waitall|waitany|testany|testall|waitsome]
 *        [--mixed] [--free-one] [--cancel] [--in-place] [--threads T] [--persistent R]
 *        [--no-reference] [--bound REL] [--compute-ms MS]
 * K reductions of N floats (reduce-scatter: N in all, uneven counts), first blocking (the
 * reference), then as requests completed as --complete says; --mixed puts a plain
 * MPI_Isend/MPI_Irecv pair among them; --free-one frees the first request at once (its result
 * is checked after MPI_Finalize... no: after a later blocking call on a fresh communicator and a
 * wait for the others, when MPI has run it to its end: at MPI_Finalize); --cancel calls
 * MPI_Cancel on each (no effect allowed on a started collective); --threads T: T threads
 * (MPI_THREAD_MULTIPLE), each with its own communicators; --persistent R: MPI_Allreduce_init
 * and the others, started R times (exit 77 where the MPI has no MPI 4 persistent
 * collectives). --no-reference: no blocking reference (the calls pass through, whose
 * non-blocking bits may differ from the blocking call's); the checksum line is then compared
 * between runs. Prints "nonblocking ok: ..." and "checksum HEX". */
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_values.h"

enum { MAX_OPS = 16, MAX_THREADS = 8 };

static const char *kind = "allreduce", *complete = "wait", *comms_mode = "own";
static long count = 200001;
static int nops = 3, mixed, free_one, cancel, in_place, nthreads = 1, persistent, reference = 1, rank, size;
static double bound = 0.25, compute_ms;

static void fail(const char *what)
{
    fprintf(stderr, "nonblocking_check: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One thread's work: its reductions, their buffers and communicators. */
struct work {
    int id;
    MPI_Comm comm[MAX_OPS];
    int *counts, block;
    long total, mine, first; /* first: this rank's segment's start in the buffer */
    float *in[MAX_OPS], *ref[MAX_OPS], *out[MAX_OPS];
    uint64_t hash;
};

static int is(const char *a, const char *b) { return strcmp(a, b) == 0; }

static int blocking(struct work *w, int k, const void *send, float *recv)
{
    if (is(kind, "allreduce"))
        return MPI_Allreduce(send, recv, (int)w->total, MPI_FLOAT, MPI_SUM, w->comm[k]);
    if (is(kind, "reduce_scatter"))
        return MPI_Reduce_scatter(send, recv, w->counts, MPI_FLOAT, MPI_SUM, w->comm[k]);
    return MPI_Reduce_scatter_block(send, recv, w->block, MPI_FLOAT, MPI_SUM, w->comm[k]);
}

static int nonblocking(struct work *w, int k, const void *send, float *recv, MPI_Request *req)
{
    if (is(kind, "allreduce"))
        return MPI_Iallreduce(send, recv, (int)w->total, MPI_FLOAT, MPI_SUM, w->comm[k], req);
    if (is(kind, "reduce_scatter"))
        return MPI_Ireduce_scatter(send, recv, w->counts, MPI_FLOAT, MPI_SUM, w->comm[k], req);
    return MPI_Ireduce_scatter_block(send, recv, w->block, MPI_FLOAT, MPI_SUM, w->comm[k], req);
}

static int persistent_init(struct work *w, int k, const void *send, float *recv, MPI_Request *req)
{
#if MPI_VERSION >= 4
    if (is(kind, "allreduce"))
        return MPI_Allreduce_init(send, recv, (int)w->total, MPI_FLOAT, MPI_SUM, w->comm[k], MPI_INFO_NULL, req);
    if (is(kind, "reduce_scatter"))
        return MPI_Reduce_scatter_init(send, recv, w->counts, MPI_FLOAT, MPI_SUM, w->comm[k], MPI_INFO_NULL, req);
    return MPI_Reduce_scatter_block_init(send, recv, w->block, MPI_FLOAT, MPI_SUM, w->comm[k], MPI_INFO_NULL, req);
#else
    (void)w, (void)k, (void)send, (void)recv, (void)req;
    return MPI_ERR_OTHER;
#endif
}

static void fill(struct work *w, int k, int it, float *send)
{
    for (long i = 0; i < w->total; i++)
        send[i] = test_value(rank, w->id * MAX_OPS + k + it, i);
}

/* The result of reduction k against the exact sum (each rank's value recomputed here). */
static void check_bound(struct work *w, int k, int it, const float *got)
{
    double worst = 0, max_abs = 0;
    for (long i = 0; i < w->mine; i++) {
        double exact = 0;
        for (int r = 0; r < size; r++) {
            double v = test_value(r, w->id * MAX_OPS + k + it, w->first + i);
            exact += v;
            max_abs = fabs(v) > max_abs ? fabs(v) : max_abs;
        }
        double e = fabs((double)got[i] - exact);
        worst = e > worst ? e : worst;
    }
    if (worst > bound * size * (max_abs > 0 ? max_abs : 1))
        fail("a result is farther from the exact sum than the format's bound");
}

static void hash_result(struct work *w, const float *x)
{
    const uint32_t *b = (const uint32_t *)(const void *)x;
    for (long i = 0; i < w->mine; i++)
        w->hash = (w->hash ^ b[i]) * 0x100000001b3ull;
}

/* A plain pair of messages with the next rank, among the requests. */
static void plain_pair(MPI_Comm comm, int *sendv, int *recvv, MPI_Request *r)
{
    MPI_Irecv(recvv, 1, MPI_INT, (rank + size - 1) % size, 99, comm, &r[0]);
    MPI_Isend(sendv, 1, MPI_INT, (rank + 1) % size, 99, comm, &r[1]);
}

static void compute(void)
{
    struct timespec t0, t;
    volatile double x = 0;
    if (compute_ms <= 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 10000; i++)
            x += i * 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) * 1e-6 < compute_ms);
}

static void complete_all(MPI_Request *req, int n)
{
    int done = 0, idx, flag, outcount, indices[MAX_OPS + 2];
    if (is(complete, "wait")) {
        for (int k = 0; k < n; k++)
            MPI_Wait(&req[k], MPI_STATUS_IGNORE);
    } else if (is(complete, "reverse")) {
        for (int k = n - 1; k >= 0; k--)
            MPI_Wait(&req[k], MPI_STATUS_IGNORE);
    } else if (is(complete, "waitall")) {
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    } else if (is(complete, "testall")) {
        for (flag = 0; !flag;)
            MPI_Testall(n, req, &flag, MPI_STATUSES_IGNORE);
    } else if (is(complete, "waitany")) {
        for (; done < n; done++) {
            MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE);
            if (idx == MPI_UNDEFINED)
                break;
        }
    } else if (is(complete, "testany")) {
        while (done < n) {
            MPI_Testany(n, req, &idx, &flag, MPI_STATUS_IGNORE);
            if (flag && idx == MPI_UNDEFINED)
                break;
            done += flag;
        }
    } else if (is(complete, "waitsome")) {
        while (done < n) {
            MPI_Waitsome(n, req, &outcount, indices, MPI_STATUSES_IGNORE);
            if (outcount == MPI_UNDEFINED)
                break;
            done += outcount;
        }
    } else {
        fail("unknown --complete");
    }
    for (int k = 0; k < n; k++)
        if (req[k] != MPI_REQUEST_NULL && !persistent)
            fail("a request is not MPI_REQUEST_NULL after its completion");
}

static void *run(void *arg)
{
    struct work *w = arg;
    MPI_Request req[MAX_OPS + 2];
    int sendv = rank, recvv = -1, np = nops;
    int rounds = persistent ? persistent : 1;

    if (persistent) {
        for (int k = 0; k < nops; k++) {
            float *send = in_place ? w->out[k] : w->in[k];
            if (persistent_init(w, k, in_place ? MPI_IN_PLACE : send, w->out[k], &req[k]) != MPI_SUCCESS)
                fail("a persistent init failed");
        }
    }
    for (int it = 0; it < rounds; it++) {
        if (reference)
            for (int k = 0; k < nops; k++) {
                float *send = in_place ? w->ref[k] : w->in[k];
                fill(w, k, it, send);
                if (blocking(w, k, in_place ? MPI_IN_PLACE : send, w->ref[k]) != MPI_SUCCESS)
                    fail("a blocking call failed");
            }
        for (int k = 0; k < nops; k++) {
            float *send = in_place ? w->out[k] : w->in[k];
            fill(w, k, it, send);
            if (persistent) {
                if (MPI_Start(&req[k]) != MPI_SUCCESS)
                    fail("MPI_Start failed");
            } else if (nonblocking(w, k, in_place ? MPI_IN_PLACE : send, w->out[k], &req[k]) != MPI_SUCCESS) {
                fail("a non-blocking call failed");
            }
            if (cancel && MPI_Cancel(&req[k]) != MPI_SUCCESS)
                fail("MPI_Cancel failed");
        }
        np = nops;
        if (mixed) {
            plain_pair(w->comm[0], &sendv, &recvv, &req[nops]);
            np += 2;
        }
        if (free_one && !persistent) {
            MPI_Request_free(&req[0]);
            if (req[0] != MPI_REQUEST_NULL)
                fail("MPI_Request_free left the handle set");
        }
        compute();
        complete_all(req, np);
        if (cancel) {
            /* (a collective completes normally: MPI_Test_cancelled says false) */
        }
        if (mixed && recvv != (rank + size - 1) % size)
            fail("the plain message among the requests is wrong");
        for (int k = free_one && !persistent ? 1 : 0; k < nops; k++) {
            if (reference && memcmp(w->out[k], w->ref[k], (size_t)w->mine * sizeof(float)) != 0)
                fail("a non-blocking result differs from the blocking call's");
            if (bound > 0)
                check_bound(w, k, it, w->out[k]);
            hash_result(w, w->out[k]);
        }
    }
    if (persistent)
        for (int k = 0; k < nops; k++)
            MPI_Request_free(&req[k]);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    struct work work[MAX_THREADS];
    pthread_t th[MAX_THREADS];

    for (int a = 1; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : "";
        if (is(o, "--op"))
            kind = v, a++;
        else if (is(o, "--count"))
            count = atol(v), a++;
        else if (is(o, "--ops"))
            nops = atoi(v), a++;
        else if (is(o, "--comms"))
            comms_mode = v, a++;
        else if (is(o, "--complete"))
            complete = v, a++;
        else if (is(o, "--threads"))
            nthreads = atoi(v), a++;
        else if (is(o, "--persistent"))
            persistent = atoi(v), a++;
        else if (is(o, "--bound"))
            bound = atof(v), a++;
        else if (is(o, "--compute-ms"))
            compute_ms = atof(v), a++;
        else if (is(o, "--mixed"))
            mixed = 1;
        else if (is(o, "--free-one"))
            free_one = 1;
        else if (is(o, "--cancel"))
            cancel = 1;
        else if (is(o, "--in-place"))
            in_place = 1;
        else if (is(o, "--no-reference"))
            reference = 0;
        else {
            fprintf(stderr, "nonblocking_check: unknown option %s\n", o);
            return 2;
        }
    }
    if (nops < 1 || nops > MAX_OPS || nthreads < 1 || nthreads > MAX_THREADS || count < 1)
        return 2;
    MPI_Init_thread(&argc, &argv, nthreads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#if MPI_VERSION < 4
    if (persistent) {
        if (rank == 0)
            printf("nonblocking_check: this MPI (MPI %d.%d) has no persistent collectives (MPI_Allreduce_init): "
                   "skipped\n",
                   MPI_VERSION, MPI_SUBVERSION);
        MPI_Finalize();
        return 77;
    }
#endif
    if (nthreads > 1 && provided < MPI_THREAD_MULTIPLE)
        fail("the MPI gives no MPI_THREAD_MULTIPLE");
    for (int t = 0; t < nthreads; t++) {
        struct work *w = &work[t];
        memset(w, 0, sizeof *w);
        w->id = t;
        w->counts = malloc((size_t)size * sizeof *w->counts);
        w->block = (int)(count / size);
        w->total = w->block * (long)size;
        if (is(kind, "reduce_scatter")) {
            w->total = 0;
            for (int r = 0; r < size; r++) {
                w->counts[r] = (int)(count / size) + 13 * r;
                w->first += r < rank ? w->counts[r] : 0;
                w->total += w->counts[r];
            }
        } else if (is(kind, "allreduce")) {
            w->total = count;
        } else {
            w->first = (long)w->block * rank;
        }
        w->mine = is(kind, "allreduce") ? w->total : is(kind, "reduce_scatter") ? w->counts[rank] : w->block;
        for (int k = 0; k < nops; k++) {
            if (k == 0 || is(comms_mode, "own"))
                MPI_Comm_dup(MPI_COMM_WORLD, &w->comm[k]);
            else
                w->comm[k] = w->comm[0];
            w->in[k] = malloc((size_t)w->total * sizeof(float));
            w->ref[k] = malloc((size_t)w->total * sizeof(float));
            w->out[k] = malloc((size_t)w->total * sizeof(float));
        }
    }
    if (nthreads == 1) {
        run(&work[0]);
    } else {
        for (int t = 0; t < nthreads; t++)
            pthread_create(&th[t], NULL, run, &work[t]);
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
    }
    uint64_t hash = 0, lo, hi, all;
    for (int t = 0; t < nthreads; t++)
        hash ^= work[t].hash * (uint64_t)(t + 1);
    /* every rank's result the same (an allreduce's): compare the hashes */
    MPI_Allreduce(&hash, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&hash, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (is(kind, "allreduce") && lo != hi)
        fail("the ranks' results differ");
    MPI_Allreduce(&hash, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD); /* (not XOR: equal hashes cancel) */
    MPI_Finalize();
    if (free_one && !persistent && reference) /* the freed request ran to its end by MPI_Finalize */
        for (int t = 0; t < nthreads; t++)
            if (memcmp(work[t].out[0], work[t].ref[0], (size_t)work[t].mine * sizeof(float)) != 0) {
                fprintf(stderr, "nonblocking_check: rank %d: the freed request's result is wrong\n", rank);
                return 1;
            }
    if (rank == 0)
        printf("nonblocking ok: %d %s of %ld floats x %d threads, %s, complete %s%s%s%s\n", nops, kind, count, nthreads,
               comms_mode, complete, mixed ? ", mixed" : "", free_one ? ", one freed" : "",
               persistent ? ", persistent" : "");
    if (rank == 0)
        printf("checksum %016llx\n", (unsigned long long)all);
    return 0;
}
