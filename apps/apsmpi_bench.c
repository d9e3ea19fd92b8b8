/* apsmpi_bench.c: plain-MPI bandwidth and accuracy benchmark for MPI_Allreduce / MPI_Reduce_scatter(_block) on MPI_FLOAT/MPI_SUM. */
/*
 * The program knows nothing of apsmpi: it is an ordinary MPI program, so the
 * same binary measures plain MPI and, with LD_PRELOAD=libapsmpi.so, the
 * library.  For every message size of a sweep it
 *
 *   - times the collective (median over iterations of the slowest rank's time;
 *     a barrier precedes every timed call),
 *   - checks every result of every iteration against a double-precision
 *     reference sum computed locally (each rank can regenerate every rank's
 *     input) and reports the norm-wise error max|r - ref| / max|ref|,
 *   - checks that the send buffer was not modified and that nothing was
 *     written past the end of the result (canary).
 *
 * Sizes ("bytes") always name the whole reduced vector: the allreduce count
 * times 4, or the total send buffer of a reduce-scatter (sum of recvcounts
 * times 4).  Bus bandwidth follows the nccl-tests convention: allreduce
 * bytes*2(N-1)/N/time, reduce-scatter bytes*(N-1)/N/time.
 *
 * --zero-cost-bits W runs, instead of the real call, the same MPI call on
 * ceil(count*W/32) floats (the bytes a W-bit format would move) with no codec
 * at all; the row still reports the original bytes, so its bandwidth is the
 * best any W-bit compression could reach.  No result check in that mode.
 *
 * --device PLUGIN puts the send and receive buffers in device memory of an apsmpi
 * device plugin (libapsmpi_cuda.so: a GPU), filled and read back outside the timed
 * region. The timed call is then MPI_* on the device pointers (for apsmpi's device
 * path), or with --stage what a job does without a CUDA-aware MPI: copy the input to
 * page-locked host memory, MPI_* there, copy the result back, all inside the timing.
 *
 * Build:  mpicc -O2 -Wall -Wextra apps/apsmpi_bench.c -o apsmpi_bench -lm
 * Run:    mpirun -np 4 ./apsmpi_bench --op allreduce --min 4096 --max 268435456
 *         ./apsmpi_bench --help
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>

#include "device/device_plugin.h"

extern char **environ;

enum op_kind { OP_ALLREDUCE, OP_REDUCE_SCATTER_BLOCK, OP_REDUCE_SCATTER };
static const char *const op_names[] = {"allreduce", "reduce_scatter_block", "reduce_scatter"};

#define CANARY_ELEMS 256
#define CANARY_BITS 0x7fa5a5a5u /* a NaN payload nobody computes */
#define MAX_ITERS 100000

struct options {
    enum op_kind op;
    size_t min_bytes, max_bytes;
    unsigned step;
    int iters, min_iters, warmup;
    double time_per_size;
    double tol;
    int zero_bits;
    int in_place;
    const char *csv;
    const char *label;
    const char *require_preload;
    uint64_t seed;
    int quiet;
    int print_times;
    const char *device;
    int stage;
};

static int rank, nranks;

/* --device: the plugin's operations and the device (and, with --stage, page-locked) buffers */
static const apsmpi_device_ops *dev;
static float *d_send, *d_recv, *h_send, *h_recv;

/* ------------------------------------------------------------------------- */
/* deterministic gradient-like data                                          */

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Roughly standard normal (Irwin-Hall of three 16-bit uniforms), with a rare
 * x8 outlier driven by the remaining 16 bits. */
static inline float normalish(uint64_t h)
{
    float s = (float)(h & 0xffff) + (float)((h >> 16) & 0xffff) + (float)((h >> 32) & 0xffff);
    float z = (s * (1.0f / 65536.0f) - 1.5f) * 2.0f;
    if (((h >> 48) & 0x3ff) == 0)
        z *= 8.0f;
    return z;
}

/* The vector is cut into "layers" of 8192 elements, each with its own
 * magnitude 1e-3 * 2^-e, e in [-2, 9] (shared by all ranks, as layers are);
 * within a layer every element is 0.5*signal (shared by all ranks, so that the
 * sum grows like N) plus per-rank noise. */
#define LAYER_SHIFT 13

struct gen_seeds {
    uint64_t layer, shared, rank_base;
};

