/* overlap_bench.c: how much of an MPI_Iallreduce hides behind computation: issued before COMPUTE ms of work and waited for after it, against the two in sequence (plain MPI; preload libapsmpi.so to time apsmpi). */
/* usage: overlap_bench [--mib M] [--compute-ms MS] [--reps R] [--warmup W] [--label L] [--csv FILE]
 * Floats of M MiB (default 16), summed with MPI_Iallreduce on MPI_COMM_WORLD (it asks for
 * MPI_THREAD_MULTIPLE, so that a library may progress the request from a thread). Each
 * repetition, after a barrier, times on every rank:
 *   sequence: MPI_Iallreduce, MPI_Wait, then COMPUTE ms of work (a spin on one core);
 *   overlap:  MPI_Iallreduce, COMPUTE ms of the same work, then MPI_Wait;
 *   alone:    MPI_Iallreduce and MPI_Wait.
 * The time of a repetition is the slowest rank's; the modes alternate within each repetition.
 * Prints one line per mode with the median over R repetitions (after W untimed ones) and, with
 * --csv, appends "label,mode,mib,compute_ms,rep,seconds" rows. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* COMPUTE ms of work on this core (no MPI call, as a layer's forward or backward pass). */
static void compute(double ms)
{
    volatile double x = 0;
    double end = now() + ms * 1e-3;
    while (now() < end)
        for (int i = 0; i < 2000; i++)
            x += (double)i * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { SEQUENCE, OVERLAP, ALONE, MODES };
static const char *mode_names[MODES] = {"sequence", "overlap", "alone"};

int main(int argc, char **argv)
{
    double mib = 16, compute_ms = 300;
    int reps = 5, warmup = 1, rank, size, provided;
    const char *label = "run", *csv = NULL;

    for (int a = 1; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "--mib"))
            mib = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--compute-ms"))
            compute_ms = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--reps"))
            reps = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--warmup"))
            warmup = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--label"))
            label = argv[a + 1];
        else if (!strcmp(argv[a], "--csv"))
            csv = argv[a + 1];
        else {
            fprintf(stderr, "overlap_bench: unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || mib <= 0)
        return 2;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = (size_t)(mib * 1048576.0 / sizeof(float));
    float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) /* (touched once: no first-touch cost in the timings) */
        in[i] = out[i] = (float)((i * 2654435761u + (size_t)rank) % 2001) * 1e-3f - 1.0f;

    double *t[MODES];
    for (int m = 0; m < MODES; m++)
        t[m] = malloc((size_t)reps * sizeof(double));
    for (int r = -warmup; r < reps; r++)
        for (int m = 0; m < MODES; m++) {
            MPI_Request req;
            double t0, mine, slowest;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = now();
            MPI_Iallreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            if (m == OVERLAP)
                compute(compute_ms);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (m == SEQUENCE)
                compute(compute_ms);
            mine = now() - t0;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r >= 0)
                t[m][r] = slowest;
        }
    if (rank == 0) {
        FILE *f = csv ? fopen(csv, "a") : NULL;
        for (int m = 0; m < MODES; m++) {
            for (int r = 0; f && r < reps; r++)
                fprintf(f, "%s,%s,%g,%g,%d,%.6f\n", label, mode_names[m], mib, compute_ms, r, t[m][r]);
            qsort(t[m], (size_t)reps, sizeof(double), cmp);
            printf("%s: %s %.1f ms (median of %d; %g MiB, %d ranks, compute %g ms, thread level %s)\n", label,
                   mode_names[m], t[m][reps / 2] * 1e3, reps, mib, size, compute_ms,
                   provided == MPI_THREAD_MULTIPLE ? "multiple" : "below multiple");
        }
        if (f)
            fclose(f);
    }
    MPI_Finalize();
    return 0;
}
