/* auto_check.c: the data of APSMPI_FORMAT=auto's tests (tests/mpi/auto.sh): Gaussian buckets, and buckets whose 32-element blocks hold a few large values among many small ones, summed over T calls; the last call's values lost to zero against the exact sum. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double uniform(uint64_t key) { return ((double)(mix(key) >> 11) + 0.5) / 9007199254740992.0; }

/* the data of a call: Gaussian; spread; or two tensors fused, the second 2^20 smaller */
enum data { GAUSSIAN, SPREAD, TENSORS };
/* where the second tensor of TENSORS starts: 60% into the bucket of n elements */
static size_t second_tensor(size_t n) { return n / 10 * 6; }

/* element i of rank r's input at call t of n elements: Gaussian; (SPREAD) two values near 1 in
 * each block of 32 (places 0 and 17) and 30 values 2^-8 .. 2^-6 around them, random signs; or
 * (TENSORS) Gaussian, times 2^-20 from second_tensor(n) on */
static float value(enum data d, int r, int t, size_t i, size_t n)
{
    uint64_t key = ((uint64_t)r << 48) ^ ((uint64_t)t << 36) ^ (uint64_t)i * 0x100000001b3ull;
    double u1 = uniform(key * 2 + 1), u2 = uniform(key * 2 + 2);
    if (d != SPREAD) {
        double g = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        return (float)(d == TENSORS && i >= second_tensor(n) ? ldexp(g, -20) : g);
    }
    double sign = u2 < 0.5 ? -1.0 : 1.0;
    if (i % 32 == 0 || i % 32 == 17)
        return (float)(sign * (1.0 + u1));
    return (float)(sign * ldexp(1.0 + u1, -8 + (int)(mix(key) % 3)));
}

