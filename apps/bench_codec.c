/* bench_codec.c: single-threaded throughput of the codec (encode, decode, packed sum) per format, beside memcpy. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/codec.h"

enum { REPS = 9, BLOCK_LEN = 4096 };

typedef struct bench_buffers {
    size_t n;
    float *in, *out;
    uint8_t *pa, *pb;  /* packed buffers, large enough for 16-bit codes */
    int16_t *scale;    /* per-block scales */
} bench_buffers;

typedef struct bench_case {
    const char *label;
    const char *format;
    int stochastic;
} bench_case;

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

enum op { OP_MEMCPY, OP_ENCODE, OP_DECODE, OP_SUM };

static void run_op(enum op op, const apsmpi_codec *c, bench_buffers *b, apsmpi_rounding r)
{
    apsmpi_scales sc = {b->scale, BLOCK_LEN};
    switch (op) {
    case OP_MEMCPY:
        memcpy(b->out, b->in, b->n * sizeof(float));
        break;
    case OP_ENCODE:
        apsmpi_encode(c, b->in, b->n, 0, sc, r, b->pa, NULL);
        break;
    case OP_DECODE:
        apsmpi_decode(c, b->pa, b->n, 0, sc, b->out);
        break;
    case OP_SUM:
        apsmpi_sum_packed(c, b->pa, b->pb, apsmpi_groups_for(apsmpi_codec_format(c), b->n));
        break;
    }
}

/* Median seconds of REPS runs of op (after one untimed warm-up run). */
static double time_op(enum op op, const apsmpi_codec *c, bench_buffers *b, apsmpi_rounding r)
{
    double t[REPS];
    run_op(op, c, b, r);
    for (int k = 0; k < REPS; k++) {
        r.call = (uint64_t)k;
        double t0 = now_s();
        run_op(op, c, b, r);
        t[k] = now_s() - t0;
    }
    qsort(t, REPS, sizeof t[0], cmp_double);
    return t[REPS / 2];
}

static void print_row(int csv, const char *label, const char *op, size_t n, double sec)
{
    double gelem = (double)n / sec * 1e-9;
    if (csv)
        printf("%s,%s,%zu,%.6f,%.4f,%.3f\n", label, op, n, sec * 1e3, gelem, gelem * 4.0);
    else
        printf("%-10s %-8s %10zu %10.3f %10.3f %10.2f\n", label, op, n, sec * 1e3, gelem, gelem * 4.0);
}

static int bench_format(int csv, const bench_case *bc, bench_buffers *b)
{
    apsmpi_format f;
    if (apsmpi_format_parse(bc->format, &f) != 0)
        return -1;
    apsmpi_codec *c = apsmpi_codec_create(&f);
    if (c == NULL)
        return -1;
    apsmpi_rounding r = {bc->stochastic, 12345, 0};
    apsmpi_encode(c, b->in, b->n, 0, (apsmpi_scales){b->scale, BLOCK_LEN}, r, b->pb, NULL);
    print_row(csv, bc->label, "encode", b->n, time_op(OP_ENCODE, c, b, r));
    print_row(csv, bc->label, "decode", b->n, time_op(OP_DECODE, c, b, r));
    print_row(csv, bc->label, "sum", b->n, time_op(OP_SUM, c, b, r));
    apsmpi_codec_free(c);
    return 0;
}

int main(int argc, char **argv)
{
    static const bench_case cases[] = {
        {"fp16", "fp16", 0}, {"bf16", "bf16", 0}, {"e5m2", "e5m2", 0},
        {"e4m3", "e4m3", 0}, {"e4m3-sr", "e4m3", 1}, {"e3m2", "e3m2", 0},
        {"e4m3ieee", "e4m3ieee", 0}, {"e5m7", "e5m7", 0},
    };
    int csv = 0;
    size_t n = (size_t)4 << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0)
            csv = 1;
        else if (strcmp(argv[i], "--cpu") == 0)
            bench_clock = CLOCK_THREAD_CPUTIME_ID;
        else if ((n = strtoull(argv[i], NULL, 10)) == 0) {
            fprintf(stderr, "usage: %s [--csv] [--cpu] [elements]\n", argv[0]);
            return 2;
        }
    }
    bench_buffers b;
    if (alloc_buffers(&b, n) != 0) {
        fprintf(stderr, "bench_codec: out of memory for %zu elements\n", n);
        return 1;
    }
    if (csv)
        printf("format,op,elements,ms,gelem_per_s,gbyte_per_s_float\n");
    else
        printf("%-10s %-8s %10s %10s %10s %10s\n", "format", "op", "elements", "ms", "Gelem/s", "GB/s(f32)");
    print_row(csv, "float", "memcpy", n, time_op(OP_MEMCPY, NULL, &b, (apsmpi_rounding){0, 0, 0}));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (bench_format(csv, &cases[k], &b) != 0) {
            fprintf(stderr, "bench_codec: cannot set up %s\n", cases[k].format);
            free_buffers(&b);
            return 1;
        }
    }
    free_buffers(&b);
    return 0;
}
