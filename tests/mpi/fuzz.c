/* fuzz.c: a differential fuzzer (an MPI program that knows nothing of apsmpi): random float sum reductions checked against an FP64 sum.
 *
 * Every case is drawn from one seed that all ranks share, so all ranks make the same call:
 * the operation (MPI_Allreduce, MPI_Reduce_scatter, MPI_Reduce_scatter_block), the
 * communicator (MPI_COMM_WORLD, a duplicate, or a random split into sub-communicators), the
 * counts (0 to about 300k elements, log-uniform; reduce-scatter counts random, zeros
 * included), MPI_IN_PLACE or not, buffers at odd byte offsets with canaries before and
 * after, and the values of one or more classes per case (zeros, signed zeros, integers,
 * normal values of one magnitude, blocks of very different magnitudes, FP32 subnormals,
 * large values, with --nonfinite inf and NaN, with --huge values near FP32's largest whose
 * sums may overflow). Every rank can regenerate every rank's input, so it checks its own
 * result against the FP64 sum of the inputs:
 *
 *   |result_i - sum_i| <= bound(format, N) * N * B_i + 2^-149,
 *
 * B_i being the largest |input| of any rank in element i's scaling block (--block; the
 * whole call with --block 0) and bound() the derived error bound of the format at N ranks
 * (error_bound below, the one place it is written, for the algorithm APSMPI_ALGORITHM
 * names; tests/mpi/formats.sh and rounding.sh ask it through --bound). An element with inf
 * or NaN input must be what IEEE arithmetic gives (NaN, or an inf of the right sign); one
 * whose sum overflows FP32 the inf of its sign (as plain MPI's sum in any order: --huge
 * gives an element the same sign on every rank), and one so near the limit that FP32
 * rounding could tip it either way that inf or a value within the bound. Every rank of an
 * allreduce must hold the same bits; no canary may change. Any failure is printed with the
 * case's seed and the job exits 1.
 *
 * usage: fuzz --format NAME [--cases C] [--seed S] [--block B] [--max-count N] [--nonfinite]
 *        [--huge] [--integers] [--exact] [--stochastic]
 *        fuzz --bound NAME N [--stochastic] (prints the bound for NAME at N ranks, exits)
 * --stochastic: APSMPI_ROUNDING=stochastic is in force (a looser bound on the inputs).
 * --format: the APSMPI_FORMAT in force (fp32: no compression: results must be within FP32
 * rounding). --exact: the library is not active: every result within FP32 rounding.
 * --integers: only integer values of at most 2^10 in magnitude (no value can flush), on
 * communicators of all ranks only; rank 0 then also prints the number of non-zero inputs
 * of all ranks in all calls ("nonzero inputs K"), which APSMPI_STATS=1 with
 * APSMPI_MIN_BYTES=0 must count alike.
 */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANARY_BYTES 64
#define CANARY 0xA5

struct options {
    const char *format;
    long cases, max_count, block;
    uint64_t seed;
    int nonfinite, integers, exact, stochastic, huge;
};

static struct options opt = {"e4m3", 200, 300000, 4096, 1, 0, 0, 0, 0, 0};
static int world_rank, world_size;

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A random stream: every rank draws the same numbers from the same state. */
typedef struct {
    uint64_t s;
} rng;
static uint64_t next(rng *r) { return mix64(r->s++); }
static double uniform(rng *r) { return (double)(next(r) >> 11) / 9007199254740992.0; }
static long below(rng *r, long n) { return n <= 0 ? 0 : (long)(next(r) % (uint64_t)n); }

/* ---- the format and its error bound ---- */

struct format {
    int e, m, fn; /* fn: E4M3FN (no inf, max 448) */
    int mx;       /* an OCP MX format: blocks of 32 with scales of their own, elements saturating */
    int finite;   /* its element has no inf or NaN code (FP6, FP4) */
};

/* The exponent and mantissa bits of an APSMPI_FORMAT name; 0 if not known. */
static int parse_format(const char *name, struct format *f)
{
    static const struct {
        const char *name;
        struct format f;
    } named[] = {
        {"fp16", {5, 10, 0, 0, 0}},     {"bf16", {8, 7, 0, 0, 0}},     {"e5m2", {5, 2, 0, 0, 0}},
        {"e4m3", {4, 3, 1, 0, 0}},      {"e4m3ieee", {4, 3, 0, 0, 0}}, {"mxfp8", {4, 3, 1, 1, 0}},
        {"mxfp8e5m2", {5, 2, 0, 1, 0}}, {"mxfp6", {3, 2, 0, 1, 1}},    {"mxfp6e2m3", {2, 3, 0, 1, 1}},
        {"mxfp5", {3, 1, 0, 1, 1}},     {"mxfp4", {2, 1, 0, 1, 1}},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strcmp(name, named[i].name) == 0) {
            *f = named[i].f;
            return 1;
        }
    f->fn = f->mx = f->finite = 0;
    return sscanf(name, "e%dm%d", &f->e, &f->m) == 2;
}

