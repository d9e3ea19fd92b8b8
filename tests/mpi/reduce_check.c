/* reduce_check.c: an MPI program (it does not link apsmpi; --device loads a device plugin) that reduces test data and checks the result.
 *
 * It fills each rank's buffer with gradient-like values whose magnitude changes from one
 * "layer" to the next, runs one reduction, and compares the result with a double-precision
 * sum that every rank computes itself (each rank can regenerate every rank's input). The
 * bound it checks: for element i, |result_i - exact_i| <= tol * N * B_i, where N is the
 * rank count and B_i the largest |input| of any rank in i's scaling block (--block). It also
 * prints a checksum of the result bits, so that a script can compare a run with and without
 * the library bit for bit.
 *
 * usage: reduce_check [--op allreduce|reduce_scatter|reduce_scatter_block] [--count N]
 *        [--type float|double|int] [--mpi-op sum|max|user] [--in-place] [--intercomm]
 *        [--uniform] [--block B] [--tol T] [--expect-inexact] [--nonfinite] [--threads T]
 *        [--repeat R] [--zero-count] [--device PLUGIN] [--maps-check] [--ones] [--rel-l2 T]
 *        [--identical] [--alias] [--name NAME] [--split] [--errors-return] [--fortran-init]
 *        [--overflow] [--scale S]
 *
 * --ones: every input is 1.0, so the exact sum is the rank count (the check then wants the
 * bound --tol 0: exact). --rel-l2 T: also fails if the relative L2 error of the result
 * against the exact sum, ||result - exact|| / ||exact||, is above T (it is printed too).
 * --identical: fails unless every rank's allreduce result has the same bits.
 * --scale S: every input times S (in double, then rounded to float).
 * --overflow: sums that overflow FP32 or come near FP32's largest value (issue 18, defect 2):
 * every rank's x[i] is 1e37 (even i) or 2e37 (odd i), x[100] = 3e38 and x[200] = -3e38 (+inf
 * and -inf from 2 ranks on), x[5000] = 1.7e38 (3.4e38, finite, from 2 ranks; +inf from 3),
 * x[9000] = 3.3e38 on rank 0 and -3.3e38 on rank 1 (cancelling: 1e37 or 0 in any order).
 *
 * Any run: where the exact sum rounds to inf in FP32 the result must be that inf (plain MPI's
 * on 2 ranks, and on more for these inputs, whose partial sums overflow in any order); those
 * elements are left out of the bound and of the L2 error. A result that is inf or NaN where
 * the sum is finite is an error above any bound.
 *
 * --device PLUGIN: the buffers handed to MPI are device memory of an apsmpi device plugin
 * (libapsmpi_cuda.so: a GPU; the test's mock_device.so: checked host memory), filled and
 * read back through the plugin's copies. With --probe it only says whether the plugin has a
 * device (exit 0) or not (exit 77), without starting MPI.
 * --device-side send|recv: only that buffer is device memory, the other one host memory.
 * --maps-check: fails if any CUDA library or apsmpi's CUDA plugin is mapped in the process.
 * --errors-return: MPI_ERRORS_RETURN on the communicator; a call that returns an error is
 * said on stdout ("call K returned an error") and not checked, the next calls are.
 * --name NAME: the reduction runs on a duplicate of MPI_COMM_WORLD named NAME.
 * --split: the reduction runs on MPI_Comm_split(MPI_COMM_WORLD, 0, rank): every rank, in a
 * communicator that MPI_Comm_split made (Open MPI attaches no MPI_TAG_UB to those).
 * --alias: the send buffer is the receive buffer (not MPI_IN_PLACE), which MPI reports as an
 * error: each rank prints the error class it got (MPI_ERRORS_RETURN) instead of checking.
 * --fortran-init: only calls the Fortran entry mpi_init_f08_ that a preloaded libapsmpi.so
 * exports, in this process that has no MPI Fortran library (it should end the job, since the
 * MPI's own Fortran entry is missing), and says so if it returns.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device_plugin.h"

struct options {
    const char *op;
    long count; /* elements over all ranks for reduce-scatters, per rank for allreduce */
    const char *type;
    const char *mpi_op;
    int in_place, intercomm, uniform, expect_inexact, nonfinite, threads, repeat, zero_count, alias, errors_return;
    int split; /* --split */
    long block;
    double tol;
    const char *device;
    int probe, maps_check, ones, identical, fortran_init, overflow;
    double rel_l2;
    double scale;            /* --scale */
    const char *device_side; /* NULL: both buffers on the device */
    const char *name;        /* --name: reduce on a duplicate of MPI_COMM_WORLD of this name */
};

