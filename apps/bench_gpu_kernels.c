/* bench_gpu_kernels.c: throughput of the CUDA kernels (block exponents, encode, decode) per format, beside the device's memcpy. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "apsmpi_kernels.h"
#include "core/aps.h"
#include "core/format.h"
#include "core/width_controller.h"

#define DEFAULT_SIZES "16,64,256,1024"
#define DEFAULT_FORMATS "fp16,bf16,e5m2,e4m3,e3m2,e2m1,e5m6"
#define MAX_LIST 64

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_gpu_kernels [options]\n"
                 "Times the CUDA kernels of apsmpi on one GPU and prints GB/s of FP32 data:\n"
                 "  amax/block   apsmpi_cuda_block_exponents, one exponent per --block elements\n"
                 "  amax/whole   the same with one block for the whole buffer (APSMPI_SCALING=aps)\n"
                 "  encode       apsmpi_cuda_encode, round to nearest, APS scales per block\n"
                 "  encode/sr    the same with stochastic rounding\n"
                 "  encode/meas  an MX format's: apsmpi_cuda_encode_measured, APSMPI_FORMAT=auto's encode that\n"
                 "               measures as it encodes (the ladder's depth bins, every block)\n"
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

#define CHECK(call)                                                                                              \
    do {                                                                                                         \
        cudaError_t err_ = (cudaError_t)(call);                                                                  \
        if (err_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "bench_gpu_kernels: %s: %s (line %d)\n", #call, cudaGetErrorString(err_), __LINE__); \
            exit(1);                                                                                             \
        }                                                                                                        \
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

enum op { OP_COPY, OP_AMAX_BLOCK, OP_AMAX_WHOLE, OP_ENCODE, OP_ENCODE_SR, OP_DECODE, OP_ENCODE_MEASURED };
static const char *const op_names[] = {"memcpy",    "amax/block", "amax/whole", "encode",
                                       "encode/sr", "decode",     "encode/meas"};

typedef struct bench {
    float *in, *dec;
    void *packed;
    int16_t *exps, *scales;
    unsigned long long *counters; /* encode/meas's, and its bins: the default ladder's */
    apsmpi_depth_bins bins;
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
    case OP_ENCODE_MEASURED:
        return apsmpi_cuda_encode_measured(f, b->in, b->n, 0, r, &b->bins, b->packed, b->counters, b->stream);
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

#define ALL_FORMATS "fp16,bf16,e5m2,e4m3,e4m3ieee,e2m0,e2m1,e3m1,e3m2,e4m2,e3m5,e5m4,e4m6,e5m6,e4m8,e6m7,e7m7"

struct options {
    size_t sizes_mib[MAX_LIST];
    int nsizes;
    apsmpi_format fmts[MAX_LIST];
    int nformats;
    long block, reps, device;
    const char *csv_path;
};

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "bench_gpu_kernels: out of memory\n");
        exit(1);
    }
    return p;
}

/* A whole decimal number in lo..hi into *out; 0, or -1 if v is not one. */
static int parse_long(const char *v, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*end != '\0' || errno != 0 || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

/* --sizes: MiB of floats, each > 0. Returns 0, or 2 (the exit status) after saying why. */
static int parse_sizes(char *list, struct options *o)
{
    char *items[MAX_LIST];
    long v;
    o->nsizes = split_list(list, items);
    for (int k = 0; k < o->nsizes; k++) {
        if (parse_long(items[k], 1, LONG_MAX, &v) != 0) {
            fprintf(stderr, "bench_gpu_kernels: bad size '%s' (MiB of floats)\n", items[k]);
            return 2;
        }
        o->sizes_mib[k] = (size_t)v;
    }
    return 0;
}

/* --formats: names of formats of 3 to 16 bits. Returns 0, or 2 after saying why. */
static int parse_formats(char *list, struct options *o)
{
    char *items[MAX_LIST];
    o->nformats = split_list(list, items);
    for (int k = 0; k < o->nformats; k++) {
        apsmpi_format *f = &o->fmts[k];
        if (apsmpi_format_parse(items[k], f) != 0 || f->width < 3 || f->width > 16) {
            fprintf(stderr, "bench_gpu_kernels: '%s' is not a format (fp16, bf16, e5m2, e4m3, e4m3ieee, eXmY)\n",
                    items[k]);
            return 2;
        }
    }
    return 0;
}

/* Fills *o from the command line. Returns -1 to go on, or the exit status (0 after --help,
 * 2 on a usage error, said on stderr). */
static int parse_args(int argc, char **argv, struct options *o)
{
    char sizes_arg[512] = DEFAULT_SIZES, formats_arg[512] = DEFAULT_FORMATS;
    memset(o, 0, sizeof *o);
    o->block = 4096;
    o->reps = 20;
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
        if (strcmp(a, "--sizes") == 0)
            snprintf(sizes_arg, sizeof sizes_arg, "%s", v);
        else if (strcmp(a, "--formats") == 0)
            snprintf(formats_arg, sizeof formats_arg, "%s", strcmp(v, "all") == 0 ? ALL_FORMATS : v);
        else if (strcmp(a, "--csv") == 0)
            o->csv_path = v;
        else if (!(strcmp(a, "--block") == 0 && parse_long(v, 1, LONG_MAX, &o->block) == 0) &&
                 !(strcmp(a, "--reps") == 0 && parse_long(v, 1, 100000, &o->reps) == 0) &&
                 !(strcmp(a, "--device") == 0 && parse_long(v, 0, LONG_MAX, &o->device) == 0)) {
            fprintf(stderr, "bench_gpu_kernels: bad option or value: %s %s (see --help)\n", a, v);
            return 2;
        }
        i++;
    }
    if (parse_sizes(sizes_arg, o) != 0 || parse_formats(formats_arg, o) != 0)
        return 2;
    return -1;
}

