/* apsmpi_bench.c: plain-MPI bandwidth and accuracy benchmark for MPI_Allreduce / MPI_Reduce_scatter(_block) on MPI_FLOAT/MPI_SUM. */
/*
 * It is an ordinary MPI program that does not link apsmpi, so the same binary
 * measures plain MPI and, with LD_PRELOAD=libapsmpi.so, the library (for --device
 * it loads an apsmpi device plugin itself, through src/device/device_plugin.h).
 * For every message size of a sweep it
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
 * ceil(count*W/32) floats (the bytes a W-bit format would move; W in quarter
 * bits, so that 4.25 is MXFP4's 4 bits and a scale byte per 32) with no codec
 * at all; the row still reports the original bytes, so its bandwidth is the
 * best any W-bit compression could reach.  No result check in that mode.
 *
 * --device PLUGIN puts the send and receive buffers in device memory of an apsmpi
 * device plugin (libapsmpi_cuda.so: a GPU), filled and read back outside the timed
 * region. The timed call is then MPI_* on the device pointers (for apsmpi's device
 * path), or with --stage what a job does without a CUDA-aware MPI: copy the input to
 * page-locked host memory, MPI_* there, copy the result back, all inside the timing.
 *
 * Build:  make apps/apsmpi_bench (Makefile.am: --enable-apps, the default); by hand,
 *         mpicc -O3 -Wall -Wextra -Isrc apps/apsmpi_bench.c -o apsmpi_bench -lm -ldl
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
    int zero_qbits; /* --zero-cost-bits in quarter bits (0: off) */
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

/* A width of 1 to 32 bits in steps of a quarter bit ("8", "4.25"), in quarter bits. */
static int parse_quarter_bits(const char *s, int *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 1.0 && v <= 32.0) || v * 4.0 != (double)(int)(v * 4.0))
        return -1;
    *out = (int)(v * 4.0);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: apsmpi_bench [options]\n"
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
               "                      (W 1 to 32 in steps of 0.25: 4.25 for MXFP4)\n"
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

static const struct option long_options[] = {{"op", required_argument, 0, 'o'},
                                             {"min", required_argument, 0, 'a'},
                                             {"max", required_argument, 0, 'b'},
                                             {"step", required_argument, 0, 's'},
                                             {"iters", required_argument, 0, 'n'},
                                             {"min-iters", required_argument, 0, 'm'},
                                             {"warmup", required_argument, 0, 'w'},
                                             {"time-per-size", required_argument, 0, 't'},
                                             {"tol", required_argument, 0, 'T'},
                                             {"zero-cost-bits", required_argument, 0, 'z'},
                                             {"in-place", no_argument, 0, 'i'},
                                             {"csv", required_argument, 0, 'c'},
                                             {"label", required_argument, 0, 'l'},
                                             {"require-preload", required_argument, 0, 'P'},
                                             {"seed", required_argument, 0, 'S'},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"print-times", no_argument, 0, 'p'},
                                             {"help", no_argument, 0, 'h'},
                                             {"device", required_argument, 0, 'D'},
                                             {"stage", no_argument, 0, 'G'},
                                             {0, 0, 0, 0}};

static void set_defaults(struct options *o)
{
    memset(o, 0, sizeof *o);
    o->op = OP_ALLREDUCE;
    o->min_bytes = 4096;
    o->max_bytes = 256u << 20;
    o->step = 4;
    o->iters = 20;
    o->min_iters = 3;
    o->warmup = 2;
    o->time_per_size = 3.0;
    o->tol = 1e-5;
    o->seed = 1;
}

static int parse_op(const char *s, enum op_kind *out)
{
    for (int k = 0; k < (int)(sizeof op_names / sizeof op_names[0]); k++) {
        if (!strcmp(s, op_names[k])) {
            *out = (enum op_kind)k;
            return 0;
        }
    }
    return -1;
}

/* a number >= 0 */
static int parse_nonnegative(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || end == s || !(v >= 0))
        return -1;
    *out = v;
    return 0;
}

static int parse_seed(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end || end == s)
        return -1;
    *out = v;
    return 0;
}