static struct options opt = {.op = "allreduce",
                             .count = 100000,
                             .type = "float",
                             .mpi_op = "sum",
                             .threads = 1,
                             .repeat = 1,
                             .tol = -1.0,
                             .rel_l2 = -1.0,
                             .scale = 1.0};
static const apsmpi_device_ops *dev; /* with --device */
static int world_rank, world_size;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The input of rank r at element i of stream s: a value in (-1, 1) times the magnitude of
 * i's layer. Layers are 1000 to 9000 elements long with magnitudes from 1e-7 to 1e2. */
static float input_value(int r, long i, int s)
{
    uint64_t h = mix64(((uint64_t)(r + 1) << 40) ^ (uint64_t)i ^ ((uint64_t)s << 56));
    double u = ((double)(h >> 11) / 9007199254740992.0) * 2.0 - 1.0;
    double magnitude = 1.0;
    if (opt.ones)
        return 1.0f;
    if (opt.overflow) {
        switch (i) {
        case 100:
            return 3e38f;
        case 200:
            return -3e38f;
        case 5000:
            return 1.7e38f;
        case 9000:
            if (r < 2)
                return r == 0 ? 3.3e38f : -3.3e38f;
            break;
        }
        return i % 2 ? 2e37f : 1e37f;
    }
    if (!opt.uniform) {
        long layer = i / 5000 + (long)(mix64((uint64_t)(i / 5000)) % 3); /* stable per region */
        magnitude = pow(10.0, (double)((long)(mix64((uint64_t)layer + 7) % 10) - 7));
    }
    return (float)(u * magnitude * opt.scale);
}

static int is_float_kind(void) { return strcmp(opt.type, "float") == 0; }

/* A user-defined float sum: an op the library must hand to MPI as it is. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    for (int i = 0; i < *len; i++)
        ((float *)inout)[i] += ((const float *)in)[i];
}

static void fill(void *buf, long n, int r, int s)
{
    for (long i = 0; i < n; i++) {
        float v = input_value(r, i, s);
        if (strcmp(opt.type, "double") == 0)
            ((double *)buf)[i] = v;
        else if (strcmp(opt.type, "int") == 0)
            ((int *)buf)[i] = (int)(v * 1000.0f);
        else
            ((float *)buf)[i] = v;
    }
    if (opt.nonfinite && strcmp(opt.type, "float") == 0 && n > 10) {
        float *f = buf;
        if (r == 0) {
            f[1] = INFINITY;
            f[3] = INFINITY;
            f[5] = NAN;
        }
        if (r == world_size - 1) {
            f[3] = -INFINITY;
            f[7] = -INFINITY;
        }
    }
}

static uint64_t checksum(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static size_t elem_size(void)
{
    return strcmp(opt.type, "double") == 0 ? sizeof(double)
           : strcmp(opt.type, "int") == 0  ? sizeof(int)
                                           : sizeof(float);
}

static MPI_Datatype make_type(void)
{
    if (strcmp(opt.type, "double") == 0)
        return MPI_DOUBLE;
    if (strcmp(opt.type, "int") == 0)
        return MPI_INT;
    return MPI_FLOAT;
}

/* Counts of a reduce-scatter: uneven, and one rank with none when --zero-count. */
static void segment_counts(int n, int *counts)
{
    long base = opt.count / n, used = 0;
    for (int r = 0; r < n; r++) {
        counts[r] =
            strcmp(opt.op, "reduce_scatter") == 0 ? (int)(base + (r % 2 ? 37 * (r + 1) : -37 * (r + 1))) : (int)base;
        if (counts[r] < 0)
            counts[r] = 0;
        if (opt.zero_count && r == 1)
            counts[r] = 0;
        used += counts[r];
    }
    if (strcmp(opt.op, "reduce_scatter") == 0)
        counts[n - 1] += (int)(opt.count - used); /* the last takes the rest */
}

/* +inf or -inf if x rounds to it as a float (to nearest: from FLT_MAX + half its ulp on, as
 * FLT_MAX's last bit is odd), else 0. */
static double float_overflow(double x)
{
    double limit = (double)FLT_MAX + ldexp(1.0, 103);
    return x >= limit ? INFINITY : x <= -limit ? -INFINITY : 0.0;
}

/* Checks result[0..n) against the exact sum of the ranks' inputs at global offset first.
 * Returns the largest error relative to N * B (see the header; INFINITY for inf or NaN where
 * the sum is finite, or anything but that inf where it is not); *l2 gets the relative L2
 * error against the exact sum over the elements whose sum is finite (0 when it is 0). */
