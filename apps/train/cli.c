/* cli.c: parses and validates the options of apsmpi_train; a bad value gives one line naming it. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DATA_DIR "/usr/share/datasets/fashion-mnist"

static const char usage[] =
    "usage: apsmpi_train [options]   (run under mpirun; one process per rank)\n"
    "Data-parallel training on Fashion-MNIST: every rank trains on its shard of each global\n"
    "batch, the gradients are summed with MPI_Allreduce(MPI_IN_PLACE, MPI_FLOAT, MPI_SUM),\n"
    "divided by the global batch, and applied by SGD with momentum.\n"
    "  --data DIR          the four Fashion-MNIST IDX .gz files (" DEFAULT_DATA_DIR ")\n"
    "  --model mlp|cnn     784-256-128-10 MLP, or conv5x5x8-pool-conv5x5x16-pool-fc10 CNN (mlp)\n"
    "  --epochs N          passes over the training set (10)\n"
    "  --batch N           samples per rank per step (32)\n"
    "  --lr X              learning rate (0.05)\n"
    "  --momentum X        SGD momentum, 0 <= X < 1 (0.9)\n"
    "  --seed N            seed of the initialization and the shuffles (1)\n"
    "  --bucket-bytes N    fuse gradients into buckets of up to N bytes, one allreduce each;\n"
    "                      0: one allreduce per parameter tensor (0)\n"
    "  --train-limit N     train on the first N training images only (all)\n"
    "  --test-limit N      test on the first N test images only (all)\n"
    "  --csv FILE          write one row per epoch to FILE (rank 0)\n"
    "  --label TEXT        the run's name in the CSV file (run)\n"
    "  --backend cpu|cuda  where the model runs: the host, or a GPU through CUDA and cuBLAS\n"
    "                      (rank r takes GPU r mod the GPUs of its node); cuda only in\n"
    "                      apsmpi_train_cuda, the build with CUDA (cpu)\n"
    "  --grad-sync host|device\n"
    "                      with --backend cuda, what MPI_Allreduce is given: host: each bucket\n"
    "                      is copied to page-locked host memory, summed there and copied back\n"
    "                      (any MPI; the copies count as allreduce time); device: the GPU\n"
    "                      pointers themselves (needs a CUDA-aware MPI, or apsmpi preloaded with\n"
    "                      its CUDA plugin). With --backend cpu, MPI gets host memory either\n"
    "                      way (host)\n"
    "  --probe             set up the backend, say what it runs on, and exit (no data read)\n"
    "  --help              this text\n";

static int known(const char *opt)
{
    static const char *const names[] = {"--data",     "--model", "--epochs",       "--batch",       "--lr",
                                        "--momentum", "--seed",  "--bucket-bytes", "--train-limit", "--test-limit",
                                        "--csv",      "--label", "--backend",      "--grad-sync"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(opt, names[i]) == 0)
            return 1;
    return 0;
}

static int bad(char *err, size_t errlen, const char *opt, const char *value, const char *want)
{
    snprintf(err, errlen, "%s: bad value '%s' (want %s)", opt, value, want);
    return -1;
}

static int parse_long(const char *opt, const char *v, long lo, long hi, long *out, char *err, size_t errlen)
{
    char *end;
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        char want[64];
        snprintf(want, sizeof want, "an integer from %ld to %ld", lo, hi);
        return bad(err, errlen, opt, v, want);
    }
    *out = x;
    return 0;
}

static int parse_float(const char *opt, const char *v, double lo, double hi, float *out, char *err, size_t errlen)
{
    char *end;
    double x;
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x) || x < lo || x >= hi) {
        char want[64];
        snprintf(want, sizeof want, "a number, %g <= x < %g", lo, hi);
        return bad(err, errlen, opt, v, want);
    }
    *out = (float)x;
    return 0;
}

int cli_parse(int argc, char **argv, struct options *o, int print, char *err, size_t errlen)
{
    long v;

    *o = (struct options){.data_dir = DEFAULT_DATA_DIR,
                          .model = "mlp",
                          .epochs = 10,
                          .batch = 32,
                          .lr = 0.05f,
                          .momentum = 0.9f,
                          .seed = 1,
                          .label = "run",
                          .backend = "cpu",
                          .grad_sync = "host"};
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            if (print)
                fputs(usage, stdout);
            return 1;
        }
        if (strcmp(opt, "--probe") == 0) {
            o->probe = 1;
            continue;
        }
        if (!known(opt)) {
            snprintf(err, errlen, "unknown option '%s' (try --help)", opt);
            return -1;
        }
        if (!val) {
            snprintf(err, errlen, "%s needs a value", opt);
            return -1;
        }
        i++;
        if (strcmp(opt, "--data") == 0) {
            o->data_dir = val;
        } else if (strcmp(opt, "--model") == 0) {
            if (strcmp(val, "mlp") != 0 && strcmp(val, "cnn") != 0)
                return bad(err, errlen, opt, val, "mlp or cnn");
            o->model = val;
        } else if (strcmp(opt, "--epochs") == 0) {
            if (parse_long(opt, val, 1, 100000, &v, err, errlen))
                return -1;
            o->epochs = (int)v;
        } else if (strcmp(opt, "--batch") == 0) {
            if (parse_long(opt, val, 1, 65536, &v, err, errlen))
                return -1;
            o->batch = (int)v;
        } else if (strcmp(opt, "--lr") == 0) {
            if (parse_float(opt, val, 0.0, 100.0, &o->lr, err, errlen))
                return -1;
        } else if (strcmp(opt, "--momentum") == 0) {
            if (parse_float(opt, val, 0.0, 1.0, &o->momentum, err, errlen))
                return -1;
        } else if (strcmp(opt, "--seed") == 0) {
            if (parse_long(opt, val, 0, 0x7fffffffffffffffL, &v, err, errlen))
                return -1;
            o->seed = (uint64_t)v;
        } else if (strcmp(opt, "--bucket-bytes") == 0) {
            if (parse_long(opt, val, 0, 0x7fffffffL, &v, err, errlen))
                return -1;
            o->bucket_bytes = (size_t)v;
        } else if (strcmp(opt, "--train-limit") == 0) {
            if (parse_long(opt, val, 1, 0x7fffffffL, &o->train_limit, err, errlen))
                return -1;
        } else if (strcmp(opt, "--test-limit") == 0) {
            if (parse_long(opt, val, 1, 0x7fffffffL, &o->test_limit, err, errlen))
                return -1;
        } else if (strcmp(opt, "--csv") == 0) {
            o->csv = val;
        } else if (strcmp(opt, "--backend") == 0) {
            if (strcmp(val, "cpu") != 0 && strcmp(val, "cuda") != 0)
                return bad(err, errlen, opt, val, "cpu or cuda");
            o->backend = val;
        } else if (strcmp(opt, "--grad-sync") == 0) {
            if (strcmp(val, "host") != 0 && strcmp(val, "device") != 0)
                return bad(err, errlen, opt, val, "host or device");
            o->grad_sync = val;
        } else {
            if (strchr(val, ',') || strchr(val, '"') || strchr(val, '\n'))
                return bad(err, errlen, opt, val, "text without commas, quotes or newlines");
            o->label = val;
        }
    }
    return 0;
}
