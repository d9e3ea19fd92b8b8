/* bench_codec.c: throughput of the codec (encode, decode, packed sum, stochastic encode) per format and instruction-set level, beside memcpy (MX formats with --formats; encode and decode on the library's codec threads with --threads; with --measured, APSMPI_FORMAT=auto's measured encode). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/codec.h"
#include "core/codec_parallel.h"
#include "core/thread_pool.h"
#include "core/width_controller.h"

enum { MAX_REPS = 101, BLOCK_LEN = 4096 };

static int reps = 9; /* timed runs per operation (--reps), the median reported */
/* --fastest: the fastest of them reported instead (on a core that another tenant's thread
 * shares, the run it disturbed least; memcpy's too, so the ratios compare like with like) */
static int fastest;
/* Encode and decode cut over this many threads (--threads), as a rank's codec threads are;
 * --cpu then counts the calling thread's time only. */
static int threads = 1;
/* --measured: a row encode-measured: the encode with what APSMPI_FORMAT=auto adds to it on an MX
 * ladder (the codec's count of flushes and the depth histogram of core/width_controller.h, in
 * the encode's pass: apsmpi_encode_measured); and a row encode-separate: the encode counting
 * flushes, then the separate pass over at most APSMPI_MEASURE_BLOCKS blocks that it replaced
 * (apsmpi_flush_depths, which an APS ladder still takes) */
static int measured;
static apsmpi_ladder default_ladder; /* APSMPI_AUTO_LADDER's default: the bins of the measure */

typedef struct bench_buffers {
    size_t n;
    float *in, *out;
    uint8_t *pa, *pb; /* packed buffers, large enough for 16-bit codes */
    int16_t *scale;   /* per-block scales */
} bench_buffers;

/* Wall-clock time, or with --cpu this thread's CPU time (for a machine shared with other
 * jobs: it leaves out the time the thread waited for a core). */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Gradient-like data: normally distributed-ish values of mixed magnitude and sign. */
static void fill_input(bench_buffers *b)
{
    uint64_t z = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < b->n; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        int32_t r = (int32_t)(z >> 32);
        b->in[i] = (float)r * 0x1p-31f * (1.0f + (float)((z >> 20) & 7));
    }
    for (size_t k = 0; k < (b->n + BLOCK_LEN - 1) / BLOCK_LEN; k++)
        b->scale[k] = (int16_t)(4 + k % 3);
}

static int alloc_buffers(bench_buffers *b, size_t n)
{
    b->n = n;
    b->in = malloc(n * sizeof(float));
    b->out = malloc(n * sizeof(float));
    b->pa = malloc(n * 2 + 64);
    b->pb = malloc(n * 2 + 64);
    b->scale = malloc(((n + BLOCK_LEN - 1) / BLOCK_LEN) * sizeof(int16_t));
    if (!b->in || !b->out || !b->pa || !b->pb || !b->scale)
        return -1;
    memset(b->out, 0, n * sizeof(float));
    memset(b->pa, 0, n * 2 + 64);
    memset(b->pb, 0, n * 2 + 64);
    fill_input(b);
    return 0;
}

static void free_buffers(bench_buffers *b)
{
    free(b->in);
    free(b->out);
    free(b->pa);
    free(b->pb);
    free(b->scale);
}

enum op { OP_MEMCPY, OP_ENCODE, OP_DECODE, OP_SUM, OP_ENCODE_MEASURED, OP_ENCODE_SEPARATE };

static void run_op(enum op op, const apsmpi_codec *c, bench_buffers *b, apsmpi_rounding r)
{
    apsmpi_scales sc = {b->scale, BLOCK_LEN};
    switch (op) {
    case OP_MEMCPY:
        memcpy(b->out, b->in, b->n * sizeof(float));
        break;
    case OP_ENCODE:
        apsmpi_encode_threads(c, threads, b->in, b->n, 0, sc, r, b->pa, NULL);
        break;
    case OP_DECODE:
        apsmpi_decode_threads(c, threads, b->pa, b->n, 0, sc, b->out);
        break;
    case OP_ENCODE_MEASURED: {
        apsmpi_mx_measure m;
        apsmpi_mx_measure_start(&m, &default_ladder);
        apsmpi_encode_threads_measured(c, threads, b->in, b->n, 0, r, b->pa, &m);
        break;
    }
    case OP_ENCODE_SEPARATE: {
        apsmpi_flush_measure m = {0};
        apsmpi_encode_threads(c, threads, b->in, b->n, 0, sc, r, b->pa, &m.flushed);
        apsmpi_flush_depths(b->in, b->n, &default_ladder, &m);
        break;
    }
    case OP_SUM:
        apsmpi_sum_packed(c, b->pa, b->pb, apsmpi_groups_for(apsmpi_codec_format(c), b->n));
        break;
    }
}