static double check(const float *result, long first, long n, int nranks, int stream, long total, double *l2)
{
    double err2 = 0.0, exact2 = 0.0;
    long block = opt.block > 0 ? opt.block : total;
    long nblocks = (total + block - 1) / block;
    double *bmax = calloc((size_t)nblocks, sizeof *bmax), worst = 0.0;

    for (long g = 0; g < total; g++)
        for (int r = 0; r < nranks; r++)
            bmax[g / block] = fmax(bmax[g / block], fabs((double)input_value(r, g, stream)));
    for (long i = 0; i < n; i++) {
        long g = first + i;
        double exact = 0.0, scale = bmax[g / block] > 0 ? bmax[g / block] : 1.0;
        for (int r = 0; r < nranks; r++)
            exact += input_value(r, g, stream);
        if (float_overflow(exact) != 0.0) {
            if ((double)result[i] != float_overflow(exact)) {
                fprintf(stderr, "rank %d: element %ld is %g, not %g as the sum overflows FP32\n", world_rank, g,
                        result[i], float_overflow(exact));
                worst = INFINITY;
            }
            continue;
        }
        if (!isfinite(result[i])) /* (fmax would drop a NaN) */
            worst = INFINITY;
        worst = fmax(worst, fabs((double)result[i] - exact) / (nranks * scale));
        err2 += ((double)result[i] - exact) * ((double)result[i] - exact);
        exact2 += exact * exact;
    }
    *l2 = exact2 > 0 ? sqrt(err2 / exact2) : 0.0;
    free(bmax);
    return worst;
}