static struct gen_seeds make_seeds(uint64_t seed, size_t count, enum op_kind op)
{
    struct gen_seeds s;
    uint64_t base = mix64(seed ^ mix64((uint64_t)count * 0x100000001B3ULL + (uint64_t)op));
    s.layer = mix64(base + 1);
    s.shared = mix64(base + 2);
    s.rank_base = mix64(base + 3);
    return s;
}

static inline uint64_t rank_seed(const struct gen_seeds *s, int r)
{
    return mix64(s->rank_base + (uint64_t)(r + 1) * 0xD1B54A32D192ED03ULL);
}

static inline float layer_scale(const struct gen_seeds *s, size_t layer)
{
    int e = (int)(mix64(s->layer + layer) % 12) - 2;
    return ldexpf(1e-3f, -e);
}

static inline float gen_value(const struct gen_seeds *s, uint64_t rseed, float scale, size_t i)
{
    float sig = normalish(mix64(s->shared + i));
    float noise = normalish(mix64(rseed + i));
    return scale * (0.5f * sig + noise);
}

/* out[k] = rank r's input element lo+k, for k < hi-lo */
static void gen_range(float *out, const struct gen_seeds *s, int r, size_t lo, size_t hi)
{
    uint64_t rs = rank_seed(s, r);
    size_t i = lo;
    while (i < hi) {
        size_t layer = i >> LAYER_SHIFT;
        size_t end = (layer + 1) << LAYER_SHIFT;
        if (end > hi)
            end = hi;
        float scale = layer_scale(s, layer);
        for (; i < end; i++)
            out[i - lo] = gen_value(s, rs, scale, i);
    }
}

/* Reference sum of all ranks' float inputs, in double, for elements [lo, hi).
 * Returns max |ref|. */
