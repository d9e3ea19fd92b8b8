/* bench_gpu_kernels.c: throughput of the CUDA kernels (block exponents, encode, decode) per format, beside the device's memcpy. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "apsmpi_kernels.h"
#include "core/aps.h"
#include "core/format.h"

#define DEFAULT_SIZES "16,64,256,1024"
#define DEFAULT_FORMATS "fp16,bf16,e5m2,e4m3,e3m2,e2m1,e5m6"
#define MAX_LIST 64

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_gpu_kernels [options]\n"
            "Times the CUDA kernels of apsmpi on one GPU and prints GB/s of FP32 data:\n"
            "  amax/block   apsmpi_cuda_block_exponents, one exponent per --block elements\n"
            "  amax/whole   the same with one block for the whole buffer (APSMPI_SCALING=aps)\n"
            "  encode       apsmpi_cuda_encode, round to nearest, APS scales per block\n"
            "  encode/sr    the same with stochastic rounding\n"
            "  decode       apsmpi_cuda_decode of that output, APS scales per block\n"
            "  memcpy       cudaMemcpyAsync device to device of the same float buffer\n"
            "GB/s is the FP32 bytes of the buffer (4 * elements, read by amax and encode, written by\n"
            "decode) divided by the median time of the repetitions (cudaEvent timing, 1e9 bytes a GB).\n"
            "The memcpy line counts the same way: bytes copied / time, although a copy both reads and\n"
            "writes them (its DRAM traffic is twice that); so a kernel at 100%% of memcpy moves its\n"
            "FP32 side as fast as a copy moves a buffer, and a codec that only reads floats (encode)\n"
            "can exceed 100%%.\n"
            "options:\n"
            "  --sizes LIST    buffer sizes in MiB of floats (default " DEFAULT_SIZES ")\n"
            "  --formats LIST  formats (default " DEFAULT_FORMATS "); 'all' for a wide set\n"
            "  --block N       elements per APS block (default 4096)\n"
            "  --reps N        timed repetitions per measurement, median reported (default 20)\n"
            "  --device N      CUDA device (default 0)\n"
            "  --csv FILE      also write the results as CSV to FILE\n"
            "  --help          this text\n"
            "Exit status 77 when there is no CUDA device.\n");
}

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t err_ = (cudaError_t)(call);                                                   \
        if (err_ != cudaSuccess) {                                                                \
            fprintf(stderr, "bench_gpu_kernels: %s: %s (line %d)\n", #call, cudaGetErrorString(err_), __LINE__); \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

/* Splits a comma-separated list in place into at most MAX_LIST items; returns the count. */
static int split_list(char *s, char **items)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok != NULL && n < MAX_LIST; tok = strtok(NULL, ","))
        items[n++] = tok;
    return n;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

enum op { OP_COPY, OP_AMAX_BLOCK, OP_AMAX_WHOLE, OP_ENCODE, OP_ENCODE_SR, OP_DECODE };
static const char *const op_names[] = {"memcpy", "amax/block", "amax/whole", "encode", "encode/sr", "decode"};

typedef struct bench {
    float *in, *dec;
    void *packed;
    int16_t *exps, *scales;
    size_t n, block;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    int reps;
} bench;

static int run_op(bench *b, enum op op, const apsmpi_format *f)
{
    apsmpi_rounding r = {op == OP_ENCODE_SR, 0x1234, 1};
    switch (op) {
    case OP_COPY:
        return cudaMemcpyAsync(b->dec, b->in, b->n * sizeof(float), cudaMemcpyDeviceToDevice, b->stream);
    case OP_AMAX_BLOCK:
        return apsmpi_cuda_block_exponents(b->in, b->n, b->block, b->exps, b->stream);
    case OP_AMAX_WHOLE:
        return apsmpi_cuda_block_exponents(b->in, b->n, b->n, b->exps, b->stream);
    case OP_ENCODE:
    case OP_ENCODE_SR:
        return apsmpi_cuda_encode(f, b->in, b->n, 0, b->scales, b->block, r, b->packed, NULL, b->stream);
    default:
        return apsmpi_cuda_decode(f, b->packed, b->n, 0, b->scales, b->block, b->dec, b->stream);
    }
}

/* Median and minimum milliseconds of b->reps runs of op, after one warm-up run. */
static void time_op(bench *b, enum op op, const apsmpi_format *f, float *median, float *min)
{
    float *t = malloc((size_t)b->reps * sizeof *t);
    if (t == NULL) {
        fprintf(stderr, "bench_gpu_kernels: out of memory\n");
        exit(1);
    }
    CHECK(run_op(b, op, f));
    CHECK(cudaStreamSynchronize(b->stream));
    for (int k = 0; k < b->reps; k++) {
        CHECK(cudaEventRecord(b->start, b->stream));
        CHECK(run_op(b, op, f));
        CHECK(cudaEventRecord(b->stop, b->stream));
        CHECK(cudaEventSynchronize(b->stop));
        CHECK(cudaEventElapsedTime(&t[k], b->start, b->stop));
    }
    qsort(t, (size_t)b->reps, sizeof *t, cmp_float);
    *median = b->reps % 2 ? t[b->reps / 2] : (t[b->reps / 2 - 1] + t[b->reps / 2]) / 2;
    *min = t[0];
    free(t);
}