static int parse_step(const char *s, unsigned *out)
{
    int v;
    if (parse_int(s, 2, 1024, &v))
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Applies one option (getopt's code c) with its argument; -1 if the value is not valid. */
static int apply_option(struct options *o, int c, const char *arg)
{
    switch (c) {
    case 'o':
        return parse_op(arg, &o->op);
    case 'a':
        return parse_size(arg, &o->min_bytes);
    case 'b':
        return parse_size(arg, &o->max_bytes);
    case 's':
        return parse_step(arg, &o->step);
    case 'n':
        return parse_int(arg, 1, MAX_ITERS, &o->iters);
    case 'm':
        return parse_int(arg, 1, MAX_ITERS, &o->min_iters);
    case 'w':
        return parse_int(arg, 0, 1000, &o->warmup);
    case 't':
        return parse_nonnegative(arg, &o->time_per_size);
    case 'T':
        return parse_nonnegative(arg, &o->tol);
    case 'z':
        return parse_quarter_bits(arg, &o->zero_qbits);
    case 'S':
        return parse_seed(arg, &o->seed);
    case 'i':
        o->in_place = 1;
        return 0;
    case 'c':
        o->csv = arg;
        return 0;
    case 'l':
        o->label = arg;
        return 0;
    case 'P':
        o->require_preload = arg;
        return 0;
    case 'q':
        o->quiet = 1;
        return 0;
    case 'p':
        o->print_times = 1;
        return 0;
    case 'D':
        o->device = arg;
        return 0;
    case 'G':
        o->stage = 1;
        return 0;
    }
    return -1;
}

/* Checks the options together; says what is wrong (rank 0) and returns -1, or 0. */
static int check_options(struct options *o)
{
    const char *why = NULL;
    if (o->min_bytes < 4 || o->max_bytes < o->min_bytes)
        why = "need 4 <= --min <= --max";
    else if (o->max_bytes / 4 > (size_t)INT32_MAX)
        why = "--max too large for an int count";
    else if (o->stage && !o->device)
        why = "--stage needs --device";
    if (why) {
        if (rank == 0)
            fprintf(stderr, "apsmpi_bench: %s\n", why);
        return -1;
    }
    if (o->min_iters > o->iters)
        o->min_iters = o->iters;
    return 0;
}

/* Fills *o from the command line. Returns 0, 1 after --help, or -1 on a usage error (said
 * on rank 0). */
static int parse_args(int argc, char **argv, struct options *o)
{
    int c, li = -1;
    set_defaults(o);
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", long_options, &li)) != -1) {
        if (c == 'h') {
            if (rank == 0)
                usage(stdout);
            return 1;
        }
        if (c == '?' || c == ':') {
            if (rank == 0)
                fprintf(stderr, "apsmpi_bench: unknown option or missing argument: %s\n", argv[optind - 1]);
            return -1;
        }
        if (apply_option(o, c, optarg) != 0) {
            if (rank == 0)
                fprintf(stderr, "apsmpi_bench: bad value for --%s: '%s'\n", li >= 0 ? long_options[li].name : "?",
                        optarg ? optarg : "");
            return -1;
        }
    }
    if (optind < argc) {
        if (rank == 0)
            fprintf(stderr, "apsmpi_bench: unexpected argument: %s\n", argv[optind]);
        return -1;
    }
    return check_options(o);
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

/* Rank 0: the APSMPI_* environment and the preloaded objects, each said to be mapped or not. */
static void print_environment(void)
{
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
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
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
           "tol %g; in_place %d; zero_cost_bits %g; seed %llu\n",
           o->min_bytes, o->max_bytes, o->step, o->min_iters, o->iters, o->warmup, o->time_per_size, o->tol,
           o->in_place, o->zero_qbits / 4.0, (unsigned long long)o->seed);
    printf("# mpi: %s\n# hosts:", ver);
    for (int r = 0; r < nranks; r++)
        printf(" %s", all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
    printf("\n");
    free(all);
    print_environment();
}

/* ------------------------------------------------------------------------- */
/* one size                                                                  */

struct layout {
    size_t total;   /* elements of the reduced vector */
    int *counts;    /* recvcounts (reduce_scatter*), per rank */
    int *displs;    /* element offset of each rank's block */
    size_t mine;    /* elements of this rank's result */
    size_t mine_lo; /* its offset in the vector */
};

/* Sizes the vector and, for reduce-scatters, the per-rank blocks; for the
 * zero-cost bound, every count is scaled by W/32 (zero_qbits/128) and rounded up. */
static void make_layout(struct layout *L, enum op_kind op, size_t bytes, int zero_qbits)
{
    size_t count = bytes / 4;
    if (count == 0)
        count = 1;
    if (op == OP_ALLREDUCE) {
        if (zero_qbits)
            count = (count * (size_t)zero_qbits + 127) / 128;
        L->total = count;
        L->mine = count;
        L->mine_lo = 0;
        return;
    }
    if (op == OP_REDUCE_SCATTER_BLOCK) {
        size_t block = count / (size_t)nranks;
        if (block == 0)
            block = 1;
        if (zero_qbits)
            block = (block * (size_t)zero_qbits + 127) / 128;
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
            if (zero_qbits)
                L->counts[r] = (int)(((size_t)L->counts[r] * (size_t)zero_qbits + 127) / 128);
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

/* ------------------------------------------------------------------------- */
/* the sweep                                                                 */

/* Host buffers, sized once for the largest size, and the timing arrays. */
struct buffers {
    float *send, *recv; /* recv has CANARY_ELEMS more */
    double *ref;        /* the reference of this rank's result (none in zero-cost mode) */
    double *times;      /* this rank's timed iterations */
    double *slowest;    /* the slowest rank's time of each iteration */
    struct layout L;    /* the layout of the call (scaled in zero-cost mode) */
};

/* One size of the sweep, set up. */
struct size_run {
    size_t bytes;      /* the reported size: bytes of the real (unscaled) vector */
    size_t real_total; /* its elements */
    struct gen_seeds seeds;
    double refmax; /* max |reference| of this rank's result */
};

/* What the iterations of one size found on this rank (1.0 for a yes, as the MAX reduction
 * of all ranks' findings takes doubles). */
struct findings {
    double maxdiff, nonfinite, canary_bad, mpi_err;
};

/* The slowest rank's median and fastest time of one size. */
struct timing {
    int iters;
    double median, min;
};

/* What rank 0 reports for one size: the findings of all ranks combined. */
struct verdict {
    double err; /* max|r-ref|/max|ref|, inf with non-finite results */
    int nonfinite, canary_bad, sendbuf_bad, mpi_err;
};

/* --require-preload: is the object mapped on every rank? Says so on rank 0 when not. */
static int preload_present(const struct options *o)
{
    int ok, all_ok = 0;
    if (!o->require_preload)
        return 1;
    ok = object_mapped(o->require_preload);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok && rank == 0)
        fprintf(stderr,
                "apsmpi_bench: FAIL: no mapped object matching '%s' on some rank "
                "(LD_PRELOAD=%s)\n",
                o->require_preload, getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
    return all_ok;
}

/* The zero-cost bound is plain MPI's: warn when the library is preloaded into it. */
static void warn_zero_cost_preload(const struct options *o)
{
    const char *pre = getenv("LD_PRELOAD");
    if (o->zero_qbits && rank == 0 && pre && strstr(pre, "apsmpi"))
        fprintf(stderr,
                "apsmpi_bench: warning: zero-cost mode with %s preloaded: "
                "the bound should run on plain MPI\n",
                pre);
}

/* The CSV's label column: --label, zeroW, the preloaded library's format, or mpi. */
static void make_label(const struct options *o, char *label, size_t len)
{
    if (o->label)
        snprintf(label, len, "%s", o->label);
    else if (o->zero_qbits)
        snprintf(label, len, "zero%g", o->zero_qbits / 4.0);
    else if (getenv("APSMPI_FORMAT") && getenv("LD_PRELOAD"))
        snprintf(label, len, "%s", getenv("APSMPI_FORMAT"));
    else
        snprintf(label, len, "mpi");
}

/* --csv on rank 0: the file opened for appending, with the header when it is new. */
static FILE *open_csv(const struct options *o)
{
    FILE *csv;
    if (!o->csv || rank != 0)
        return NULL;
    csv = fopen(o->csv, "a");
    if (!csv) {
        fprintf(stderr, "apsmpi_bench: cannot open %s: %s\n", o->csv, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (ftell(csv) == 0)
        fprintf(csv, "op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label\n");
    return csv;
}

/* The sizes of the sweep: min, min*step, ... up to max, and max itself. Returns their number. */
static size_t size_list(const struct options *o, size_t sizes[128])
{
    size_t n = 0;
    for (size_t b = o->min_bytes; b <= o->max_bytes && n < 127; b *= o->step) {
        sizes[n++] = b;
        if (b > o->max_bytes / o->step)
            break;
    }
    if (sizes[n - 1] != o->max_bytes)
        sizes[n++] = o->max_bytes;
    return n;
}

/* Buffers, once, at the largest size; reduce_scatter's uneven split and the block rounding
 * never exceed the byte count (+N elements). With --device, device buffers of the same sizes
 * (and with --stage page-locked host ones). */
static void alloc_buffers(const struct options *o, struct buffers *b)
{
    size_t maxcount = o->max_bytes / 4 + (size_t)nranks + 1;
    b->send = alloc_touched(maxcount * sizeof(float));
    b->recv = alloc_touched((maxcount + CANARY_ELEMS) * sizeof(float));
    b->ref = o->zero_qbits ? NULL : alloc_touched(maxcount * sizeof(double));
    b->times = malloc(MAX_ITERS * sizeof(double));
    b->slowest = malloc(MAX_ITERS * sizeof(double));
    b->L.counts = malloc((size_t)nranks * sizeof(int));
    b->L.displs = malloc((size_t)nranks * sizeof(int));
    if (!b->times || !b->slowest || !b->L.counts || !b->L.displs) {
        fprintf(stderr, "apsmpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (dev) {
        d_send = device_buffer(maxcount * sizeof(float), 0);
        d_recv = device_buffer((maxcount + CANARY_ELEMS) * sizeof(float), 0);
        if (o->stage) {
            h_send = device_buffer(maxcount * sizeof(float), 1);
            h_recv = device_buffer((maxcount + CANARY_ELEMS) * sizeof(float), 1);
        }
    }
}

static void free_buffers(struct buffers *b)
{
    free(b->send);
    free(b->recv);
    free(b->ref);
    free(b->times);
    free(b->slowest);
    free(b->L.counts);
    free(b->L.displs);
    if (dev) {
        dev->device_free(d_send);
        dev->device_free(d_recv);
        if (h_send) {
            dev->host_free(h_send);
            dev->host_free(h_recv);
        }
    }
}

/* Lays out one size, generates this rank's input (also on the device) and, unless in
 * zero-cost mode, the reference of its result. */
static void prepare_size(const struct options *o, struct buffers *b, size_t bytes, struct size_run *run)
{
    struct layout R = b->L; /* the real layout, for what the reported bytes mean */
    make_layout(&R, o->op, bytes, 0);
    run->real_total = R.total;
    make_layout(&b->L, o->op, bytes, o->zero_qbits);
    run->bytes = run->real_total * sizeof(float);
    run->seeds = make_seeds(o->seed, run->real_total, o->op);
    gen_range(b->send, &run->seeds, rank, 0, b->L.total);
    if (dev)
        device_copy(d_send, b->send, b->L.total * sizeof(float));
    run->refmax = o->zero_qbits ? 0.0 : ref_range(b->ref, &run->seeds, b->L.mine_lo, b->L.mine_lo + b->L.mine);
}

/* Compares this rank's result with the reference. */
static void check_result(const struct buffers *b, struct findings *f)
{
    for (size_t k = 0; k < b->L.mine; k++) {
        double r = (double)b->recv[k];
        if (!isfinite(r)) {
            f->nonfinite += 1.0;
            continue;
        }
        double d = fabs(r - b->ref[k]);
        if (d > f->maxdiff)
            f->maxdiff = d;
    }
}

/* One call, after a barrier: returns its time on this rank and adds what it found to *f. */
static double run_one_call(const struct options *o, struct buffers *b, struct findings *f)
{
    const struct layout *L = &b->L;
    size_t result_elems = o->in_place ? L->total : L->mine;
    if (o->in_place)
        memcpy(b->recv, b->send, L->total * sizeof(float));
    set_canary(b->recv + result_elems);
    if (dev)
        device_copy(d_recv, b->recv, (result_elems + CANARY_ELEMS) * sizeof(float));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = dev ? do_device_call(o, L, result_elems) : do_call(o, L, b->send, b->recv);
    double t = MPI_Wtime() - t0;
    if (dev)
        device_copy(b->recv, d_recv, (result_elems + CANARY_ELEMS) * sizeof(float));
    if (rc != MPI_SUCCESS)
        f->mpi_err = 1.0;
    if (!canary_intact(b->recv + result_elems))
        f->canary_bad = 1.0;
    if (!o->zero_qbits)
        check_result(b, f);
    return t;
}

/* The number of timed iterations, from the slowest rank's time t of one call, so that all
 * ranks agree: about --time-per-size seconds, within --min-iters..--iters. */
static int agreed_iters(const struct options *o, double t)
{
    double tall = 0.0;
    MPI_Allreduce(&t, &tall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double n = tall > 0 ? o->time_per_size / tall : o->iters;
    return n >= o->iters ? o->iters : (n <= o->min_iters ? o->min_iters : (int)n);
}

/* The warm-up calls (one only from 16 MiB), then the timed ones into b->times; the count is
 * decided from the last warm-up call (or the first timed one). Returns the timed count. */
static int run_iterations(const struct options *o, struct buffers *b, const struct size_run *run, struct findings *f)
{
    int warm = o->warmup, iters = 0;
    if (run->bytes >= (16u << 20) && warm > 1)
        warm = 1;
    for (int it = 0; it < warm + iters || it == 0; it++) {
        double t = run_one_call(o, b, f);
        if (it >= warm)
            b->times[it - warm] = t;
        if (it == warm - 1 || (warm == 0 && it == 0 && iters == 0))
            iters = agreed_iters(o, t);
    }
    return iters;
}

/* The slowest rank's time per iteration; its median and minimum (--print-times: all). */
static struct timing slowest_times(const struct options *o, struct buffers *b, int iters, size_t bytes)
{
    struct timing tm;
    double *tmax = b->slowest;
    MPI_Allreduce(b->times, tmax, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (o->print_times && rank == 0) {
        printf("# times_us %zu:", bytes);
        for (int k = 0; k < iters; k++)
            printf(" %.0f", tmax[k] * 1e6);
        printf("\n");
    }
    qsort(tmax, (size_t)iters, sizeof(double), cmp_double);
    tm.iters = iters;
    tm.median = (iters % 2) ? tmax[iters / 2] : 0.5 * (tmax[iters / 2 - 1] + tmax[iters / 2]);
    tm.min = tmax[0];
    return tm;
}

/* Checks the send buffer and combines every rank's findings (a MAX reduction). */
static struct verdict combine_findings(const struct options *o, const struct buffers *b, const struct size_run *run,
                                       const struct findings *f)
{
    struct verdict v;
    double sendbuf_bad = 0.0;
    if (dev && !o->in_place)
        device_copy(b->send, d_send, b->L.total * sizeof(float));
    if (!o->in_place && count_input_mismatch(b->send, &run->seeds, rank, 0, b->L.total) != 0)
        sendbuf_bad = 1.0;
    double loc[6] = {f->maxdiff, run->refmax, f->nonfinite, f->canary_bad, sendbuf_bad, f->mpi_err}, glob[6];
    MPI_Allreduce(loc, glob, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    v.err = glob[1] > 0 ? glob[0] / glob[1] : (glob[0] > 0 ? INFINITY : 0.0);
    if (glob[2] > 0)
        v.err = INFINITY;
    v.nonfinite = glob[2] > 0;
    v.canary_bad = glob[3] > 0;
    v.sendbuf_bad = glob[4] > 0;
    v.mpi_err = glob[5] > 0;
    return v;
}

/* A CSV row: op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label (the label quoted as needed). */
static void write_csv_row(FILE *csv, const struct options *o, size_t bytes, const struct timing *tm, double algbw,
                          double busbw, double err, const char *label)
{
    fprintf(csv, "%s,%d,%zu,%.9g,%.6g,%.6g,", op_names[o->op], nranks, bytes, tm->median, algbw, busbw);
    if (!o->zero_qbits)
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

/* Rank 0: the table row, a FAIL line per failed check, the CSV row. Returns 1 if a check
 * failed. */
static int report_size(const struct options *o, const struct size_run *run, const struct timing *tm,
                       const struct verdict *v, FILE *csv, const char *label)
{
    const char *op = op_names[o->op];
    double busfactor = o->op == OP_ALLREDUCE ? 2.0 * (nranks - 1) / nranks : (double)(nranks - 1) / nranks;
    double algbw = (double)run->bytes / tm->median / 1e9, busbw = algbw * busfactor;
    int failed = 0;
    char errs[32];
    if (o->zero_qbits)
        snprintf(errs, sizeof errs, "-");
    else
        snprintf(errs, sizeof errs, "%.3e", v->err);
    if (!o->quiet)
        printf("  %12zu %11zu %5d %12.1f %12.1f %10.4f %10.4f %10s\n", run->bytes, run->real_total, tm->iters,
               tm->median * 1e6, tm->min * 1e6, algbw, busbw, errs);
    if (v->mpi_err) {
        printf("FAIL: %s of %zu bytes: an MPI call returned an error\n", op, run->bytes);
        failed = 1;
    }
    if (!o->zero_qbits && (v->nonfinite || !(v->err <= o->tol))) {
        printf("FAIL: %s of %zu bytes: error %.3e exceeds tolerance %g%s\n", op, run->bytes, v->err, o->tol,
               v->nonfinite ? " (non-finite values in the result)" : "");
        failed = 1;
    }
    if (v->canary_bad) {
        printf("FAIL: %s of %zu bytes: receive buffer written past the result\n", op, run->bytes);
        failed = 1;
    }
    if (v->sendbuf_bad) {
        printf("FAIL: %s of %zu bytes: send buffer was modified\n", op, run->bytes);
        failed = 1;
    }
    if (csv)
        write_csv_row(csv, o, run->bytes, tm, algbw, busbw, v->err, label);
    fflush(stdout);
    return failed;
}

/* Measures and checks one size on every rank; rank 0 reports it. Returns 1 if a check failed
 * (on rank 0). */
static int measure_size(const struct options *o, struct buffers *b, size_t bytes, FILE *csv, const char *label)
{
    struct size_run run;
    struct findings f = {0, 0, 0, 0};
    prepare_size(o, b, bytes, &run);
    int iters = run_iterations(o, b, &run, &f);
    struct timing tm = slowest_times(o, b, iters, run.bytes);
    struct verdict v = combine_findings(o, b, &run, &f);
    return rank == 0 ? report_size(o, &run, &tm, &v, csv, label) : 0;
}

static void print_table_header(const struct options *o)
{
    if (rank == 0 && !o->quiet) {
        printf("# %12s %11s %5s %12s %12s %10s %10s %10s\n", "bytes", "count", "iters", "time_us", "min_us",
               "algbw_GB/s", "busbw_GB/s", "err");
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    struct options o;
    struct buffers b;
    size_t nsizes, sizes[128];
    char label[256];
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
    if (!preload_present(&o)) {
        MPI_Finalize();
        return 1;
    }
    warn_zero_cost_preload(&o);
    make_label(&o, label, sizeof label);
    FILE *csv = open_csv(&o);
    nsizes = size_list(&o, sizes);
    alloc_buffers(&o, &b);
    print_table_header(&o);
    for (size_t si = 0; si < nsizes; si++)
        failed |= measure_size(&o, &b, sizes[si], csv, label);
    if (csv)
        fclose(csv);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# %s\n", failed ? "FAILED" : "done");
    free_buffers(&b);
    MPI_Finalize();
    return failed ? 1 : 0;
}