static double ref_range(double *out, const struct gen_seeds *s, size_t lo, size_t hi)
{
    uint64_t *rs = malloc((size_t)nranks * sizeof *rs);
    double amax = 0.0;
    if (!rs) {
        fprintf(stderr, "apsmpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int r = 0; r < nranks; r++)
        rs[r] = rank_seed(s, r);
    size_t i = lo;
    while (i < hi) {
        size_t layer = i >> LAYER_SHIFT;
        size_t end = (layer + 1) << LAYER_SHIFT;
        if (end > hi)
            end = hi;
        float scale = layer_scale(s, layer);
        for (; i < end; i++) {
            float sig = 0.5f * normalish(mix64(s->shared + i));
            double acc = 0.0;
            for (int r = 0; r < nranks; r++)
                acc += (double)(scale * (sig + normalish(mix64(rs[r] + i))));
            out[i - lo] = acc;
            if (fabs(acc) > amax)
                amax = fabs(acc);
        }
    }
    free(rs);
    return amax;
}

/* number of elements of buf[0..n) that differ from rank r's input [lo, lo+n) */
static size_t count_input_mismatch(const float *buf, const struct gen_seeds *s, int r, size_t lo, size_t n)
{
    uint64_t rs = rank_seed(s, r);
    size_t bad = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = lo + k;
        float v = gen_value(s, rs, layer_scale(s, i >> LAYER_SHIFT), i);
        if (memcmp(&v, &buf[k], sizeof v) != 0)
            bad++;
    }
    return bad;
}

/* ------------------------------------------------------------------------- */
/* helpers                                                                   */

static void *alloc_touched(size_t bytes)
{
    void *p = NULL;
    size_t align = 4096; /* no MADV_HUGEPAGE: on this VM compaction made first touch slower */
    bytes = (bytes + align - 1) / align * align;
    if (bytes == 0)
        bytes = align;
    if (posix_memalign(&p, align, bytes) != 0 || !p) {
        fprintf(stderr, "apsmpi_bench: rank %d: cannot allocate %zu bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p, 0, bytes); /* first touch, once */
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double mult = 1;
    if (*end) {
        if (!strcmp(end, "K") || !strcmp(end, "k") || !strcmp(end, "KiB"))
            mult = 1024.0;
        else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
            mult = 1024.0 * 1024.0;
        else if (!strcmp(end, "G") || !strcmp(end, "GiB"))
            mult = 1024.0 * 1024.0 * 1024.0;
        else
            return -1;
    }
    *out = (size_t)(v * mult);
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: apsmpi_bench [options]\n"
            "  --op OP             allreduce (default) | reduce_scatter_block | reduce_scatter\n"
            "                      (reduce_scatter uses deliberately uneven recvcounts)\n"
            "  --min BYTES         smallest size (default 4096; suffixes K M G)\n"
            "  --max BYTES         largest size (default 256M); always included\n"
            "  --step F            size factor between sizes, >= 2 (default 4)\n"
            "  --iters N           at most N timed iterations per size (default 20)\n"
            "  --min-iters N       at least N timed iterations per size (default 3)\n"
            "  --warmup N          untimed warm-up calls per size (default 2; 1 from 16 MiB)\n"
            "  --time-per-size S   aim for about S seconds of timed calls per size (default 3)\n"
            "  --tol X             fail when max|r-ref|/max|ref| > X (default 1e-5)\n"
            "  --zero-cost-bits W  zero-cost bound: call on ceil(count*W/32) floats, no check\n"
            "  --in-place          use MPI_IN_PLACE\n"
            "  --csv FILE          append rows op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label\n"
            "  --label TEXT        label column of the CSV (default: APSMPI_FORMAT, zeroW or mpi)\n"
            "  --require-preload S fail unless a mapped shared object path contains S\n"
            "  --seed N            data seed (default 1)\n"
            "  --quiet             no per-size table (header and errors only)\n"
            "  --print-times       also print every timed iteration (slowest rank, us)\n"
            "  --device PLUGIN     buffers in device memory of an apsmpi device plugin\n"
            "                      (e.g. .libs/libapsmpi_cuda.so); exits 77 without a device\n"
            "  --stage             with --device: time copy to host + MPI + copy back (the\n"
            "                      job staging fp32 itself, for a non-CUDA-aware MPI)\n"
            "  --help\n"
            "The program exits 1 if any check fails (error above --tol, non-finite\n"
            "result, modified send buffer, write past the result), 2 on usage errors.\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
    static const struct option lo[] = {
        {"op", required_argument, 0, 'o'},        {"min", required_argument, 0, 'a'},
        {"max", required_argument, 0, 'b'},       {"step", required_argument, 0, 's'},
        {"iters", required_argument, 0, 'n'},     {"min-iters", required_argument, 0, 'm'},
        {"warmup", required_argument, 0, 'w'},    {"time-per-size", required_argument, 0, 't'},
        {"tol", required_argument, 0, 'T'},       {"zero-cost-bits", required_argument, 0, 'z'},
        {"in-place", no_argument, 0, 'i'},        {"csv", required_argument, 0, 'c'},
        {"label", required_argument, 0, 'l'},     {"require-preload", required_argument, 0, 'P'},
        {"seed", required_argument, 0, 'S'},      {"quiet", no_argument, 0, 'q'},
        {"print-times", no_argument, 0, 'p'},     {"help", no_argument, 0, 'h'},
        {"device", required_argument, 0, 'D'},    {"stage", no_argument, 0, 'G'},
        {0, 0, 0, 0}};
    int c, v, li = -1;
    char *end;
    o->op = OP_ALLREDUCE;
    o->min_bytes = 4096;
    o->max_bytes = 256u << 20;
    o->step = 4;
    o->iters = 20;
    o->min_iters = 3;
    o->warmup = 2;
    o->time_per_size = 3.0;
    o->tol = 1e-5;
    o->zero_bits = 0;
    o->in_place = 0;
    o->csv = NULL;
    o->label = NULL;
    o->require_preload = NULL;
    o->seed = 1;
    o->quiet = 0;
    o->print_times = 0;
    o->device = NULL;
    o->stage = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", lo, &li)) != -1) {
        switch (c) {
        case 'o':
            if (!strcmp(optarg, "allreduce"))
                o->op = OP_ALLREDUCE;
            else if (!strcmp(optarg, "reduce_scatter_block"))
                o->op = OP_REDUCE_SCATTER_BLOCK;
            else if (!strcmp(optarg, "reduce_scatter"))
                o->op = OP_REDUCE_SCATTER;
            else
                goto bad;
            break;
        case 'a':
            if (parse_size(optarg, &o->min_bytes))
                goto bad;
            break;
        case 'b':
            if (parse_size(optarg, &o->max_bytes))
                goto bad;
            break;
        case 's':
            if (parse_int(optarg, 2, 1024, &v))
                goto bad;
            o->step = (unsigned)v;
            break;
        case 'n':
            if (parse_int(optarg, 1, MAX_ITERS, &o->iters))
                goto bad;
            break;
        case 'm':
            if (parse_int(optarg, 1, MAX_ITERS, &o->min_iters))
                goto bad;
            break;
        case 'w':
            if (parse_int(optarg, 0, 1000, &o->warmup))
                goto bad;
            break;
        case 't':
            o->time_per_size = strtod(optarg, &end);
            if (*end || end == optarg || !(o->time_per_size >= 0))
                goto bad;
            break;
        case 'T':
            o->tol = strtod(optarg, &end);
            if (*end || end == optarg || !(o->tol >= 0))
                goto bad;
            break;
        case 'z':
            if (parse_int(optarg, 1, 32, &o->zero_bits))
                goto bad;
            break;
        case 'i':
            o->in_place = 1;
            break;
        case 'c':
            o->csv = optarg;
            break;
        case 'l':
            o->label = optarg;
            break;
        case 'P':
            o->require_preload = optarg;
            break;
        case 'S':
            o->seed = strtoull(optarg, &end, 0);
            if (*end || end == optarg)
                goto bad;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'p':
            o->print_times = 1;
            break;
        case 'D':
            o->device = optarg;
            break;
        case 'G':
            o->stage = 1;
            break;
        case 'h':
            if (rank == 0)
                usage(stdout);
            return 1;
        default:
            if (rank == 0)
                fprintf(stderr, "apsmpi_bench: unknown option or missing argument: %s\n",
                        argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        if (rank == 0)
            fprintf(stderr, "apsmpi_bench: unexpected argument: %s\n", argv[optind]);
        return -1;
    }
    if (o->min_bytes < 4 || o->max_bytes < o->min_bytes) {
        if (rank == 0)
            fprintf(stderr, "apsmpi_bench: need 4 <= --min <= --max\n");
        return -1;
    }
    if (o->max_bytes / 4 > (size_t)INT32_MAX) {
        if (rank == 0)
            fprintf(stderr, "apsmpi_bench: --max too large for an int count\n");
        return -1;
    }
    if (o->min_iters > o->iters)
        o->min_iters = o->iters;
    if (o->stage && !o->device) {
        if (rank == 0)
            fprintf(stderr, "apsmpi_bench: --stage needs --device\n");
        return -1;
    }
    return 0;
bad:
    if (rank == 0)
        fprintf(stderr, "apsmpi_bench: bad value for --%s: '%s'\n", li >= 0 ? lo[li].name : "?",
                optarg ? optarg : "");
    return -1;
}

/* Is some mapped object's path containing `needle` present in this process? */
static int object_mapped(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f))
        if (strstr(line, needle))
            found = 1;
    fclose(f);
    return found;
}

/* Rank 0 prints what ran: np, op, options, hosts, the APSMPI_* environment and
 * the preloaded objects (and whether they are really mapped: ld.so only warns
 * about an LD_PRELOAD entry it cannot load). */
static void print_header(const struct options *o, int argc, char **argv)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    char *all = NULL;
    MPI_Get_processor_name(name, &len);
    name[len < MPI_MAX_PROCESSOR_NAME ? len : MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    if (rank == 0)
        all = malloc((size_t)nranks * MPI_MAX_PROCESSOR_NAME);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank != 0)
        return;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    MPI_Get_library_version(ver, &vlen);
    char *nl = strchr(ver, '\n');
    if (nl)
        *nl = '\0';
    char *comma = strchr(ver, ',');
    if (comma)
        *comma = '\0';
    printf("# apsmpi_bench: op=%s np=%d\n", op_names[o->op], nranks);
    printf("# command:");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n# sizes %zu..%zu bytes step x%u; iters %d..%d, warm-up %d, ~%.3g s/size; "
           "tol %g; in_place %d; zero_cost_bits %d; seed %llu\n",
           o->min_bytes, o->max_bytes, o->step, o->min_iters, o->iters, o->warmup,
           o->time_per_size, o->tol, o->in_place, o->zero_bits, (unsigned long long)o->seed);
    printf("# mpi: %s\n# hosts:", ver);
    for (int r = 0; r < nranks; r++)
        printf(" %s", all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
    printf("\n");
    free(all);
    int seen = 0;
    for (char **e = environ; *e; e++) {
        if (!strncmp(*e, "APSMPI_", 7)) {
            printf("# env: %s\n", *e);
            seen = 1;
        }
    }
    if (!seen)
        printf("# env: no APSMPI_* variables\n");
    const char *pre = getenv("LD_PRELOAD");
    if (pre && *pre) {
        char *copy = strdup(pre);
        char *save = NULL;
        for (char *t = strtok_r(copy, " :", &save); t; t = strtok_r(NULL, " :", &save)) {
            const char *base = strrchr(t, '/');
            base = base ? base + 1 : t;
            printf("# LD_PRELOAD: %s (%s)\n", t, object_mapped(base) ? "mapped" : "NOT MAPPED");
        }
        free(copy);
    } else {
        printf("# LD_PRELOAD: none\n");
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------------- */
/* one size                                                                  */

struct layout {
    size_t total;  /* elements of the reduced vector */
    int *counts;   /* recvcounts (reduce_scatter*), per rank */
    int *displs;   /* element offset of each rank's block */
    size_t mine;   /* elements of this rank's result */
    size_t mine_lo;/* its offset in the vector */
};

/* Sizes the vector and, for reduce-scatters, the per-rank blocks; for the
 * zero-cost bound, every count is scaled by W/32 and rounded up. */
static void make_layout(struct layout *L, enum op_kind op, size_t bytes, int zero_bits)
{
    size_t count = bytes / 4;
    if (count == 0)
        count = 1;
    if (op == OP_ALLREDUCE) {
        if (zero_bits)
            count = (count * (size_t)zero_bits + 31) / 32;
        L->total = count;
        L->mine = count;
        L->mine_lo = 0;
        return;
    }
    if (op == OP_REDUCE_SCATTER_BLOCK) {
        size_t block = count / (size_t)nranks;
        if (block == 0)
            block = 1;
        if (zero_bits)
            block = (block * (size_t)zero_bits + 31) / 32;
        for (int r = 0; r < nranks; r++) {
            L->counts[r] = (int)block;
            L->displs[r] = (int)(block * (size_t)r);
        }
    } else {
        /* deliberately uneven: rank r gets a share proportional to 3r+2, so
         * blocks differ in size and are rarely multiples of 4 elements */
        size_t wsum = 0, used = 0;
        for (int r = 0; r < nranks; r++)
            wsum += 3u * (size_t)r + 2u;
        for (int r = 0; r < nranks; r++) {
            size_t c = (r == nranks - 1) ? count - used : count * (3u * (size_t)r + 2u) / wsum;
            used += c;
            L->counts[r] = (int)c;
        }
        size_t off = 0;
        for (int r = 0; r < nranks; r++) {
            if (zero_bits)
                L->counts[r] = (int)(((size_t)L->counts[r] * (size_t)zero_bits + 31) / 32);
            L->displs[r] = (int)off;
            off += (size_t)L->counts[r];
        }
    }
    L->total = (size_t)L->displs[nranks - 1] + (size_t)L->counts[nranks - 1];
    L->mine = (size_t)L->counts[rank];
    L->mine_lo = (size_t)L->displs[rank];
}

static int do_call(const struct options *o, const struct layout *L, float *sbuf, float *rbuf)
{
    const void *s = o->in_place ? MPI_IN_PLACE : (const void *)sbuf;
    switch (o->op) {
    case OP_ALLREDUCE:
        return MPI_Allreduce(s, rbuf, (int)L->total, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case OP_REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block(s, rbuf, L->counts[0], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case OP_REDUCE_SCATTER:
        return MPI_Reduce_scatter(s, rbuf, L->counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    return MPI_ERR_OTHER;
}

/* The timed call on device buffers: MPI on the device pointers, or with --stage through
 * page-locked host copies. `result_elems`: the elements of the result in the receive buffer. */
static int do_device_call(const struct options *o, const struct layout *L, size_t result_elems)
{
    int rc;
    if (!o->stage)
        return do_call(o, L, d_send, d_recv);
    if (o->in_place ? dev->copy(h_recv, d_recv, L->total * sizeof(float), NULL)
                    : dev->copy(h_send, d_send, L->total * sizeof(float), NULL))
        return MPI_ERR_OTHER;
    dev->stream_sync(NULL);
    rc = do_call(o, L, h_send, h_recv);
    if (rc == MPI_SUCCESS && (dev->copy(d_recv, h_recv, result_elems * sizeof(float), NULL) || dev->stream_sync(NULL)))
        rc = MPI_ERR_OTHER;
    return rc;
}

/* Copies bytes between host and device and waits; aborts the job on failure. */
static void device_copy(void *dst, const void *src, size_t bytes)
{
    if (dev->copy(dst, src, bytes, NULL) || dev->stream_sync(NULL)) {
        fprintf(stderr, "apsmpi_bench: rank %d: a device copy failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* The plugin at path; exits 77 (skip) on every rank when it has no device. */
static const apsmpi_device_ops *load_device(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    apsmpi_device_plugin_fn get = h ? (apsmpi_device_plugin_fn)dlsym(h, APSMPI_DEVICE_PLUGIN_SYMBOL) : NULL;
    const apsmpi_device_ops *ops = get ? get() : NULL;
    if (ops == NULL) {
        if (rank == 0)
            fprintf(stderr, "apsmpi_bench: %s is not an apsmpi device plugin\n", path);
        MPI_Finalize();
        exit(2);
    }
    if (ops->device_count() < 1) {
        if (rank == 0)
            printf("apsmpi_bench: no %s device: nothing to measure\n", ops->name);
        MPI_Finalize();
        exit(77);
    }
    return ops;
}

static void *device_buffer(size_t bytes, int pinned_host)
{
    void *p = pinned_host ? dev->host_alloc(bytes) : dev->device_alloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "apsmpi_bench: rank %d: cannot allocate %zu bytes of %s memory\n", rank, bytes,
                pinned_host ? "page-locked" : "device");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void set_canary(float *p)
{
    uint32_t b = CANARY_BITS;
    for (int k = 0; k < CANARY_ELEMS; k++)
        memcpy(&p[k], &b, sizeof b);
}

static int canary_intact(const float *p)
{
    uint32_t b = CANARY_BITS;
    for (int k = 0; k < CANARY_ELEMS; k++)
        if (memcmp(&p[k], &b, sizeof b) != 0)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    struct options o;
    int failed = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* errors of MPI calls are reported and fail the run instead of aborting silently */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int pa = parse_args(argc, argv, &o);
    if (pa != 0) {
        if (pa < 0 && rank == 0)
            usage(stderr);
        MPI_Finalize();
        return pa < 0 ? 2 : 0;
    }
    if (o.device)
        dev = load_device(o.device);
    print_header(&o, argc, argv);

    if (o.require_preload) {
        int ok = object_mapped(o.require_preload), all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all_ok) {
            if (rank == 0)
                fprintf(stderr, "apsmpi_bench: FAIL: no mapped object matching '%s' on some rank "
                                "(LD_PRELOAD=%s)\n", o.require_preload,
                        getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
            MPI_Finalize();
            return 1;
        }
    }
    if (o.zero_bits && rank == 0) {
        const char *pre = getenv("LD_PRELOAD");
        if (pre && strstr(pre, "apsmpi"))
            fprintf(stderr, "apsmpi_bench: warning: zero-cost mode with %s preloaded: "
                            "the bound should run on plain MPI\n", pre);
    }

    char label[256];
    if (o.label)
        snprintf(label, sizeof label, "%s", o.label);
    else if (o.zero_bits)
        snprintf(label, sizeof label, "zero%d", o.zero_bits);
    else if (getenv("APSMPI_FORMAT") && getenv("LD_PRELOAD"))
        snprintf(label, sizeof label, "%s", getenv("APSMPI_FORMAT"));
    else
        snprintf(label, sizeof label, "mpi");

    FILE *csv = NULL;
    if (o.csv && rank == 0) {
        csv = fopen(o.csv, "a");
        if (!csv) {
            fprintf(stderr, "apsmpi_bench: cannot open %s: %s\n", o.csv, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (ftell(csv) == 0)
            fprintf(csv, "op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label\n");
    }

    /* size list */
    size_t nsizes = 0, sizes[128];
    for (size_t b = o.min_bytes; b <= o.max_bytes && nsizes < 127; b *= o.step) {
        sizes[nsizes++] = b;
        if (b > o.max_bytes / o.step)
            break;
    }
    if (sizes[nsizes - 1] != o.max_bytes)
        sizes[nsizes++] = o.max_bytes;

    /* buffers, once, at the largest size; reduce_scatter's uneven split and the
     * block rounding never exceed the byte count (+N elements) */
    size_t maxcount = o.max_bytes / 4 + (size_t)nranks + 1;
    float *sbuf = alloc_touched(maxcount * sizeof(float));
    float *rbuf = alloc_touched((maxcount + CANARY_ELEMS) * sizeof(float));
    double *ref = o.zero_bits ? NULL : alloc_touched(maxcount * sizeof(double));
    double *times = malloc(MAX_ITERS * sizeof(double));
    double *tmax = malloc(MAX_ITERS * sizeof(double));
    struct layout L;
    L.counts = malloc((size_t)nranks * sizeof(int));
    L.displs = malloc((size_t)nranks * sizeof(int));
    if (!times || !tmax || !L.counts || !L.displs) {
        fprintf(stderr, "apsmpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (dev) {
        d_send = device_buffer(maxcount * sizeof(float), 0);
        d_recv = device_buffer((maxcount + CANARY_ELEMS) * sizeof(float), 0);
        if (o.stage) {
            h_send = device_buffer(maxcount * sizeof(float), 1);
            h_recv = device_buffer((maxcount + CANARY_ELEMS) * sizeof(float), 1);
        }
    }

    double busfactor = o.op == OP_ALLREDUCE ? 2.0 * (nranks - 1) / nranks : (double)(nranks - 1) / nranks;
    if (rank == 0 && !o.quiet) {
        printf("# %12s %11s %5s %12s %12s %10s %10s %10s\n", "bytes", "count", "iters", "time_us",
               "min_us", "algbw_GB/s", "busbw_GB/s", "err");
        fflush(stdout);
    }

    for (size_t si = 0; si < nsizes; si++) {
        size_t bytes = sizes[si];
        struct layout R; /* the real layout: what the reported bytes mean */
        R.counts = L.counts;
        R.displs = L.displs;
        make_layout(&R, o.op, bytes, 0);
        size_t real_total = R.total;
        make_layout(&L, o.op, bytes, o.zero_bits);
        bytes = real_total * sizeof(float);
        struct gen_seeds seeds = make_seeds(o.seed, real_total, o.op);

        /* inputs and, in normal mode, the reference for this rank's result */
        gen_range(sbuf, &seeds, rank, 0, L.total);
        if (dev)
            device_copy(d_send, sbuf, L.total * sizeof(float));
        double refmax = 0.0;
        if (!o.zero_bits)
            refmax = ref_range(ref, &seeds, L.mine_lo, L.mine_lo + L.mine);

        int warm = o.warmup;
        if (bytes >= (16u << 20) && warm > 1)
            warm = 1;
        double maxdiff = 0.0, nonfinite = 0.0, canary_bad = 0.0, mpi_err = 0.0;
        int iters = 0;
        double twarm = 0.0;
        for (int it = 0; it < warm + iters || it == 0; it++) {
            int timed = it >= warm;
            float *result = rbuf;
            if (o.in_place)
                memcpy(rbuf, sbuf, L.total * sizeof(float));
            size_t result_elems = o.in_place ? L.total : L.mine;
            set_canary(rbuf + result_elems);
            if (dev)
                device_copy(d_recv, rbuf, (result_elems + CANARY_ELEMS) * sizeof(float));
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            int rc = dev ? do_device_call(&o, &L, result_elems) : do_call(&o, &L, sbuf, rbuf);
            double t = MPI_Wtime() - t0;
            if (dev)
                device_copy(rbuf, d_recv, (result_elems + CANARY_ELEMS) * sizeof(float));
            if (rc != MPI_SUCCESS)
                mpi_err = 1.0;
            if (timed)
                times[it - warm] = t;
            else
                twarm = t;
            if (!canary_intact(rbuf + (o.in_place ? L.total : L.mine)))
                canary_bad = 1.0;
            if (!o.zero_bits) {
                for (size_t k = 0; k < L.mine; k++) {
                    double r = (double)result[k];
                    if (!isfinite(r)) {
                        nonfinite += 1.0;
                        continue;
                    }
                    double d = fabs(r - ref[k]);
                    if (d > maxdiff)
                        maxdiff = d;
                }
            }
            if (it == warm - 1 || (warm == 0 && it == 0 && iters == 0)) {
                /* decide the iteration count from the slowest rank's last
                 * warm-up (or the first timed call) so all ranks agree */
                double tw = warm ? twarm : t, tall = 0.0;
                MPI_Allreduce(&tw, &tall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                double n = tall > 0 ? o.time_per_size / tall : o.iters;
                iters = n >= o.iters ? o.iters : (n <= o.min_iters ? o.min_iters : (int)n);
            }
        }
        MPI_Allreduce(times, tmax, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (o.print_times && rank == 0) {
            printf("# times_us %zu:", bytes);
            for (int k = 0; k < iters; k++)
                printf(" %.0f", tmax[k] * 1e6);
            printf("\n");
        }
        qsort(tmax, (size_t)iters, sizeof(double), cmp_double);
        double med = (iters % 2) ? tmax[iters / 2] : 0.5 * (tmax[iters / 2 - 1] + tmax[iters / 2]);
        double tmin = tmax[0];

        double sendbuf_bad = 0.0;
        if (dev && !o.in_place)
            device_copy(sbuf, d_send, L.total * sizeof(float));
        if (!o.in_place && count_input_mismatch(sbuf, &seeds, rank, 0, L.total) != 0)
            sendbuf_bad = 1.0;
        double loc[6] = {maxdiff, refmax, nonfinite, canary_bad, sendbuf_bad, mpi_err}, glob[6];
        MPI_Allreduce(loc, glob, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

        double err = glob[1] > 0 ? glob[0] / glob[1] : (glob[0] > 0 ? INFINITY : 0.0);
        if (glob[2] > 0)
            err = INFINITY;
        double algbw = (double)bytes / med / 1e9;
        double busbw = algbw * busfactor;
        if (rank == 0) {
            char errs[32];
            if (o.zero_bits)
                snprintf(errs, sizeof errs, "-");
            else
                snprintf(errs, sizeof errs, "%.3e", err);
            if (!o.quiet)
                printf("  %12zu %11zu %5d %12.1f %12.1f %10.4f %10.4f %10s\n", bytes, real_total, iters,
                       med * 1e6, tmin * 1e6, algbw, busbw, errs);
            if (glob[5] > 0) {
                printf("FAIL: %s of %zu bytes: an MPI call returned an error\n", op_names[o.op], bytes);
                failed = 1;
            }
            if (!o.zero_bits && (glob[2] > 0 || !(err <= o.tol))) {
                printf("FAIL: %s of %zu bytes: error %.3e exceeds tolerance %g%s\n", op_names[o.op], bytes,
                       err, o.tol, glob[2] > 0 ? " (non-finite values in the result)" : "");
                failed = 1;
            }
            if (glob[3] > 0) {
                printf("FAIL: %s of %zu bytes: receive buffer written past the result\n", op_names[o.op],
                       bytes);
                failed = 1;
            }
            if (glob[4] > 0) {
                printf("FAIL: %s of %zu bytes: send buffer was modified\n", op_names[o.op], bytes);
                failed = 1;
            }
            if (csv) {
                fprintf(csv, "%s,%d,%zu,%.9g,%.6g,%.6g,", op_names[o.op], nranks, bytes, med, algbw, busbw);
                if (!o.zero_bits)
                    fprintf(csv, "%.6g", err);
                fputc(',', csv);
                if (strpbrk(label, ",\"\n")) {
                    fputc('"', csv);
                    for (const char *p = label; *p; p++) {
                        if (*p == '"')
                            fputc('"', csv);
                        fputc(*p, csv);
                    }
                    fputc('"', csv);
                } else {
                    fputs(label, csv);
                }
                fputc('\n', csv);
                fflush(csv);
            }
            fflush(stdout);
        }
    }
    if (csv)
        fclose(csv);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# %s\n", failed ? "FAILED" : "done");
    free(sbuf);
    free(rbuf);
    free(ref);
    free(times);
    free(tmax);
    free(L.counts);
    free(L.displs);
    if (dev) {
        dev->device_free(d_send);
        dev->device_free(d_recv);
        if (h_send) {
            dev->host_free(h_send);
            dev->host_free(h_recv);
        }
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