/* One reduction on comm with stream s; returns 0 if the result is right. */
static int run_once(MPI_Comm comm, int stream, uint64_t *sum)
{
    int nranks, rank, counts[1024], inter = 0, bad = 0;
    long n_in, n_out, first = 0;
    MPI_Datatype type = make_type();
    MPI_Op op = MPI_SUM;
    void *in, *out;

    if (strcmp(opt.mpi_op, "max") == 0)
        op = MPI_MAX;
    else if (strcmp(opt.mpi_op, "user") == 0)
        MPI_Op_create(user_sum, 1, &op);
    MPI_Comm_test_inter(comm, &inter);
    if (inter)
        MPI_Comm_remote_size(comm, &nranks);
    else
        MPI_Comm_size(comm, &nranks);
    MPI_Comm_rank(comm, &rank);
    segment_counts(nranks, counts);
    for (int r = 0; r < rank; r++)
        first += counts[r];
    n_in = strcmp(opt.op, "allreduce") == 0 ? opt.count
                                            : opt.count - (strcmp(opt.op, "reduce_scatter") ? opt.count % nranks : 0);
    n_out = strcmp(opt.op, "allreduce") == 0 ? opt.count : counts[rank];
    in = malloc((size_t)n_in * elem_size() + 16);
    out = malloc((size_t)(opt.in_place ? n_in : n_out) * elem_size() + 16);
    fill(opt.in_place ? out : in, n_in, inter ? world_rank % 2 : rank, stream);

    size_t in_bytes = (size_t)n_in * elem_size() + 16,
           out_bytes = (size_t)(opt.in_place ? n_in : n_out) * elem_size() + 16;
    void *d_in = in, *d_out = out;
    if (dev) {
        int send_dev = !opt.device_side || !strcmp(opt.device_side, "send");
        int recv_dev = !opt.device_side || !strcmp(opt.device_side, "recv");
        d_in = send_dev ? dev->device_alloc(in_bytes) : malloc(in_bytes);
        d_out = recv_dev ? dev->device_alloc(out_bytes) : malloc(out_bytes);
        if (!d_in || !d_out || dev->copy(d_in, in, in_bytes, NULL) || dev->copy(d_out, out, out_bytes, NULL) ||
            dev->stream_sync(NULL)) {
            fprintf(stderr, "rank %d: device memory or copy failed\n", world_rank);
            return 1;
        }
    }
    const void *send = opt.in_place ? MPI_IN_PLACE : opt.alias ? d_out : d_in;
    int rc;
    if (opt.alias || opt.errors_return) /* an erroneous call: MPI's answer is printed, not fatal */
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (strcmp(opt.op, "allreduce") == 0)
        rc = MPI_Allreduce(send, d_out, (int)opt.count, type, op, comm);
    else if (strcmp(opt.op, "reduce_scatter") == 0)
        rc = MPI_Reduce_scatter(send, d_out, counts, type, op, comm);
    else
        rc = MPI_Reduce_scatter_block(send, d_out, counts[0], type, op, comm);
    if (dev) {
        if (dev->copy(out, d_out, out_bytes, NULL) || dev->stream_sync(NULL)) {
            fprintf(stderr, "rank %d: copy from the device failed\n", world_rank);
            return 1;
        }
        if (!opt.device_side || !strcmp(opt.device_side, "send"))
            dev->device_free(d_in);
        else
            free(d_in);
        if (!opt.device_side || !strcmp(opt.device_side, "recv"))
            dev->device_free(d_out);
        else
            free(d_out);
    }
    if (opt.alias) {
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        printf("rank %d: send buffer = receive buffer: error class %d\n", world_rank, cls);
        return 0;
    }
    if (rc != MPI_SUCCESS && opt.errors_return) {
        printf("rank %d: call %d returned an error\n", world_rank, stream);
        return 0;
    }
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: the reduction returned %d\n", world_rank, rc);
        return 1;
    }
    *sum ^=
        mix64(checksum(out, (size_t)n_out * elem_size()) + (uint64_t)rank * 0x9e3779b97f4a7c15ull + (uint64_t)stream);

    if (opt.nonfinite) {
        const float *f = out;
        if (strcmp(opt.op, "allreduce") == 0 &&
            !(isinf(f[1]) && f[1] > 0 && isnan(f[3]) && isnan(f[5]) && isinf(f[7]) && f[7] < 0)) {
            fprintf(stderr, "rank %d: inf/NaN pattern wrong: %g %g %g %g\n", world_rank, f[1], f[3], f[5], f[7]);
            bad = 1;
        }
    } else if (opt.tol >= 0 && is_float_kind() && op == MPI_SUM && !inter) {
        long total = strcmp(opt.op, "allreduce") == 0 ? opt.count : n_in;
        double l2, err = check(out, strcmp(opt.op, "allreduce") == 0 ? 0 : first, n_out, nranks, stream, total, &l2);
        if (opt.rel_l2 >= 0 && !(l2 <= opt.rel_l2)) { /* (a NaN is above any bound) */
            fprintf(stderr, "rank %d: relative L2 error %.3e above %.3e\n", world_rank, l2, opt.rel_l2);
            bad = 1;
        }
        if (err > opt.tol) {
            fprintf(stderr, "rank %d: error %.3e above the bound %.3e (times N * block max)\n", world_rank, err,
                    opt.tol);
            bad = 1;
        }
        if (opt.expect_inexact && n_out > 0 && err == 0.0) {
            fprintf(stderr, "rank %d: the result is exact: the call was not compressed\n", world_rank);
            bad = 1;
        }
        if (stream == 0 && rank == 0)
            printf(
                "reduce_check: %s n=%ld ranks=%d max error %.3e of N*blockmax (bound %.3e), relative L2 error %.3e\n",
                opt.op, opt.count, nranks, err, opt.tol, l2);
    }
    if (opt.identical && !inter && strcmp(opt.op, "allreduce") == 0) {
        uint64_t mine = checksum(out, (size_t)n_out * elem_size()), lo, hi;
        MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
        MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
        if (lo != hi) {
            fprintf(stderr, "rank %d: the ranks' results differ\n", world_rank);
            bad = 1;
        }
    }
    if (strcmp(opt.mpi_op, "user") == 0)
        MPI_Op_free(&op);
    free(in);
    free(out);
    return bad;
}

struct thread_arg {
    MPI_Comm comm;
    int index, bad;
    uint64_t sum;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    for (int k = 0; k < opt.repeat; k++)
        a->bad |= run_once(a->comm, a->index * 1000 + k, &a->sum);
    return NULL;
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--op"))
            opt.op = v, i++;
        else if (!strcmp(a, "--count"))
            opt.count = atol(v), i++;
        else if (!strcmp(a, "--type"))
            opt.type = v, i++;
        else if (!strcmp(a, "--mpi-op"))
            opt.mpi_op = v, i++;
        else if (!strcmp(a, "--block"))
            opt.block = atol(v), i++;
        else if (!strcmp(a, "--tol"))
            opt.tol = atof(v), i++;
        else if (!strcmp(a, "--threads"))
            opt.threads = atoi(v), i++;
        else if (!strcmp(a, "--repeat"))
            opt.repeat = atoi(v), i++;
        else if (!strcmp(a, "--in-place"))
            opt.in_place = 1;
        else if (!strcmp(a, "--alias"))
            opt.alias = 1;
        else if (!strcmp(a, "--errors-return"))
            opt.errors_return = 1;
        else if (!strcmp(a, "--fortran-init"))
            opt.fortran_init = 1;
        else if (!strcmp(a, "--overflow"))
            opt.overflow = 1;
        else if (!strcmp(a, "--scale"))
            opt.scale = atof(v), i++;
        else if (!strcmp(a, "--name"))
            opt.name = v, i++;
        else if (!strcmp(a, "--intercomm"))
            opt.intercomm = 1;
        else if (!strcmp(a, "--split"))
            opt.split = 1;
        else if (!strcmp(a, "--uniform"))
            opt.uniform = 1;
        else if (!strcmp(a, "--expect-inexact"))
            opt.expect_inexact = 1;
        else if (!strcmp(a, "--nonfinite"))
            opt.nonfinite = 1;
        else if (!strcmp(a, "--zero-count"))
            opt.zero_count = 1;
        else if (!strcmp(a, "--device"))
            opt.device = v, i++;
        else if (!strcmp(a, "--probe"))
            opt.probe = 1;
        else if (!strcmp(a, "--maps-check"))
            opt.maps_check = 1;
        else if (!strcmp(a, "--device-side"))
            opt.device_side = v, i++;
        else if (!strcmp(a, "--ones"))
            opt.ones = 1;
        else if (!strcmp(a, "--identical"))
            opt.identical = 1;
        else if (!strcmp(a, "--rel-l2"))
            opt.rel_l2 = atof(v), i++;
        else {
            fprintf(stderr, "reduce_check: unknown option %s\n", a);
            exit(2);
        }
    }
}

