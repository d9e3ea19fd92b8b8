/* error_vs_n.c: error of an in-place float MPI_Allreduce (sum) against an FP64 sum, for measuring how it grows with the rank count. */
/*
 * An ordinary MPI program that knows nothing of apsmpi: run it plain or with
 * LD_PRELOAD=libapsmpi.so. For each data set asked for it
 *
 *   1. fills COUNT floats per rank (normal: independent standard normal values,
 *      from a generator keyed by seed, rank and index; ones: every value 1.0),
 *   2. sums them over all ranks in FP64 (MPI_Allreduce on MPI_DOUBLE, which the
 *      library passes to MPI unchanged): the reference,
 *   3. sums them with MPI_Allreduce(MPI_IN_PLACE, ..., MPI_FLOAT, MPI_SUM) once,
 *   4. compares, on every rank, and reports the worst rank:
 *        rel_l2   ||r - ref||_2 / ||ref||_2
 *        max_abs  max |r - ref|
 *        zeroed   fraction of elements with ref != 0 that came back exactly 0
 *        nonfinite elements that came back inf or NaN
 *        r_min, r_max  the smallest and largest value returned (all-ones: the exact
 *                      answer is N everywhere)
 *        ranks_differ  1 when the ranks did not all receive the same bits
 *
 * Output: one line per data set on stdout, and with --csv one CSV row
 * (np,count,data,label,rel_l2,max_abs,zeroed,nonfinite,r_min,r_max,ranks_differ).
 * The label defaults to "APSMPI_FORMAT/APSMPI_ALGORITHM" as set in the environment.
 *
 * Usage: mpirun -np N apps/error_vs_n [--count N] [--data normal|ones|both]
 *                                     [--seed S] [--csv FILE] [--label TEXT]
 * Exit status 0, 2 on usage errors or when an MPI call fails.
 */