static void usage(void)
{
    fprintf(stderr,
            "usage: auto_check [--op allreduce|reduce_scatter|iallreduce|persistent] [--count N] [--calls T]\n"
            "  [--spread-from K] (calls K.. spread, before Gaussian; default never) [--spread-rank R] (only R's)\n"
            "  [--tensors-from K] (calls K.. two tensors, the second 40%% of the bucket 2^20 smaller)\n"
            "  [--in-place] [--max-lost L] [--min-lost L] [--max-rel E]\n"
            "  [--fresh-comm] (each call on a new duplicate of MPI_COMM_WORLD, freed after it)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *op = "allreduce";
    long count = 100000, calls = 12, spread_from = -1, spread_rank = -1, tensors_from = -1;
    double max_lost = 1.0, min_lost = 0.0, max_rel = 1.0;
    int in_place = 0, fresh_comm = 0, rank, size, bad = 0;

    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--in-place") == 0 || strcmp(argv[a], "--fresh-comm") == 0) {
            *(argv[a][2] == 'i' ? &in_place : &fresh_comm) = 1;
            continue;
        }
        if (a + 1 >= argc)
            usage();
        if (strcmp(argv[a], "--op") == 0)
            op = argv[++a];
        else if (strcmp(argv[a], "--count") == 0)
            count = atol(argv[++a]);
        else if (strcmp(argv[a], "--calls") == 0)
            calls = atol(argv[++a]);
        else if (strcmp(argv[a], "--spread-from") == 0)
            spread_from = atol(argv[++a]);
        else if (strcmp(argv[a], "--spread-rank") == 0)
            spread_rank = atol(argv[++a]);
        else if (strcmp(argv[a], "--tensors-from") == 0)
            tensors_from = atol(argv[++a]);
        else if (strcmp(argv[a], "--max-lost") == 0)
            max_lost = atof(argv[++a]);
        else if (strcmp(argv[a], "--min-lost") == 0)
            min_lost = atof(argv[++a]);
        else if (strcmp(argv[a], "--max-rel") == 0)
            max_rel = atof(argv[++a]);
        else
            usage();
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int scatter = strcmp(op, "reduce_scatter") == 0;
    size_t n = (size_t)count, seg = n / (size_t)size;
    if (scatter)
        n = seg * (size_t)size;
    float *send = malloc(n * sizeof *send), *recv = malloc(n * sizeof *recv);
    double lost_share = 0, rel = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    int persistent = strcmp(op, "persistent") == 0, reused = 0;
    MPI_Comm last_comm = MPI_COMM_NULL;

#if MPI_VERSION >= 4
    if (persistent)
        MPI_Allreduce_init(in_place ? MPI_IN_PLACE : send, in_place ? send : recv, (int)n, MPI_FLOAT, MPI_SUM,
                           MPI_COMM_WORLD, MPI_INFO_NULL, &req);
#else
    if (persistent) { /* this MPI has no persistent collectives */
        if (rank == 0)
            printf("auto_check: this MPI (MPI %d.%d) has no MPI_Allreduce_init: skipped\n", MPI_VERSION,
                   MPI_SUBVERSION);
        MPI_Finalize();
        return 77;
    }
#endif
    for (long t = 0; t < calls; t++) {
        int spread_call = spread_from >= 0 && t >= spread_from, tensors_call = tensors_from >= 0 && t >= tensors_from;
        /* the data of rank r at this call */
#define DATA(r) (spread_call && (spread_rank < 0 || spread_rank == (r)) ? SPREAD : tensors_call ? TENSORS : GAUSSIAN)
        for (size_t i = 0; i < n; i++)
            send[i] = value(DATA(rank), rank, (int)t, i, n);
        float *out = in_place ? send : recv;
        const void *sb = in_place ? MPI_IN_PLACE : send;
        MPI_Comm comm = MPI_COMM_WORLD;
        if (fresh_comm) {
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            reused += t > 0 && memcmp(&comm, &last_comm, sizeof comm) == 0; /* MPI handed the freed handle again */
            last_comm = comm;
        }
        if (scatter)
            MPI_Reduce_scatter_block(send, recv, (int)seg, MPI_FLOAT, MPI_SUM, comm);
        else if (persistent) {
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (strcmp(op, "iallreduce") == 0) {
            MPI_Iallreduce(sb, out, (int)n, MPI_FLOAT, MPI_SUM, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (strcmp(op, "allreduce") == 0)
            MPI_Allreduce(sb, out, (int)n, MPI_FLOAT, MPI_SUM, comm);
        else
            usage();
        if (fresh_comm)
            MPI_Comm_free(&comm);
        if (scatter)
            out = recv;
        /* the exact sum of every rank's input (each rank makes them all) */
        size_t first = scatter ? (size_t)rank * seg : 0, len = scatter ? seg : n, nonzero = 0, lost = 0;
        double err2 = 0, ref2 = 0;
        for (size_t i = 0; i < len; i++) {
            double exact = 0;
            for (int r = 0; r < size; r++)
                exact += value(DATA(r), r, (int)t, first + i, n);
            nonzero += exact != 0;
            lost += exact != 0 && out[i] == 0.0f;
            err2 += (out[i] - exact) * (out[i] - exact);
            ref2 += exact * exact;
        }
        lost_share = nonzero ? (double)lost / (double)nonzero : 0;
        rel = ref2 > 0 ? sqrt(err2 / ref2) : 0;
    }
    if (persistent)
        MPI_Request_free(&req);
    double most[2] = {lost_share, rel}, least = lost_share, all[2];
    MPI_Allreduce(most, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("auto_check: %s of %zu floats on %d ranks, %ld calls: last call's values lost to zero %.4f%% (largest "
               "over ranks; smallest %.4f%%), relative L2 error %.4g\n",
               op, n, size, calls, 100 * all[0], 100 * least, all[1]);
        if (fresh_comm)
            printf("auto_check: the freed communicator's handle came back for the next one %d of %ld times\n", reused,
                   calls - 1);
        if (all[0] > max_lost || least < min_lost || all[1] > max_rel) {
            printf("auto_check: outside the bounds (lost at most %g, at least %g, relative error at most %g)\n",
                   max_lost, min_lost, max_rel);
            bad = 1;
        }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(send);
    free(recv);
    MPI_Finalize();
    return bad;
}
