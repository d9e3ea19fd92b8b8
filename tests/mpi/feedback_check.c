/* feedback_check.c: an MPI program (it does not link apsmpi) for error feedback's property: the same input at every call, and the results' sum over T calls against T times the exact sum, for every T.
 *
 * Each rank reduces the same buffers T times (same addresses, same input: error feedback's
 * key), sums the results in double and, after every call t, takes the largest
 * |sum of results - t * exact| / (N * B_i) over its elements, B_i the largest |input| of any
 * rank in i's block of --block elements. With error feedback that stays within one call's
 * error bound for every t, since what rounding took from a call is sent with the next one;
 * without it (round to nearest) the same error is made at every call and the sum drifts.
 * Prints the largest value over t and over the ranks, and the one at the last call; exits 1
 * if the largest is above --tol, or if an allreduce's result differs between ranks at any
 * call (error feedback keeps each rank's own residuals, but every rank must still return the
 * same bits).
 * B follows a global grid of --block elements: for an MX format's reduce_scatter, whose
 * segments are blocks of their own, give a count whose segments are multiples of 32.
 *
 * usage: feedback_check [--op allreduce|reduce_scatter] [--count N] [--calls T] [--block B]
 *        [--tol X] [--in-place]
 * --count: elements per rank (allreduce), over all ranks (reduce_scatter, cut evenly).
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Rank r's input at element i: a value in (-1, 1) times a magnitude of 1e-6 to 1e2 that
 * changes every 3000 elements (layers). */
static float input_value(int r, long i)
{
    uint64_t h = mix64(((uint64_t)(r + 1) << 40) ^ (uint64_t)i);
    double u = ((double)(h >> 11) / 9007199254740992.0) * 2.0 - 1.0;
    double magnitude = pow(10.0, (double)((long)(mix64((uint64_t)(i / 3000) + 11) % 9) - 6));
    return (float)(u * magnitude);
}

int main(int argc, char **argv)
{
    const char *op = "allreduce";
    long count = 100000, calls = 40, block = 32;
    double tol = -1;
    int in_place = 0, rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--op"))
            op = v, i++;
        else if (!strcmp(a, "--count"))
            count = atol(v), i++;
        else if (!strcmp(a, "--calls"))
            calls = atol(v), i++;
        else if (!strcmp(a, "--block"))
            block = atol(v), i++;
        else if (!strcmp(a, "--tol"))
            tol = atof(v), i++;
        else if (!strcmp(a, "--in-place"))
            in_place = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "feedback_check: unknown argument %s\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int allreduce = strcmp(op, "allreduce") == 0;
    long n_in = allreduce ? count : count - count % nranks, seg = n_in / nranks;
    long n_out = allreduce ? count : seg, first = allreduce ? 0 : rank * seg;
    int *counts = malloc((size_t)nranks * sizeof *counts);
    for (int r = 0; r < nranks; r++)
        counts[r] = (int)seg;
    float *x = malloc((size_t)n_in * sizeof *x), *in = malloc((size_t)n_in * sizeof *in);
    float *out = malloc((size_t)(in_place ? n_in : n_out) * sizeof *out);
    double *exact = calloc((size_t)n_out, sizeof *exact), *acc = calloc((size_t)n_out, sizeof *acc);
    double *bmax = calloc((size_t)(n_in / block + 2), sizeof *bmax);
    for (long i = 0; i < n_in; i++)
        x[i] = input_value(rank, i);
    for (long i = 0; i < n_in; i++)
        for (int r = 0; r < nranks; r++) {
            double v = input_value(r, i);
            bmax[i / block] = fmax(bmax[i / block], fabs(v));
            if (i >= first && i < first + n_out)
                exact[i - first] += v;
        }
    double worst = 0, last = 0;
    long worst_at = 0, differ_at = 0;
    for (long t = 1; t <= calls; t++) {
        memcpy(in_place ? out : in, x, (size_t)n_in * sizeof *x); /* the same input, in the same buffers */
        const void *send = in_place ? MPI_IN_PLACE : in;
        int rc = allreduce ? MPI_Allreduce(send, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)
                           : MPI_Reduce_scatter(send, out, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        double d = 0;
        for (long i = 0; i < n_out; i++) {
            acc[i] += out[i];
            double scale = bmax[(first + i) / block] > 0 ? bmax[(first + i) / block] : 1.0;
            d = fmax(d, fabs(acc[i] - (double)t * exact[i]) / (nranks * scale));
        }
        if (allreduce) { /* the same bits on every rank (the reduction of a hash is not a float sum: plain MPI) */
            uint64_t h = 0, lo, hi;
            for (long i = 0; i < n_out; i++) {
                uint32_t b;
                memcpy(&b, &out[i], sizeof b);
                h = mix64(h ^ b);
            }
            MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
            if (lo != hi && differ_at == 0)
                differ_at = t;
        }
        if (d > worst) {
            worst = d;
            worst_at = t;
        }
        last = d;
    }
    struct {
        double v;
        int r;
    } mine = {worst, rank}, all;
    double last_all;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Allreduce(&last, &last_all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long at = worst_at;
    MPI_Bcast(&at, 1, MPI_LONG, all.r, MPI_COMM_WORLD);
    int bad = (tol >= 0 && all.v > tol) || differ_at != 0;
    if (rank == 0 && differ_at != 0)
        printf("%s: the ranks' results differ at call %ld\n", op, differ_at);
    if (rank == 0)
        printf("%s: largest |sum of %ld results - t * exact| / (N * B): %.4g (at call %ld); at the last call %.4g; "
               "bound %g: %s\n",
               op, calls, all.v, at, last_all, tol,
               tol < 0 ? "not checked"
               : bad   ? "above the bound"
                       : "within");
    free(x);
    free(in);
    free(out);
    free(exact);
    free(acc);
    free(bmax);
    free(counts);
    MPI_Finalize();
    return bad;
}