int main(int argc, char **argv)
{
    char sizes_arg[512] = DEFAULT_SIZES, formats_arg[512] = DEFAULT_FORMATS;
    const char *csv_path = NULL;
    long block = 4096, reps = 20, device = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (v == NULL) {
            fprintf(stderr, "bench_gpu_kernels: %s needs a value (see --help)\n", a);
            return 2;
        }
        char *end = NULL;
        errno = 0;
        if (strcmp(a, "--sizes") == 0)
            snprintf(sizes_arg, sizeof sizes_arg, "%s", v);
        else if (strcmp(a, "--formats") == 0)
            snprintf(formats_arg, sizeof formats_arg, "%s",
                     strcmp(v, "all") == 0 ? "fp16,bf16,e5m2,e4m3,e4m3ieee,e2m0,e2m1,e3m1,e3m2,e4m2,e3m5,e5m4,e4m6,e5m6,e4m8,e6m7,e7m7"
                                           : v);
        else if (strcmp(a, "--csv") == 0)
            csv_path = v;
        else if (strcmp(a, "--block") == 0 && ((block = strtol(v, &end, 10)), *end == '\0' && errno == 0 && block > 0))
            ;
        else if (strcmp(a, "--reps") == 0 && ((reps = strtol(v, &end, 10)), *end == '\0' && errno == 0 && reps > 0 && reps <= 100000))
            ;
        else if (strcmp(a, "--device") == 0 && ((device = strtol(v, &end, 10)), *end == '\0' && errno == 0 && device >= 0))
            ;
        else {
            fprintf(stderr, "bench_gpu_kernels: bad option or value: %s %s (see --help)\n", a, v);
            return 2;
        }
        i++;
    }

    char *size_items[MAX_LIST], *format_items[MAX_LIST];
    int nsizes = split_list(sizes_arg, size_items), nformats = split_list(formats_arg, format_items);
    size_t sizes_mib[MAX_LIST];
    apsmpi_format fmts[MAX_LIST];
    for (int k = 0; k < nsizes; k++) {
        char *end = NULL;
        long v = strtol(size_items[k], &end, 10);
        if (*end != '\0' || v <= 0) {
            fprintf(stderr, "bench_gpu_kernels: bad size '%s' (MiB of floats)\n", size_items[k]);
            return 2;
        }
        sizes_mib[k] = (size_t)v;
    }
    for (int k = 0; k < nformats; k++) {
        if (apsmpi_format_parse(format_items[k], &fmts[k]) != 0 || fmts[k].width < 3 || fmts[k].width > 16) {
            fprintf(stderr, "bench_gpu_kernels: '%s' is not a format (fp16, bf16, e5m2, e4m3, e4m3ieee, eXmY)\n",
                    format_items[k]);
            return 2;
        }
    }

    int ndev = 0;
    cudaError_t err = cudaGetDeviceCount(&ndev);
    if (err != cudaSuccess || ndev == 0) {
        fprintf(stderr, "bench_gpu_kernels: no CUDA device (%s): nothing to measure\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "device count 0");
        return 77;
    }
    if (device >= ndev) {
        fprintf(stderr, "bench_gpu_kernels: --device %ld but only %d device(s)\n", device, ndev);
        return 2;
    }
    CHECK(cudaSetDevice((int)device));
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, (int)device));

    FILE *csv = NULL;
    if (csv_path != NULL) {
        csv = fopen(csv_path, "w");
        if (csv == NULL) {
            fprintf(stderr, "bench_gpu_kernels: cannot write %s: %s\n", csv_path, strerror(errno));
            return 1;
        }
        fprintf(csv, "device,size_mib,elements,block,format,kernel,median_ms,min_ms,gbps,memcpy_gbps,pct_of_memcpy\n");
    }
    printf("device %d: %s, %d SMs; block %ld elements; median of %ld runs; GB/s = FP32 bytes / time\n", (int)device,
           prop.name, prop.multiProcessorCount, block, reps);
    printf("%8s  %-9s %-11s %10s %9s %9s\n", "MiB", "format", "kernel", "median_ms", "GB/s", "%memcpy");

    /* a host pattern of gradient-like values, copied over the device buffer */
    const size_t pattern_n = (size_t)1 << 20;
    float *pattern = malloc(pattern_n * sizeof *pattern);
    if (pattern == NULL) {
        fprintf(stderr, "bench_gpu_kernels: out of memory\n");
        return 1;
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < pattern_n; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        uint32_t u = (uint32_t)((s * 0x2545F4914F6CDD1Dull) >> 32);
        uint32_t bits = (u & 0x807FFFFFu) | ((uint32_t)(127 - 20 + (u >> 23) % 24) << 23);
        memcpy(&pattern[i], &bits, sizeof bits);
    }

    bench b;
    memset(&b, 0, sizeof b);
    b.reps = (int)reps;
    b.block = (size_t)block;
    CHECK(cudaStreamCreate(&b.stream));
    CHECK(cudaEventCreate(&b.start));
    CHECK(cudaEventCreate(&b.stop));

    for (int si = 0; si < nsizes; si++) {
        size_t bytes = sizes_mib[si] << 20;
        b.n = bytes / sizeof(float);
        size_t nblocks = (b.n + b.block - 1) / b.block;
        size_t free_b = 0, total_b = 0;
        CHECK(cudaMemGetInfo(&free_b, &total_b));
        if (2 * bytes + bytes / 2 + 4 * nblocks + (64u << 20) > free_b) {
            printf("%8zu  skipped: needs %zu MiB of device memory, %zu MiB free\n", sizes_mib[si],
                   (2 * bytes + bytes / 2) >> 20, free_b >> 20);
            continue;
        }
        CHECK(cudaMalloc((void **)&b.in, bytes));
        CHECK(cudaMalloc((void **)&b.dec, bytes));
        CHECK(cudaMalloc(&b.packed, bytes / 2 + 64));
        CHECK(cudaMalloc((void **)&b.exps, nblocks * sizeof(int16_t)));
        CHECK(cudaMalloc((void **)&b.scales, nblocks * sizeof(int16_t)));
        for (size_t at = 0; at < b.n; at += pattern_n) {
            size_t len = b.n - at < pattern_n ? b.n - at : pattern_n;
            CHECK(cudaMemcpy(b.in + at, pattern, len * sizeof(float), cudaMemcpyHostToDevice));
        }
        /* APS scales of this buffer for one rank, computed by the kernel and aps.c */
        int16_t *h = malloc(nblocks * sizeof *h);
        if (h == NULL) {
            fprintf(stderr, "bench_gpu_kernels: out of memory\n");
            return 1;
        }
        CHECK(apsmpi_cuda_block_exponents(b.in, b.n, b.block, b.exps, b.stream));
        CHECK(cudaStreamSynchronize(b.stream));
        CHECK(cudaMemcpy(h, b.exps, nblocks * sizeof *h, cudaMemcpyDeviceToHost));

        float copy_med, copy_min, med, mn;
        time_op(&b, OP_COPY, NULL, &copy_med, &copy_min);
        double copy_gbps = (double)bytes / (copy_med * 1e-3) / 1e9;
        for (int fi = -1; fi < nformats; fi++) {
            const apsmpi_format *f = fi >= 0 ? &fmts[fi] : NULL;
            if (f != NULL) {
                int16_t *sc = malloc(nblocks * sizeof *sc);
                if (sc == NULL) {
                    fprintf(stderr, "bench_gpu_kernels: out of memory\n");
                    return 1;
                }
                memcpy(sc, h, nblocks * sizeof *sc);
                apsmpi_exponents_to_scales(sc, nblocks, f, 1);
                CHECK(cudaMemcpy(b.scales, sc, nblocks * sizeof *sc, cudaMemcpyHostToDevice));
                free(sc);
            }
            static const enum op fmt_ops[] = {OP_ENCODE, OP_ENCODE_SR, OP_DECODE};
            static const enum op base_ops[] = {OP_COPY, OP_AMAX_BLOCK, OP_AMAX_WHOLE};
            const enum op *ops = f != NULL ? fmt_ops : base_ops;
            for (int k = 0; k < 3; k++) {
                if (ops[k] == OP_COPY) {
                    med = copy_med;
                    mn = copy_min;
                } else {
                    time_op(&b, ops[k], f, &med, &mn);
                }
                double gbps = (double)bytes / (med * 1e-3) / 1e9;
                const char *fname = f != NULL ? f->name : "-";
                printf("%8zu  %-9s %-11s %10.4f %9.1f %8.1f%%\n", sizes_mib[si], fname, op_names[ops[k]], med, gbps,
                       100.0 * gbps / copy_gbps);
                if (csv != NULL)
                    fprintf(csv, "\"%s\",%zu,%zu,%zu,%s,%s,%.6f,%.6f,%.3f,%.3f,%.2f\n", prop.name, sizes_mib[si], b.n,
                            b.block, fname, op_names[ops[k]], med, mn, gbps, copy_gbps, 100.0 * gbps / copy_gbps);
            }
        }
        free(h);
        CHECK(cudaFree(b.in));
        CHECK(cudaFree(b.dec));
        CHECK(cudaFree(b.packed));
        CHECK(cudaFree(b.exps));
        CHECK(cudaFree(b.scales));
    }
    free(pattern);
    cudaEventDestroy(b.start);
    cudaEventDestroy(b.stop);
    cudaStreamDestroy(b.stream);
    if (csv != NULL && fclose(csv) != 0) {
        fprintf(stderr, "bench_gpu_kernels: writing %s failed\n", csv_path);
        return 1;
    }
    return 0;
}
