/* progress_check.c: several compressed reductions at once on one thread, each a resumable operation on memory of its own, progressed without blocking; each must give the bits of the same call made blocking (with --bound-only: be near them). */
/* Built with the library's layers (libapsmpi_layers.la), not preloaded: it drives the
 * operation that the blocking entry points run (entry/reduction.h) as a non-blocking call
 * will (issue 18): begin, then progress from one loop, round robin, never waiting in MPI.
 *
 * usage: progress_check [--op allreduce|reduce_scatter|reduce_scatter_block] [--count N]
 *        [--ops K] [--in-place] [--repeat R]
 * K reductions of N floats (reduce-scatter: N in all, uneven counts, one rank's empty on 3
 * ranks or more), each on its own duplicate of MPI_COMM_WORLD, first blocking (the reference,
 * apsmpi_Allreduce and the others) then all K at once without blocking; the results must be
 * equal bit for bit. The APSMPI_* settings apply as to a preloaded library; the call must be
 * one that is compressed (APSMPI_INTRANODE=compress on one machine). Prints one line. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry/entry_points.h"
#include "entry/reduction.h"
#include "state/runtime_state.h"

#include "test_values.h"

enum { MAX_OPS = 8 };

/* A request's own memory: one growing buffer per slot, as the thread's scratch has. */
struct owner {
    void *buf[APSMPI_SCRATCH_SLOTS];
    size_t cap[APSMPI_SCRATCH_SLOTS];
};

static void *owner_get(void *o, int slot, size_t bytes)
{
    struct owner *w = o;
    if (w->cap[slot] < bytes) {
        void *p = NULL;
        if (posix_memalign(&p, 64, bytes + 64) != 0)
            return NULL;
        free(w->buf[slot]);
        w->buf[slot] = p;
        w->cap[slot] = bytes + 64;
    }
    return w->buf[slot];
}

