/* mx_loops_ab.c: two builds of one level's MX loops (codec_mx_simd.c of two commits) in one process, timed run by run in alternation; built and run by mx_loops_ab.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/codec_mx.h"
#include "core/format.h"

/* The two builds' tables: mx_loops_ab.sh compiles each codec_mx_simd.c with its table renamed
 * to one of these. On a core that another tenant's thread shares, the other thread's load
 * changes over seconds; runs of a few milliseconds that alternate see the same load, where
 * two processes run one after the other do not. */
extern const apsmpi_mx_loops loops_old, loops_new;

enum { MAX_PAIRS = 1001, BLOCK = APSMPI_MX_BLOCK };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[n / 2];
}

/* apps/bench_codec's data: values of mixed magnitude and sign */
static void fill(float *x, size_t n)
{
    uint64_t z = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < n; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)(int32_t)(z >> 32) * 0x1p-31f * (1.0f + (float)((z >> 20) & 7));
    }
}

typedef struct bufs {
    size_t n, nblocks, bytes;
    float *in, *out;
    uint8_t *a, *io; /* the sum's operands (io summed into, run after run, as apps/bench_codec does) */
} bufs;

/* One timed run of op (sum, encode or decode) with the loops l. */
static double run(const char *op, const apsmpi_mx_loops *l, const apsmpi_format *f, bufs *b)
{
    double t0 = now_s();
    if (strcmp(op, "sum") == 0)
        l->sum(f, b->a, b->io, b->nblocks);
    else if (strcmp(op, "decode") == 0)
        l->decode(f, b->a, b->nblocks, b->out);
    else
        l->encode(f, b->in, b->nblocks, b->io, NULL);
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FORMATS(a,b,...) PAIRS(1..%d) [ELEMENTS]\n", argv[0], MAX_PAIRS);
        return 2;
    }
    const int pairs = atoi(argv[2]);
    bufs b = {.n = argc > 3 ? strtoull(argv[3], NULL, 10) : (size_t)4 << 20};
    if (pairs < 1 || pairs > MAX_PAIRS || b.n < BLOCK) {
        fprintf(stderr, "%s: PAIRS 1..%d, ELEMENTS at least %d\n", argv[0], MAX_PAIRS, BLOCK);
        return 2;
    }
    b.nblocks = b.n / BLOCK;
    b.n = b.nblocks * BLOCK;
    b.bytes = b.nblocks * (1 + 4 * 8); /* the widest packing group's */
    b.in = malloc(b.n * sizeof(float));
    b.out = malloc(b.n * sizeof(float)); /* io's floats */
    b.a = malloc(b.bytes), b.io = malloc(b.bytes);
    if (!b.in || !b.out || !b.a || !b.io) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    fill(b.in, b.n);
    printf("level,format,op,pairs,old_ms,new_ms,speedup,speedup_q1,speedup_q3,identical\n");
    static double to[MAX_PAIRS], tn[MAX_PAIRS], sp[MAX_PAIRS];
    for (char *name = strtok(argv[1], ","); name; name = strtok(NULL, ",")) {
        apsmpi_format f;
        if (apsmpi_format_parse(name, &f) != 0 || !f.mx) {
            fprintf(stderr, "%s: %s is not an MX format\n", argv[0], name);
            return 2;
        }
        const size_t gb = 1 + 4 * (size_t)f.width;
        b.bytes = b.nblocks * gb;
        loops_new.encode(&f, b.in, b.nblocks, b.a, NULL);
        for (size_t i = 0; i < b.n; i++) /* io: the same values, reversed in each block, halved */
            b.out[i] = 0.5f * b.in[i / BLOCK * BLOCK + BLOCK - 1 - i % BLOCK];
        loops_new.encode(&f, b.out, b.nblocks, b.io, NULL);
        /* both builds' results, bit for bit: the sum into a copy of io, the encode, the decode */
        uint8_t *res[2] = {malloc(b.bytes), malloc(b.bytes)};
        float *dec[2] = {malloc(b.n * sizeof(float)), malloc(b.n * sizeof(float))};
        int identical = res[0] && res[1] && dec[0] && dec[1];
        const apsmpi_mx_loops *l[2] = {&loops_old, &loops_new};
        for (int v = 0; identical && v < 2; v++) {
            memcpy(res[v], b.io, b.bytes);
            l[v]->sum(&f, b.a, res[v], b.nblocks);
        }
        identical = identical && memcmp(res[0], res[1], b.bytes) == 0;
        for (int v = 0; identical && v < 2; v++)
            l[v]->encode(&f, b.in, b.nblocks, res[v], NULL);
        identical = identical && memcmp(res[0], res[1], b.bytes) == 0;
        for (int v = 0; identical && v < 2; v++)
            l[v]->decode(&f, b.a, b.nblocks, dec[v]);
        identical = identical && memcmp(dec[0], dec[1], b.n * sizeof(float)) == 0;
        free(res[0]), free(res[1]), free(dec[0]), free(dec[1]);
        const char *ops[3] = {"sum", "encode", "decode"};
        for (int o = 0; o < 3; o++) {
            run(ops[o], &loops_old, &f, &b); /* warm-up */
            run(ops[o], &loops_new, &f, &b);
            for (int k = 0; k < pairs; k++) { /* old and new in turn first */
                if (k % 2) {
                    tn[k] = run(ops[o], &loops_new, &f, &b);
                    to[k] = run(ops[o], &loops_old, &f, &b);
                } else {
                    to[k] = run(ops[o], &loops_old, &f, &b);
                    tn[k] = run(ops[o], &loops_new, &f, &b);
                }
                sp[k] = to[k] / tn[k];
            }
            double old = median(to, pairs), new = median(tn, pairs), s = median(sp, pairs);
            printf("%s,%s,%s,%d,%.4f,%.4f,%.3f,%.3f,%.3f,%d\n", loops_new.name, name, ops[o], pairs, old * 1e3,
                   new * 1e3, s, sp[pairs / 4], sp[3 * pairs / 4], identical);
        }
    }
    return 0;
}