/* The bound on |result - exact sum| relative to N * B, B the block's largest input. With
 * u = 2^-(M+1) (half an ulp, relative) and t = 2^(emin-M-emax+ceil(log2 N)) (half the
 * subnormal step once APS scaled the block, relative to B), for the algorithm in force
 * (APSMPI_ALGORITHM, read from the environment; the same on every rank):
 * - rsag (the default) rounds each value at most twice: each of the N contributions once
 *   when encoded, by at most (u + t) B, together (u + t) N B; the fp32 sum adds at most
 *   N 2^-23 N B; the sum, at most N B (1 + u + t), is rounded once more with scales of its
 *   own: (u + t) N B (1 + u + t). All: (u + t)(2 + u + t) + N 2^-23.
 * - ring (and the MPI collective on encoded data it sends small calls through) rounds each
 *   of the N inputs once, and each of the N-1 partial sums once more (the k-th at most k B:
 *   u k B), each of those 2N-1 roundings flushing at most t B: it grows with N.
 * Stochastic rounding (APSMPI_ROUNDING=stochastic) may move a value by a whole step, 2u,
 * instead of half of one: in rsag both roundings, in the ring the inputs (its partial sums
 * are rounded to nearest).
 * An MX format scales each block of 32 elements of each encoded buffer by 2^(floor(log2 M) -
 * emax), M that block's largest magnitude (at most B): an element moves by at most u M (half
 * a step of the top binade; the subnormal steps are finer), or, above the largest normal,
 * saturates by at most (1 - max / 2^(emax+1)) M; r, the larger of the two, takes the place of
 * u + t in both bounds. */
static double error_bound(const struct format *f, int n, int stochastic)
{
    const char *algorithm = getenv("APSMPI_ALGORITHM");
    double bias = ldexp(1.0, f->e - 1) - 1, emin = 1 - bias;
    double emax = f->fn || f->finite ? ldexp(1.0, f->e) - 1 - bias : ldexp(1.0, f->e) - 2 - bias;
    double u = ldexp(1.0, -(f->m + 1)), t, r;
    int h = 0;

    while ((1L << h) < n)
        h++;
    t = ldexp(1.0, (int)(emin - f->m - emax) + h);
    if (f->mx) {
        /* the largest normal: all mantissa bits set, but E4M3's 1.75 (its 1.875 is NaN) */
        double top = f->fn ? 1.75 : 2.0 - ldexp(1.0, -f->m);
        double sat = 1.0 - top / 2.0;
        u = stochastic ? 2 * u : u;
        r = u > sat ? u : sat;
        if (algorithm == NULL || strcmp(algorithm, "ring") != 0)
            return r * (2 + r) + n * ldexp(1.0, -23);
        return r * (n + n * (n + 1) / 2.0 - 1) / n;
    }
    if (algorithm == NULL || strcmp(algorithm, "ring") != 0) {
        r = (stochastic ? 2 : 1) * u + t;
        return r * (2 + r) + n * ldexp(1.0, -23);
    }
    return (u * ((stochastic ? 2 * n : n) + n * (n + 1) / 2.0 - 1) + (2.0 * n - 1) * t) / n;
}

/* ---- the inputs ---- */

enum value_class { ZEROS, SIGNED_ZEROS, INTEGERS, ONE_MAGNITUDE, LAYERS, SUBNORMALS, LARGE, NONFINITE, NCLASSES };
/* A case's bit (above the classes) for --huge: a quarter of its regions hold values of 2e37
 * to 3.4e38, of one sign per element on every rank (so that whether a sum overflows FP32 does
 * not depend on the order MPI sums in), whose sums overflow in some elements and come near
 * FLT_MAX in others. Drawn apart from the classes, so that a seed without it draws the same
 * case as before it existed. */
#define HUGE_REGIONS NCLASSES

struct test_case {
    uint64_t seed;
    int op;        /* 0 allreduce, 1 reduce_scatter, 2 reduce_scatter_block */
    int comm_kind; /* 0 world, 1 duplicate, 2 split */
    int colors;    /* the split's number of colours */
    int in_place;
    long count;  /* allreduce: elements; reduce-scatter: over all ranks */
    int classes; /* a bit per value_class in this case */
    size_t send_off, recv_off;
};