/* Median (or fastest) seconds of reps runs of op (after one untimed warm-up run). */
static double time_op(enum op op, const apsmpi_codec *c, bench_buffers *b, apsmpi_rounding r)
{
    double t[MAX_REPS];
    run_op(op, c, b, r);
    for (int k = 0; k < reps; k++) {
        r.call = (uint64_t)k;
        double t0 = now_s();
        run_op(op, c, b, r);
        t[k] = now_s() - t0;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    return fastest ? t[0] : t[reps / 2];
}

/* One row: the level, format, operation, time, element rate and its ratio to memcpy's. */
static void print_row(int csv, const char *level, const char *format, const char *op, size_t n, double sec,
                      double memcpy_sec)
{
    double gelem = (double)n / sec * 1e-9;
    if (csv)
        printf("%s,%s,%s,%zu,%.6f,%.4f,%.3f\n", level, format, op, n, sec * 1e3, gelem, memcpy_sec / sec);
    else
        printf("%-7s %-9s %-9s %10zu %9.3f %9.3f %7.2f\n", level, format, op, n, sec * 1e3, gelem, memcpy_sec / sec);
}

/* Every operation on one format at one level, each beside memcpy of the same floats timed
 * right before it. */
static int bench_format(int csv, int isa, const char *name, bench_buffers *b)
{
    apsmpi_format f;
    if (apsmpi_format_parse(name, &f) != 0)
        return -1;
    apsmpi_codec *c = apsmpi_codec_create_isa(&f, isa);
    if (c == NULL)
        return -1;
    static const struct {
        const char *label;
        enum op op;
        int stochastic;
    } ops[] = {{"encode", OP_ENCODE, 0},
               {"decode", OP_DECODE, 0},
               {"sum", OP_SUM, 0},
               {"encode-sr", OP_ENCODE, 1},
               {"encode-measured", OP_ENCODE_MEASURED, 0},
               {"encode-separate", OP_ENCODE_SEPARATE, 0}};
    const char *level = apsmpi_codec_isa_of(c);
    apsmpi_rounding nearest = {0, 12345, 0};
    apsmpi_encode(c, b->in, b->n, 0, (apsmpi_scales){b->scale, BLOCK_LEN}, nearest, b->pb, NULL);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        if ((ops[k].op == OP_ENCODE_MEASURED || ops[k].op == OP_ENCODE_SEPARATE) && !(measured && f.mx))
            continue;
        apsmpi_rounding r = {ops[k].stochastic, 12345, 0};
        double mc = time_op(OP_MEMCPY, NULL, b, r);
        print_row(csv, level, name, ops[k].label, b->n, time_op(ops[k].op, c, b, r), mc);
    }
    apsmpi_codec_free(c);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const formats[] = {"fp16", "bf16", "e5m2", "e4m3", "e4m3ieee", "e3m2",
                                          "e5m7", "e2m1", "e4m2", "e5m4", "e5m6",     "e8m3"};
    const char *list[64];
    size_t nlist = 0;
    int csv = 0, only = -1;
    char why[160];
    if (apsmpi_ladder_parse(APSMPI_LADDER_DEFAULT, &default_ladder, why, sizeof why) != 0)
        return 1;
    size_t n = (size_t)4 << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0)
            csv = 1;
        else if (strcmp(argv[i], "--measured") == 0)
            measured = 1;
        else if (strcmp(argv[i], "--fastest") == 0)
            fastest = 1;
        else if (strcmp(argv[i], "--cpu") == 0)
            bench_clock = CLOCK_THREAD_CPUTIME_ID;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
                 atoi(argv[i + 1]) <= MAX_REPS)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
                 atoi(argv[i + 1]) <= APSMPI_MAX_CODEC_THREADS)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc && apsmpi_codec_isa_parse(argv[i + 1]) > 0)
            only = apsmpi_codec_isa_parse(argv[++i]);
        else if (strcmp(argv[i], "--formats") == 0 && i + 1 < argc) /* comma-separated, in place of the list */
            for (char *tok = strtok(argv[++i], ","); tok && nlist < sizeof list / sizeof list[0];
                 tok = strtok(NULL, ","))
                list[nlist++] = tok;
        else if ((n = strtoull(argv[i], NULL, 10)) == 0) {
            fprintf(
                stderr,
                "usage: %s [--csv] [--cpu] [--reps 1..101] [--fastest] [--threads 1..64] [--level scalar|avx2|avx512] "
                "[--formats a,b,...] [--measured] [elements]\n",
                argv[0]);
            return 2;
        }
    }
    bench_buffers b;
    if (alloc_buffers(&b, n) != 0) {
        fprintf(stderr, "bench_codec: out of memory for %zu elements\n", n);
        return 1;
    }
    if (csv)
        printf("level,format,op,elements,ms,gelem_per_s,ratio_to_memcpy\n");
    else
        printf("%-7s %-9s %-9s %10s %9s %9s %7s\n", "level", "format", "op", "elements", "ms", "Gelem/s", "x memcpy");
    if (nlist == 0)
        for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++)
            list[nlist++] = formats[k];
    for (int isa = APSMPI_ISA_SCALAR; isa < APSMPI_ISA_COUNT; isa++) {
        if ((only >= 0 && isa != only) || !apsmpi_codec_isa_supported(isa)) {
            if (only < 0)
                fprintf(stderr, "bench_codec: level %s skipped: not in this build or not on this CPU\n",
                        apsmpi_codec_isa_name(isa));
            continue;
        }
        for (size_t k = 0; k < nlist; k++) {
            if (bench_format(csv, isa, list[k], &b) != 0) {
                fprintf(stderr, "bench_codec: cannot set up %s at level %s\n", list[k], apsmpi_codec_isa_name(isa));
                free_buffers(&b);
                return 1;
            }
        }
    }
    free_buffers(&b);
    apsmpi_pool_stop();
    return 0;
}