#include <mpi.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A standard normal value (Box-Muller on two 32-bit uniforms of one hash). */
static float normal_value(uint64_t seed, int r, size_t i)
{
    uint64_t h = mix64(seed * 0x100000001B3ULL ^ mix64(((uint64_t)r << 40) + i));
    double u1 = ((double)(h >> 32) + 1.0) / 4294967296.0; /* (0, 1] */
    double u2 = (double)(h & 0xffffffffu) / 4294967296.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static void die(const char *what)
{
    fprintf(stderr, "error_vs_n: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

struct errors {
    double rel_l2, max_abs, zeroed, nonfinite, r_min, r_max, ranks_differ;
};

/* Compares this rank's result with the reference; the worst over all ranks. */
static struct errors compare(const float *res, const double *ref, size_t n)
{
    double d2 = 0, r2 = 0, maxabs = 0, zeroed = 0, nonfinite = 0, nonzero = 0;
    double rmin = INFINITY, rmax = -INFINITY;
    uint64_t fingerprint = 0; /* of the result's bits, in order */
    for (size_t i = 0; i < n; i++) {
        double r = res[i];
        uint32_t bits;
        memcpy(&bits, &res[i], sizeof bits);
        fingerprint = mix64(fingerprint ^ bits);
        if (!isfinite(r)) {
            nonfinite++;
            continue;
        }
        double d = r - ref[i];
        d2 += d * d;
        r2 += ref[i] * ref[i];
        if (fabs(d) > maxabs)
            maxabs = fabs(d);
        if (ref[i] != 0) {
            nonzero++;
            if (r == 0)
                zeroed++;
        }
        if (r < rmin)
            rmin = r;
        if (r > rmax)
            rmax = r;
    }
    double local[6] = {
        r2 > 0 ? sqrt(d2 / r2) : sqrt(d2), maxabs, nonzero > 0 ? zeroed / nonzero : 0, nonfinite, -rmin, rmax};
    double worst[6];
    uint64_t fp_max, fp_min;
    if (MPI_Allreduce(local, worst, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&fingerprint, &fp_max, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&fingerprint, &fp_min, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        die("MPI_Allreduce of the error statistics failed");
    struct errors e = {worst[0], worst[1], worst[2], worst[3], -worst[4], worst[5], fp_max != fp_min};
    return e;
}

static struct errors run_one(const char *data, size_t count, uint64_t seed, float *buf, double *in, double *ref)
{
    int ones = strcmp(data, "ones") == 0;
    for (size_t i = 0; i < count; i++) {
        buf[i] = ones ? 1.0f : normal_value(seed, rank, i);
        in[i] = buf[i];
    }
    if (MPI_Allreduce(in, ref, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        die("the FP64 reference MPI_Allreduce failed");
    if (MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        die("the float MPI_Allreduce failed");
    return compare(buf, ref, count);
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: error_vs_n [--count N] [--data normal|ones|both] [--seed S] [--csv FILE] "
                        "[--label TEXT]\n");
}

int main(int argc, char **argv)
{
    size_t count = 2u << 20;
    const char *data = "both", *csv = NULL, *label = NULL;
    uint64_t seed = 1;
    char deflabel[128];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        char *end = NULL;
        if (!strcmp(argv[a], "--count") && v) {
            unsigned long long c = strtoull(v, &end, 10);
            if (*end || c == 0 || c > (1u << 30)) {
                usage();
                MPI_Finalize();
                return 2;
            }
            count = (size_t)c;
        } else if (!strcmp(argv[a], "--data") && v &&
                   (!strcmp(v, "normal") || !strcmp(v, "ones") || !strcmp(v, "both"))) {
            data = v;
        } else if (!strcmp(argv[a], "--seed") && v) {
            seed = strtoull(v, &end, 10);
        } else if (!strcmp(argv[a], "--csv") && v) {
            csv = v;
        } else if (!strcmp(argv[a], "--label") && v) {
            label = v;
        } else {
            usage();
            MPI_Finalize();
            return 2;
        }
        a++;
    }
    if (!label) {
        const char *f = getenv("APSMPI_FORMAT"), *alg = getenv("APSMPI_ALGORITHM");
        snprintf(deflabel, sizeof deflabel, "%s/%s", f ? f : "-", alg ? alg : "-");
        label = deflabel;
    }

    float *buf = malloc(count * sizeof *buf);
    double *in = malloc(count * sizeof *in), *ref = malloc(count * sizeof *ref);
    if (!buf || !in || !ref)
        die("out of memory");
    FILE *out = NULL;
    if (rank == 0 && csv) {
        out = fopen(csv, "a");
        if (!out)
            die("cannot open the CSV file");
        if (ftell(out) == 0)
            fprintf(out, "np,count,data,label,rel_l2,max_abs,zeroed,nonfinite,r_min,r_max,ranks_differ\n");
    }
    const char *sets[2] = {"normal", "ones"};
    for (int k = 0; k < 2; k++) {
        if (strcmp(data, "both") && strcmp(data, sets[k]))
            continue;
        struct errors e = run_one(sets[k], count, seed, buf, in, ref);
        if (rank == 0) {
            printf("error_vs_n: np=%d count=%zu data=%s label=%s rel_l2=%.4e max_abs=%.4e zeroed=%.4f "
                   "nonfinite=%.0f result=[%.6g, %.6g]%s\n",
                   nranks, count, sets[k], label, e.rel_l2, e.max_abs, e.zeroed, e.nonfinite, e.r_min, e.r_max,
                   e.ranks_differ ? " RANKS DIFFER" : "");
            if (out)
                fprintf(out, "%d,%zu,%s,%s,%.6e,%.6e,%.6f,%.0f,%.9g,%.9g,%d\n", nranks, count, sets[k], label, e.rel_l2,
                        e.max_abs, e.zeroed, e.nonfinite, e.r_min, e.r_max, (int)e.ranks_differ);
        }
    }
    if (out)
        fclose(out);
    free(buf);
    free(in);
    free(ref);
    MPI_Finalize();
    return 0;
}