/* The device plugin at path, or exit 77 (the test is skipped) without a usable device. */
static const apsmpi_device_ops *load_device(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    apsmpi_device_plugin_fn get = h ? (apsmpi_device_plugin_fn)dlsym(h, APSMPI_DEVICE_PLUGIN_SYMBOL) : NULL;
    const apsmpi_device_ops *ops = get ? get() : NULL;
    if (ops == NULL) {
        fprintf(stderr, "reduce_check: %s is not a device plugin: %s\n", path, h ? "no table" : dlerror());
        exit(2);
    }
    if (ops->device_count() < 1) {
        printf("reduce_check: no %s device here\n", ops->name);
        exit(77);
    }
    return ops;
}

/* 1 if a CUDA library or apsmpi's CUDA plugin is mapped into this process. */
static int cuda_mapped(void)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return 1;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "libcuda") || strstr(line, "libcudart") || strstr(line, "libapsmpi_cuda")) {
            fprintf(stderr, "rank %d: mapped: %s", world_rank, strchr(line, '/') ? strchr(line, '/') : line);
            found = 1;
        }
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    int provided, bad = 0, any_bad;
    uint64_t sum = 0, all;
    MPI_Comm comm = MPI_COMM_WORLD;

    parse(argc, argv);
    if (opt.fortran_init) {
        void (*init_f08)(int *ierror) = (void (*)(int *))dlsym(RTLD_DEFAULT, "mpi_init_f08_");
        int ierror = -1;
        if (init_f08 == NULL) {
            fprintf(stderr, "reduce_check: no mpi_init_f08_ in this process (is libapsmpi.so preloaded?)\n");
            return 2;
        }
        init_f08(&ierror);
        printf("mpi_init_f08_ returned, ierror %d\n", ierror);
        return 0;
    }
    if (opt.device) {
        dev = load_device(opt.device);
        if (opt.probe)
            return 0;
    }
    if (opt.threads > 1) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "reduce_check: MPI_THREAD_MULTIPLE not provided\n");
            MPI_Abort(MPI_COMM_WORLD, 77);
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    if (opt.name) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_name(comm, opt.name);
    }
    if (opt.split)
        MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank, &comm);
    if (opt.intercomm) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, world_rank % 2 ? 0 : 1, 7, &comm);
        MPI_Comm_free(&half);
    }
    if (opt.threads > 1) {
        pthread_t tid[16];
        struct thread_arg args[16];
        for (int t = 0; t < opt.threads && t < 16; t++) {
            args[t].index = t;
            args[t].bad = 0;
            args[t].sum = 0;
            MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm);
            pthread_create(&tid[t], NULL, thread_main, &args[t]);
        }
        for (int t = 0; t < opt.threads && t < 16; t++) {
            pthread_join(tid[t], NULL);
            bad |= args[t].bad;
            sum ^= args[t].sum;
            MPI_Comm_free(&args[t].comm);
        }
    } else {
        for (int k = 0; k < opt.repeat; k++)
            bad |= run_once(comm, k, &sum);
    }
    if (opt.intercomm)
        MPI_Comm_free(&comm);
    if (opt.maps_check && cuda_mapped())
        bad = 1;

    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &all, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("checksum %016llx\n", (unsigned long long)all);
    MPI_Finalize();
    return any_bad ? 1 : 0;
}