/* Selects the device and reads its properties. Returns -1 to go on, or the exit status: 77
 * without a CUDA device, 2 for a device number beyond the count. */
static int open_device(long device, struct cudaDeviceProp *prop)
{
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
    CHECK(cudaGetDeviceProperties(prop, (int)device));
    return -1;
}

/* --csv: the file, with its header; exits 1 if it cannot be written. NULL without --csv. */
static FILE *open_csv(const char *path)
{
    FILE *csv;
    if (path == NULL)
        return NULL;
    csv = fopen(path, "w");
    if (csv == NULL) {
        fprintf(stderr, "bench_gpu_kernels: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(csv, "device,size_mib,elements,block,format,kernel,median_ms,min_ms,gbps,memcpy_gbps,pct_of_memcpy\n");
    return csv;
}

/* A host pattern of n gradient-like values (random signs and mantissas, magnitudes over 24
 * binades), copied over the device buffer. */
static float *make_pattern(size_t n)
{
    float *pattern = checked_malloc(n * sizeof *pattern);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        uint32_t u = (uint32_t)((s * 0x2545F4914F6CDD1Dull) >> 32);
        uint32_t bits = (u & 0x807FFFFFu) | ((uint32_t)(127 - 20 + (u >> 23) % 24) << 23);
        memcpy(&pattern[i], &bits, sizeof bits);
    }
    return pattern;
}

/* The device buffers of one size, the input filled from the pattern. Returns 0, or -1 (after
 * printing the row that says so) when the device lacks the memory. */
static int alloc_size(bench *b, size_t size_mib, const float *pattern, size_t pattern_n)
{
    size_t bytes = size_mib << 20, nblocks, free_b = 0, total_b = 0;
    b->n = bytes / sizeof(float);
    nblocks = (b->n + b->block - 1) / b->block;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (2 * bytes + bytes / 2 + 4 * nblocks + (64u << 20) > free_b) {
        printf("%8zu  skipped: needs %zu MiB of device memory, %zu MiB free\n", size_mib, (2 * bytes + bytes / 2) >> 20,
               free_b >> 20);
        return -1;
    }
    CHECK(cudaMalloc((void **)&b->in, bytes));
    CHECK(cudaMalloc((void **)&b->dec, bytes));
    CHECK(cudaMalloc(&b->packed, bytes / 2 + 64));
    CHECK(cudaMalloc((void **)&b->exps, nblocks * sizeof(int16_t)));
    CHECK(cudaMalloc((void **)&b->scales, nblocks * sizeof(int16_t)));
    for (size_t at = 0; at < b->n; at += pattern_n) {
        size_t len = b->n - at < pattern_n ? b->n - at : pattern_n;
        CHECK(cudaMemcpy(b->in + at, pattern, len * sizeof(float), cudaMemcpyHostToDevice));
    }
    return 0;
}

static void free_size(bench *b)
{
    CHECK(cudaFree(b->in));
    CHECK(cudaFree(b->dec));
    CHECK(cudaFree(b->packed));
    CHECK(cudaFree(b->exps));
    CHECK(cudaFree(b->scales));
}

/* The block exponents of the input for one rank, computed by the kernel, on the host. */
static int16_t *input_exponents(bench *b, size_t nblocks)
{
    int16_t *h = checked_malloc(nblocks * sizeof *h);
    CHECK(apsmpi_cuda_block_exponents(b->in, b->n, b->block, b->exps, b->stream));
    CHECK(cudaStreamSynchronize(b->stream));
    CHECK(cudaMemcpy(h, b->exps, nblocks * sizeof *h, cudaMemcpyDeviceToHost));
    return h;
}

/* The APS scales of format f for those exponents (aps.c), copied to the device. */
static void upload_scales(bench *b, const int16_t *exps, size_t nblocks, const apsmpi_format *f)
{
    int16_t *sc = checked_malloc(nblocks * sizeof *sc);
    memcpy(sc, exps, nblocks * sizeof *sc);
    apsmpi_exponents_to_scales(sc, nblocks, f, 1);
    CHECK(cudaMemcpy(b->scales, sc, nblocks * sizeof *sc, cudaMemcpyHostToDevice));
    free(sc);
}

/* Where one measurement is reported: the device, the size, the memcpy's GB/s to compare with. */
struct report {
    const char *device_name;
    size_t size_mib, bytes;
    double copy_gbps;
    FILE *csv;
};

static void print_row(const struct report *r, const bench *b, const char *fname, enum op op, float med, float mn)
{
    double gbps = (double)r->bytes / (med * 1e-3) / 1e9;
    printf("%8zu  %-9s %-11s %10.4f %9.1f %8.1f%%\n", r->size_mib, fname, op_names[op], med, gbps,
           100.0 * gbps / r->copy_gbps);
    if (r->csv != NULL)
        fprintf(r->csv, "\"%s\",%zu,%zu,%zu,%s,%s,%.6f,%.6f,%.3f,%.3f,%.2f\n", r->device_name, r->size_mib, b->n,
                b->block, fname, op_names[op], med, mn, gbps, r->copy_gbps, 100.0 * gbps / r->copy_gbps);
}

/* One size: memcpy and the amax kernels, then encode, stochastic encode and decode per format. */
static void bench_size(bench *b, const struct options *o, struct report *r, const float *pattern, size_t pattern_n)
{
    static const enum op fmt_ops[] = {OP_ENCODE, OP_ENCODE_SR, OP_DECODE, OP_ENCODE_MEASURED};
    static const enum op amax_ops[] = {OP_AMAX_BLOCK, OP_AMAX_WHOLE};
    float copy_med, copy_min, med, mn;
    if (alloc_size(b, r->size_mib, pattern, pattern_n) != 0)
        return;
    size_t nblocks = (b->n + b->block - 1) / b->block;
    int16_t *exps = input_exponents(b, nblocks);
    r->bytes = r->size_mib << 20;
    time_op(b, OP_COPY, NULL, &copy_med, &copy_min);
    r->copy_gbps = (double)r->bytes / (copy_med * 1e-3) / 1e9;
    print_row(r, b, "-", OP_COPY, copy_med, copy_min);
    for (int k = 0; k < 2; k++) {
        time_op(b, amax_ops[k], NULL, &med, &mn);
        print_row(r, b, "-", amax_ops[k], med, mn);
    }
    for (int fi = 0; fi < o->nformats; fi++) {
        upload_scales(b, exps, nblocks, &o->fmts[fi]);
        for (int k = 0; k < 3 + o->fmts[fi].mx; k++) {
            time_op(b, fmt_ops[k], &o->fmts[fi], &med, &mn);
            print_row(r, b, o->fmts[fi].name, fmt_ops[k], med, mn);
        }
    }
    free(exps);
    free_size(b);
}

int main(int argc, char **argv)
{
    struct options o;
    struct cudaDeviceProp prop;
    const size_t pattern_n = (size_t)1 << 20;
    int status = parse_args(argc, argv, &o);
    if (status >= 0)
        return status;
    status = open_device(o.device, &prop);
    if (status >= 0)
        return status;
    struct report r = {prop.name, 0, 0, 0.0, open_csv(o.csv_path)};
    printf("device %d: %s, %d SMs; block %ld elements; median of %ld runs; GB/s = FP32 bytes / time\n", (int)o.device,
           prop.name, prop.multiProcessorCount, o.block, o.reps);
    printf("%8s  %-9s %-11s %10s %9s %9s\n", "MiB", "format", "kernel", "median_ms", "GB/s", "%memcpy");
    float *pattern = make_pattern(pattern_n);
    bench b;
    memset(&b, 0, sizeof b);
    b.reps = (int)o.reps;
    b.block = (size_t)o.block;
    CHECK(cudaStreamCreate(&b.stream));
    CHECK(cudaEventCreate(&b.start));
    CHECK(cudaEventCreate(&b.stop));
    CHECK(cudaMalloc((void **)&b.counters, APSMPI_MEASURE_COUNTERS * sizeof *b.counters));
    apsmpi_ladder ladder;
    char why[160];
    if (apsmpi_ladder_parse(APSMPI_LADDER_DEFAULT, &ladder, why, sizeof why) != 0) {
        fprintf(stderr, "bench_gpu_kernels: the default ladder: %s\n", why);
        return 1;
    }
    for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
        b.bins.depth[k] = k < apsmpi_ladder_fp32(&ladder) ? ladder.depth[k] : APSMPI_DEPTH_NONE;
    for (int si = 0; si < o.nsizes; si++) {
        r.size_mib = o.sizes_mib[si];
        bench_size(&b, &o, &r, pattern, pattern_n);
    }
    free(pattern);
    cudaEventDestroy(b.start);
    cudaEventDestroy(b.stop);
    cudaFree(b.counters);
    cudaStreamDestroy(b.stream);
    if (r.csv != NULL && fclose(r.csv) != 0) {
        fprintf(stderr, "bench_gpu_kernels: writing %s failed\n", o.csv_path);
        return 1;
    }
    return 0;
}