static int fail(int rank, const char *what)
{
    fprintf(stderr, "progress_check: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

/* --bound-only: every element of got within 1/4 of the largest of ref from ref: for the one
 * collective, whose non-blocking form MPI may sum in another order (each of its adds rounds
 * to the format: e4m3's sums of 3 ranks differ by 2 of 15 there). */
static int near(const float *got, const float *ref, long n)
{
    double maxabs = 0;
    for (long i = 0; i < n; i++)
        maxabs = fmax(maxabs, fabs(ref[i]));
    for (long i = 0; i < n; i++)
        if (fabs((double)got[i] - ref[i]) > maxabs / 4) {
            fprintf(stderr, "progress_check: element %ld: %g, blocking %g (largest %g)\n", i, got[i], ref[i], maxabs);
            return 0;
        }
    return 1;
}

int main(int argc, char **argv)
{
    const char *kind_name = "allreduce";
    long count = 300001;
    int nops = 3, in_place = 0, repeat = 1, bound_only = 0, rank, size, kind;
    long returned = 0; /* progress calls that returned before their operation was done */

    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--op") && a + 1 < argc)
            kind_name = argv[++a];
        else if (!strcmp(argv[a], "--count") && a + 1 < argc)
            count = atol(argv[++a]);
        else if (!strcmp(argv[a], "--ops") && a + 1 < argc)
            nops = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--repeat") && a + 1 < argc)
            repeat = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--bound-only"))
            bound_only = 1;
        else if (!strcmp(argv[a], "--in-place"))
            in_place = 1;
        else {
            fprintf(stderr, "progress_check: unknown option %s\n", argv[a]);
            return 2;
        }
    }
    kind = !strcmp(kind_name, "allreduce")        ? APSMPI_ALLREDUCE
           : !strcmp(kind_name, "reduce_scatter") ? APSMPI_REDUCE_SCATTER
                                                  : APSMPI_REDUCE_SCATTER_BLOCK;
    if (nops < 1 || nops > MAX_OPS || count < 1)
        return 2;
    MPI_Init(&argc, &argv);
    apsmpi_runtime_after_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (apsmpi_rt.codec == NULL)
        return fail(rank, "the settings compress nothing (APSMPI_FORMAT, APSMPI_ENABLE)");

    int *counts = malloc((size_t)size * sizeof *counts), block = (int)(count / size);
    long total = kind == APSMPI_REDUCE_SCATTER_BLOCK ? (long)block * size : 0;
    for (int r = 0; kind == APSMPI_REDUCE_SCATTER && r < size; r++) {
        counts[r] = size > 2 && r == 1 ? 0 : (int)(count / size) + 13 * r;
        total += counts[r];
    }
    if (kind == APSMPI_ALLREDUCE)
        total = count;
    long mine = kind == APSMPI_ALLREDUCE ? total : kind == APSMPI_REDUCE_SCATTER ? counts[rank] : block;

    MPI_Comm comm[MAX_OPS];
    struct owner owner[MAX_OPS];
    apsmpi_memory mem[MAX_OPS];
    apsmpi_reduction red[MAX_OPS];
    float *in[MAX_OPS], *ref[MAX_OPS], *out[MAX_OPS];
    memset(owner, 0, sizeof owner);
    for (int k = 0; k < nops; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm[k]);
        mem[k] = (apsmpi_memory){owner_get, &owner[k]};
        in[k] = malloc((size_t)total * sizeof(float));
        ref[k] = malloc((size_t)total * sizeof(float));
        out[k] = malloc((size_t)total * sizeof(float));
    }
    for (int it = 0; it < repeat; it++) {
        /* the reference, blocking (also makes each communicator's node layout and private
         * duplicate, collectives that a request would have to make in order at its start) */
        for (int k = 0; k < nops; k++) {
            float *send = in_place ? ref[k] : in[k], *recv = ref[k];
            for (long i = 0; i < total; i++)
                send[i] = test_value(rank, k + it, i);
            int rc =
                kind == APSMPI_ALLREDUCE
                    ? apsmpi_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)total, MPI_FLOAT, MPI_SUM, comm[k])
                : kind == APSMPI_REDUCE_SCATTER
                    ? apsmpi_Reduce_scatter(in_place ? MPI_IN_PLACE : send, recv, counts, MPI_FLOAT, MPI_SUM, comm[k])
                    : apsmpi_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, block, MPI_FLOAT, MPI_SUM,
                                                  comm[k]);
            if (rc != MPI_SUCCESS)
                return fail(rank, "a blocking call failed");
        }
        /* the same calls, all at once, without blocking */
        for (int k = 0; k < nops; k++) {
            float *send = in_place ? out[k] : in[k];
            for (long i = 0; i < total; i++)
                send[i] = test_value(rank, k + it, i);
            apsmpi_reduction_begin(
                &red[k], kind, in_place ? MPI_IN_PLACE : send, out[k], kind == APSMPI_REDUCE_SCATTER ? counts : NULL,
                kind == APSMPI_ALLREDUCE ? (int)total : block, (size_t)total, MPI_FLOAT, MPI_SUM, comm[k], &mem[k], 0);
        }
        int done[MAX_OPS] = {0}, left = nops;
        while (left > 0)
            for (int k = 0; k < nops; k++) {
                if (done[k])
                    continue;
                if (apsmpi_reduction_progress(&red[k], &done[k]) != MPI_SUCCESS)
                    return fail(rank, "a non-blocking reduction failed");
                if (done[k])
                    left--;
                else
                    returned++;
            }
        for (int k = 0; k < nops; k++)
            if (bound_only) {
                if (!near(out[k], ref[k], mine))
                    return fail(rank, "a non-blocking result is not near the blocking one");
            } else if (memcmp(out[k], ref[k], (size_t)mine * sizeof(float)) != 0) {
                long first = -1, last = -1, ndiff = 0;
                for (long i = 0; i < mine; i++)
                    if (memcmp(&out[k][i], &ref[k][i], sizeof(float)) != 0) {
                        if (first < 0)
                            first = i;
                        last = i;
                        ndiff++;
                    }
                fprintf(stderr,
                        "progress_check: rank %d: op %d: %ld elements differ, from %ld (%g, blocking %g) to %ld\n",
                        rank, k, ndiff, first, out[k][first], ref[k][first], last);
                return fail(rank, "a non-blocking result differs from the blocking one");
            }
    }
    long all_returned = 0;
    MPI_Reduce(&returned, &all_returned, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("progress ok: %d %s of %ld floats at once, %d time(s), %s; progress returned "
               "unfinished %ld times\n",
               nops, kind_name, total, repeat, bound_only ? "near blocking" : "same bits as blocking", all_returned);
    for (int k = 0; k < nops; k++) {
        MPI_Comm_free(&comm[k]);
        for (int s = 0; s < APSMPI_SCRATCH_SLOTS; s++)
            free(owner[k].buf[s]);
        free(in[k]);
        free(ref[k]);
        free(out[k]);
    }
    free(counts);
    apsmpi_runtime_before_finalize();
    MPI_Finalize();
    return 0;
}