/* The input of rank r (in the case's communicator) at element i. */
static float input_value(const struct test_case *tc, int r, long i)
{
    uint64_t h = mix64(tc->seed ^ ((uint64_t)(r + 1) << 40) ^ (uint64_t)i * 0x100000001b3ull);
    uint64_t region = mix64(tc->seed ^ (uint64_t)(i / 1000)); /* classes change every 1000 elements */
    double u = (double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    int cls;

    if ((tc->classes >> HUGE_REGIONS & 1) && mix64(region ^ 0x48554745ull) % 4 == 0) {
        uint64_t sign = mix64(tc->seed ^ (uint64_t)i * 0x9e3779b97f4a7c15ull) & 1;
        return (float)((sign ? -1.0 : 1.0) * (2e37 + 3.2e38 * fabs(u)));
    }

    do { /* the region's class, among the case's classes */
        cls = (int)(region % NCLASSES);
        region = mix64(region);
    } while (!(tc->classes >> cls & 1));
    switch (cls) {
    case ZEROS:
        return 0.0f;
    case SIGNED_ZEROS:
        return (h & 1) ? -0.0f : 0.0f;
    case INTEGERS:
        return (float)((long)(h % 2049) - 1024);
    case ONE_MAGNITUDE:
        return (float)u;
    case LAYERS:
        return (float)(u * pow(10.0, (double)(long)(mix64(region) % 24) - 12));
    case SUBNORMALS:
        return (float)(u * 1e-39);
    case LARGE:
        return (float)(u * 1e30);
    default: /* NONFINITE: rare infs and NaNs among values near 1 */
        if (h % 997 == 0)
            return NAN;
        if (h % 991 == 0)
            return (h & 2) ? INFINITY : -INFINITY;
        return (float)u;
    }
}

static struct test_case draw_case(uint64_t seed)
{
    rng r = {seed};
    struct test_case tc = {.seed = seed};
    double lg = uniform(&r) * log((double)opt.max_count);

    tc.op = (int)below(&r, 3);
    tc.comm_kind = (int)below(&r, opt.integers ? 2 : 3);
    tc.colors = 1 + (int)below(&r, 3);
    tc.in_place = (int)below(&r, 3) == 0;
    tc.count = below(&r, 20) == 0 ? (long)below(&r, 4) : (long)exp(lg);
    if (opt.integers) {
        tc.classes = 1 << INTEGERS;
    } else {
        do
            tc.classes = (int)(next(&r) & ((1u << NONFINITE) - 1)) | (opt.nonfinite && below(&r, 8) == 0) << NONFINITE;
        while (tc.classes == 0);
    }
    tc.send_off = (size_t)below(&r, 16);
    tc.recv_off = (size_t)below(&r, 16);
    if (opt.huge && !opt.integers && below(&r, 8) == 0)
        tc.classes |= 1 << HUGE_REGIONS;
    return tc;
}

/* Counts of a reduce-scatter over n ranks: random, zeros included, summing to about count. */
static void draw_counts(const struct test_case *tc, int n, int *counts)
{
    rng r = {tc->seed ^ 0xc0ffee};
    long left = tc->count;
    for (int i = 0; i < n; i++) {
        counts[i] = i == n - 1 ? (int)left : below(&r, 4) == 0 ? 0 : (int)below(&r, 2 * tc->count / n + 1);
        if (counts[i] > left)
            counts[i] = (int)left;
        left -= counts[i];
    }
}

/* ---- checking ---- */

static int failures;
static unsigned long long nonzero_inputs; /* over the ranks of every call of this rank's communicator */

static void fail(const struct test_case *tc, const char *what, long i, double got, double want, double tol)
{
    if (failures++ < 10)
        fprintf(
            stderr,
            "fuzz: rank %d case seed %llu (op %d, comm %d, count %ld, in place %d, classes 0x%x): %s at %ld: got %.9g, "
            "want %.9g within %.3g\n",
            world_rank, (unsigned long long)tc->seed, tc->op, tc->comm_kind, tc->count, tc->in_place, tc->classes, what,
            i, got, want, tol);
}

/* A buffer of n floats at byte offset off past a canary, and a canary after it. */
static unsigned char *guarded(size_t n, size_t off, float **buf)
{
    size_t bytes = n * sizeof(float);
    unsigned char *mem = malloc(CANARY_BYTES + off + bytes + CANARY_BYTES);
    if (mem == NULL) {
        fprintf(stderr, "fuzz: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(mem, CANARY, CANARY_BYTES + off);
    memset(mem + CANARY_BYTES + off + bytes, CANARY, CANARY_BYTES);
    *buf = (float *)(void *)(mem + CANARY_BYTES + off);
    return mem;
}

static void check_canaries(const struct test_case *tc, const unsigned char *mem, size_t n, size_t off,
                           const char *which)
{
    size_t bytes = n * sizeof(float);
    for (size_t i = 0; i < CANARY_BYTES + off; i++)
        if (mem[i] != CANARY) {
            fail(tc, which, -(long)(CANARY_BYTES + off - i), mem[i], CANARY, 0);
            return;
        }
    for (size_t i = 0; i < CANARY_BYTES; i++)
        if (mem[CANARY_BYTES + off + bytes + i] != CANARY) {
            fail(tc, which, (long)(n + i), mem[CANARY_BYTES + off + bytes + i], CANARY, 0);
            return;
        }
}

/* Checks result[0..len), elements first.. of the whole buffer, against the FP64 sum. */
static void check_values(const struct test_case *tc, const float *result, long first, long len, long total, int n,
                         const struct format *f)
{
    long block = opt.block > 0 ? opt.block : total;
    double rel = opt.exact || strcmp(opt.format, "fp32") == 0 ? 0 : error_bound(f, n, opt.stochastic);
    long cached_block = -1;
    double block_max = 0, overflow_limit = (double)FLT_MAX + ldexp(1.0, 103);

    for (long k = 0; k < len; k++) {
        long i = first + k;
        double sum = 0, abs_sum = 0, tol;
        int pinf = 0, ninf = 0, nan = 0;

        if (i / block != cached_block) { /* the block's largest magnitude over all ranks */
            cached_block = i / block;
            block_max = 0;
            for (long j = cached_block * block; j < (cached_block + 1) * block && j < total; j++)
                for (int r = 0; r < n; r++) {
                    float v = input_value(tc, r, j);
                    if (isfinite(v) && fabs(v) > block_max)
                        block_max = fabs(v);
                }
        }
        for (int r = 0; r < n; r++) {
            float v = input_value(tc, r, i);
            if (isnan(v))
                nan = 1;
            else if (isinf(v))
                *(v > 0 ? &pinf : &ninf) = 1;
            else {
                sum += v;
                abs_sum += fabs(v);
            }
        }
        if (nan || (pinf && ninf)) {
            if (!isnan(result[k]))
                fail(tc, "not NaN", i, result[k], NAN, 0);
            continue;
        }
        if (pinf || ninf) {
            if (!isinf(result[k]) || (result[k] > 0) != pinf)
                fail(tc, "not the right inf", i, result[k], pinf ? INFINITY : -INFINITY, 0);
            continue;
        }
        /* FP32 rounding of any summation order, plus the format's bound */
        tol = abs_sum * n * ldexp(1.0, -24) + rel * n * block_max + ldexp(1.0, -149);
        /* a sum past FLT_MAX + half its ulp overflows FP32; within FP32 rounding of that, an
         * inf of its sign is right too */
        if (fabs(sum) - abs_sum * n * ldexp(1.0, -24) >= overflow_limit) {
            if (!isinf(result[k]) || (result[k] > 0) != (sum > 0))
                fail(tc, "not the inf of a sum that overflows FP32", i, result[k], sum > 0 ? INFINITY : -INFINITY, 0);
            continue;
        }
        if (fabs(sum) + abs_sum * n * ldexp(1.0, -24) >= overflow_limit && isinf(result[k]) &&
            (result[k] > 0) == (sum > 0))
            continue;
        if (!(fabs((double)result[k] - sum) <= tol))
            fail(tc, "above the bound", i, result[k], sum, tol);
    }
}

/* The same bits on every rank of comm. */
static void check_identical(const struct test_case *tc, const float *result, long n, MPI_Comm comm)
{
    uint64_t h = 1469598103934665603ull, lo, hi;
    const unsigned char *p = (const unsigned char *)result;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++)
        h = (h ^ p[i]) * 1099511628211ull;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (lo != hi)
        fail(tc, "ranks hold different results", 0, (double)lo, (double)hi, 0);
}

/* ---- one case ---- */

static void run_case(const struct test_case *tc, const struct format *f)
{
    MPI_Comm comm;
    int rank, n, rc, *counts;
    long total, mine, first = 0;
    size_t send_n, recv_n;
    float *send, *recv;
    unsigned char *send_mem, *recv_mem;

    if (tc->comm_kind == 0)
        comm = MPI_COMM_WORLD;
    else if (tc->comm_kind == 1)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else
        MPI_Comm_split(MPI_COMM_WORLD, (int)(mix64(tc->seed ^ (uint64_t)world_rank) % (uint64_t)tc->colors), world_rank,
                       &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    counts = malloc((size_t)n * sizeof *counts);
    if (tc->op == 1) {
        draw_counts(tc, n, counts);
    } else {
        long per = tc->op == 2 ? tc->count / n : tc->count;
        for (int i = 0; i < n; i++)
            counts[i] = (int)per;
    }
    total = 0;
    for (int i = 0; i < n; i++) {
        if (i == rank)
            first = total;
        total += counts[i];
    }
    if (tc->op == 0) {
        total = counts[0];
        first = 0;
    }
    mine = tc->op == 0 ? total : counts[rank];
    send_n = (size_t)total;
    recv_n = tc->in_place ? (size_t)total : (size_t)mine;
    send_mem = guarded(tc->in_place ? 0 : send_n, tc->send_off, &send);
    recv_mem = guarded(recv_n, tc->recv_off, &recv);
    for (long i = 0; i < total; i++)
        (tc->in_place ? recv : send)[i] = input_value(tc, rank, i);
    if (!tc->in_place)
        for (size_t i = 0; i < recv_n; i++)
            recv[i] = -12345.0f; /* must be overwritten */
    if (rank == 0)               /* every rank sends its whole input, reduce-scatters included */
        for (int r = 0; r < n; r++)
            for (long i = 0; i < total; i++)
                nonzero_inputs += input_value(tc, r, i) != 0.0f;

    if (tc->op == 0)
        rc = MPI_Allreduce(tc->in_place ? MPI_IN_PLACE : send, recv, (int)total, MPI_FLOAT, MPI_SUM, comm);
    else if (tc->op == 1)
        rc = MPI_Reduce_scatter(tc->in_place ? MPI_IN_PLACE : send, recv, counts, MPI_FLOAT, MPI_SUM, comm);
    else
        rc = MPI_Reduce_scatter_block(tc->in_place ? MPI_IN_PLACE : send, recv, counts[0], MPI_FLOAT, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        fail(tc, "MPI error", rc, 0, 0, 0);

    check_values(tc, recv, first, mine, total, n, f);
    if (tc->op == 0)
        check_identical(tc, recv, total, comm);
    check_canaries(tc, send_mem, tc->in_place ? 0 : send_n, tc->send_off, "send canary changed");
    check_canaries(tc, recv_mem, recv_n, tc->recv_off, "receive canary changed");
    free(send_mem);
    free(recv_mem);
    free(counts);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
}

static void usage(void)
{
    fprintf(stderr, "usage: fuzz --format NAME [--cases C] [--seed S] [--block B] [--max-count N] [--nonfinite] "
                    "[--huge] [--integers] [--exact] [--stochastic] | fuzz --bound NAME N [--stochastic]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct format f;
    int all_failures;

    if ((argc == 4 || (argc == 5 && strcmp(argv[4], "--stochastic") == 0)) && strcmp(argv[1], "--bound") == 0) {
        if (!parse_format(argv[2], &f)) /* no MPI */
            usage();
        printf("%.6g\n", error_bound(&f, atoi(argv[3]), argc == 5));
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--format") == 0 && v)
            opt.format = argv[++i];
        else if (strcmp(a, "--cases") == 0 && v)
            opt.cases = atol(argv[++i]);
        else if (strcmp(a, "--seed") == 0 && v)
            opt.seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(a, "--block") == 0 && v)
            opt.block = atol(argv[++i]);
        else if (strcmp(a, "--max-count") == 0 && v)
            opt.max_count = atol(argv[++i]);
        else if (strcmp(a, "--nonfinite") == 0)
            opt.nonfinite = 1;
        else if (strcmp(a, "--huge") == 0)
            opt.huge = 1;
        else if (strcmp(a, "--integers") == 0)
            opt.integers = 1;
        else if (strcmp(a, "--exact") == 0)
            opt.exact = 1;
        else if (strcmp(a, "--stochastic") == 0)
            opt.stochastic = 1;
        else
            usage();
    }
    if (strcmp(opt.format, "fp32") != 0 && !parse_format(opt.format, &f))
        usage();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (long c = 0; c < opt.cases; c++) {
        struct test_case tc = draw_case(mix64(opt.seed) + (uint64_t)c);
        run_case(&tc, &f);
    }
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0) {
        printf("fuzz: %ld cases from seed %llu on %d ranks, format %s: %d failures\n", opt.cases,
               (unsigned long long)opt.seed, world_size, opt.format, all_failures);
        if (opt.integers)
            printf("nonzero inputs %llu\n", nonzero_inputs);
    }
    MPI_Finalize();
    return all_failures != 0;
}
