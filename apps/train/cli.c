/* cli.c: parses and validates the options of apsmpi_train; a bad value gives one line naming it. */
#include "cli.h"

#include "gradsync.h"
#include "text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DATA_DIR "/usr/share/datasets/fashion-mnist"

static const char usage[] =
    "usage: apsmpi_train [options]   (run under mpirun; one process per rank)\n"
    "Data-parallel training: every rank trains on its shard of each global batch, the\n"
    "gradients are summed with MPI_Allreduce(MPI_IN_PLACE, MPI_FLOAT, MPI_SUM), divided by the\n"
    "global batch, and applied: SGD with momentum for the Fashion-MNIST models, AdamW for the\n"
    "character-level transformer on Debian's fortunes.\n"
    "  --model mlp|cnn|gpt 784-256-128-10 MLP, conv5x5x8-pool-conv5x5x16-pool-fc10 CNN, or a\n"
    "                      GPT-style decoder-only transformer (host only) (mlp)\n"
    "  --data DIR          mlp, cnn: the four Fashion-MNIST IDX .gz files (" DEFAULT_DATA_DIR ");\n"
    "                      gpt: the fortune files (" TEXT_DEFAULT_DIR ")\n"
    "  --batch N           samples (gpt: sequences) per rank per step (mlp, cnn: 32)\n"
    "  --global-batch N    samples per step over all ranks, divided among them (gpt: 32);\n"
    "                      the same examples per step whatever the rank count\n"
    "  --lr X              learning rate (mlp, cnn: 0.05; gpt: the peak, 0.01)\n"
    "  --seed N            seed of the initialization and the data order (1)\n"
    "  --bucket-bytes N|all  fuse gradients into buckets of up to N bytes, one allreduce each;\n"
    "                      0: one allreduce per parameter tensor; all: one for the whole\n"
    "                      gradient (mlp, cnn: 0; gpt: all)\n"
    "  --csv FILE          write one row per epoch (gpt: per evaluation) to FILE (rank 0)\n"
    "  --label TEXT        the run's name in the CSV file (run)\n"
    "  --backend cpu|cuda  where the model runs: the host, or a GPU through CUDA and cuBLAS\n"
    "                      (rank r takes GPU r mod the GPUs of its node); cuda only in\n"
    "                      apsmpi_train_cuda, the build with CUDA, and not for gpt (cpu)\n"
    "  --grad-sync host|device\n"
    "                      with --backend cuda, what MPI_Allreduce is given: host: each bucket\n"
    "                      is copied to page-locked host memory, summed there and copied back\n"
    "                      (any MPI; the copies count as allreduce time); device: the GPU\n"
    "                      pointers themselves (needs a CUDA-aware MPI, or apsmpi preloaded with\n"
    "                      its CUDA plugin). With --backend cpu, MPI gets host memory either\n"
    "                      way (host)\n"
    "  --probe             set up the backend, say what it runs on, and exit (no data read)\n"
    "  --help              this text\n"
    "mlp and cnn (SGD with momentum; one row per epoch):\n"
    "  --epochs N          passes over the training set (10)\n"
    "  --momentum X        SGD momentum, 0 <= X < 1 (0.9)\n"
    "  --train-limit N     train on the first N training images only (all)\n"
    "  --test-limit N      test on the first N test images only (all)\n"
    "gpt (AdamW, beta1 0.9, beta2 0.99; one row per evaluation of the validation text):\n"
    "  --steps N           optimizer steps (400)\n"
    "  --eval-every N      steps between evaluations (50); the last step is always evaluated\n"
    "  --warmup N          steps of linear warm-up, then cosine decay to lr/10 (steps/10)\n"
    "  --weight-decay X    decoupled weight decay of the weight matrices and embeddings (0.1)\n"
    "  --clip X            clip the gradient to this global norm; 0: never (1)\n"
    "  --layers N          transformer blocks, 1 to 4 (2)\n"
    "  --d-model N         width of the residual stream (64)\n"
    "  --heads N           attention heads; they divide d-model (4)\n"
    "  --context N         characters per sequence, 1 to 1024 (64)\n"
    "  --val-windows N     validation windows of --context characters, spread evenly over\n"
    "                      the validation text (256)\n";

enum kind { TEXT, INT, LONG, FLOAT, SEED, BYTES };
enum { FOR_ALL, FOR_IMAGES, FOR_GPT };

struct spec {
    const char *name;
    enum kind kind;
    size_t offset; /* in struct options */
    double lo, hi; /* INT, LONG: inclusive; FLOAT: lo <= x < hi */
    int models;
};

#define AT(field) offsetof(struct options, field)
static const struct spec specs[] = {
    {"--data", TEXT, AT(data_dir), 0, 0, FOR_ALL},
    {"--model", TEXT, AT(model), 0, 0, FOR_ALL},
    {"--batch", INT, AT(batch), 1, 65536, FOR_ALL},
    {"--global-batch", INT, AT(global_batch), 1, 1 << 24, FOR_ALL},
    {"--lr", FLOAT, AT(lr), 0.0, 100.0, FOR_ALL},
    {"--seed", SEED, AT(seed), 0, 0, FOR_ALL},
    {"--bucket-bytes", BYTES, AT(bucket_bytes), 0, 0x7fffffffL, FOR_ALL},
    {"--csv", TEXT, AT(csv), 0, 0, FOR_ALL},
    {"--label", TEXT, AT(label), 0, 0, FOR_ALL},
    {"--backend", TEXT, AT(backend), 0, 0, FOR_ALL},
    {"--grad-sync", TEXT, AT(grad_sync), 0, 0, FOR_ALL},
    {"--epochs", INT, AT(epochs), 1, 100000, FOR_IMAGES},
    {"--momentum", FLOAT, AT(momentum), 0.0, 1.0, FOR_IMAGES},
    {"--train-limit", LONG, AT(train_limit), 1, 0x7fffffffL, FOR_IMAGES},
    {"--test-limit", LONG, AT(test_limit), 1, 0x7fffffffL, FOR_IMAGES},
    {"--steps", LONG, AT(gpt.steps), 1, 10000000, FOR_GPT},
    {"--eval-every", LONG, AT(gpt.eval_every), 1, 10000000, FOR_GPT},
    {"--warmup", LONG, AT(gpt.warmup), 1, 10000000, FOR_GPT},
    {"--weight-decay", FLOAT, AT(gpt.weight_decay), 0.0, 10.0, FOR_GPT},
    {"--clip", FLOAT, AT(gpt.clip), 0.0, 1e6, FOR_GPT},
    {"--layers", INT, AT(gpt.layers), 1, 4, FOR_GPT},
    {"--d-model", INT, AT(gpt.d_model), 1, 4096, FOR_GPT},
    {"--heads", INT, AT(gpt.heads), 1, 4096, FOR_GPT},
    {"--context", INT, AT(gpt.context), 1, 1024, FOR_GPT},
    {"--val-windows", INT, AT(gpt.val_windows), 1, 1 << 20, FOR_GPT},
};
#define NSPECS (int)(sizeof specs / sizeof specs[0])

static int bad(char *err, size_t errlen, const char *opt, const char *value, const char *want)
{
    snprintf(err, errlen, "%s: bad value '%s' (want %s)", opt, value, want);
    return -1;
}

static int parse_long(const struct spec *s, const char *v, long *out, char *err, size_t errlen)
{
    char *end;
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < (long)s->lo || x > (long)s->hi) {
        char want[64];
        snprintf(want, sizeof want, "an integer from %ld to %ld", (long)s->lo, (long)s->hi);
        return bad(err, errlen, s->name, v, want);
    }
    *out = x;
    return 0;
}

static int parse_float(const struct spec *s, const char *v, float *out, char *err, size_t errlen)
{
    char *end;
    double x;
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x) || x < s->lo || x >= s->hi) {
        char want[64];
        snprintf(want, sizeof want, "a number, %g <= x < %g", s->lo, s->hi);
        return bad(err, errlen, s->name, v, want);
    }
    *out = (float)x;
    return 0;
}

static int one_of(const char *opt, const char *v, const char *a, const char *b, const char *c, char *err, size_t errlen)
{
    char want[64];
    if (strcmp(v, a) == 0 || strcmp(v, b) == 0 || (c && strcmp(v, c) == 0))
        return 0;
    snprintf(want, sizeof want, c ? "%s, %s or %s" : "%s or %s", a, b, c);
    return bad(err, errlen, opt, v, want);
}

/* Stores one option's value; -1 with err. */
static int set(const struct spec *s, const char *v, struct options *o, char *err, size_t errlen)
{
    char *field = (char *)o + s->offset;
    long x;

    switch (s->kind) {
    case TEXT:
        if (strcmp(s->name, "--model") == 0 && one_of(s->name, v, "mlp", "cnn", "gpt", err, errlen))
            return -1;
        if (strcmp(s->name, "--backend") == 0 && one_of(s->name, v, "cpu", "cuda", NULL, err, errlen))
            return -1;
        if (strcmp(s->name, "--grad-sync") == 0 && one_of(s->name, v, "host", "device", NULL, err, errlen))
            return -1;
        if (strcmp(s->name, "--label") == 0 && (strchr(v, ',') || strchr(v, '"') || strchr(v, '\n')))
            return bad(err, errlen, s->name, v, "text without commas, quotes or newlines");
        *(const char **)field = v;
        return 0;
    case INT:
        if (parse_long(s, v, &x, err, errlen))
            return -1;
        *(int *)field = (int)x;
        return 0;
    case LONG:
        return parse_long(s, v, (long *)field, err, errlen);
    case FLOAT:
        return parse_float(s, v, (float *)field, err, errlen);
    case SEED: {
        char *end;
        unsigned long long seed;
        errno = 0;
        seed = strtoull(v, &end, 10);
        if (errno || end == v || *end || v[0] == '-' || seed > 0x7fffffffffffffffULL)
            return bad(err, errlen, s->name, v, "an integer from 0 to 9223372036854775807");
        *(uint64_t *)field = (uint64_t)seed;
        return 0;
    }
    case BYTES:
        if (strcmp(v, "all") == 0) {
            *(size_t *)field = GRADSYNC_ONE_BUCKET;
            return 0;
        }
        if (parse_long(s, v, &x, err, errlen))
            return -1;
        *(size_t *)field = (size_t)x;
        return 0;
    }
    return -1;
}

/* The defaults that depend on the model, for the options not given; the checks across options. */
static int finish(struct options *o, const bool *given, int ranks, char *err, size_t errlen)
{
    o->is_gpt = strcmp(o->model, "gpt") == 0;
    for (int i = 0; i < NSPECS; i++)
        if (given[i] && specs[i].models != FOR_ALL && (specs[i].models == FOR_GPT) != o->is_gpt) {
            snprintf(err, errlen, "%s is not an option of --model %s (try --help)", specs[i].name, o->model);
            return -1;
        }
    if (o->is_gpt && strcmp(o->backend, "cuda") == 0) {
        snprintf(err, errlen, "--model gpt runs on the host only: it is not built for --backend cuda");
        return -1;
    }
    if (!o->data_dir)
        o->data_dir = o->is_gpt ? TEXT_DEFAULT_DIR : DEFAULT_DATA_DIR;
    if (o->lr < 0.0f)
        o->lr = o->is_gpt ? 0.01f : 0.05f;
    if (o->bucket_bytes == (size_t)-2)
        o->bucket_bytes = o->is_gpt ? GRADSYNC_ONE_BUCKET : 0;
    if (o->global_batch) {
        if (o->batch && o->batch * ranks != o->global_batch) {
            snprintf(err, errlen, "--batch %d on %d ranks is not --global-batch %d", o->batch, ranks, o->global_batch);
            return -1;
        }
        if (o->global_batch % ranks != 0) {
            snprintf(err, errlen, "--global-batch %d does not divide among %d ranks", o->global_batch, ranks);
            return -1;
        }
        o->batch = o->global_batch / ranks;
    } else if (!o->batch && o->is_gpt) {
        o->global_batch = 32;
        if (o->global_batch % ranks != 0) {
            snprintf(err, errlen,
                     "the default global batch of %d sequences does not divide among %d ranks (give "
                     "--global-batch)",
                     o->global_batch, ranks);
            return -1;
        }
        o->batch = o->global_batch / ranks;
    } else {
        o->batch = o->batch ? o->batch : 32;
    }
    o->global_batch = o->batch * ranks;
    if (o->is_gpt && o->gpt.d_model % o->gpt.heads != 0) {
        snprintf(err, errlen, "--heads %d does not divide --d-model %d", o->gpt.heads, o->gpt.d_model);
        return -1;
    }
    if (o->is_gpt && !o->gpt.warmup)
        o->gpt.warmup = o->gpt.steps / 10 ? o->gpt.steps / 10 : 1;
    return 0;
}

int cli_parse(int argc, char **argv, int ranks, struct options *o, int print, char *err, size_t errlen)
{
    bool given[NSPECS] = {false};

    *o = (struct options){.model = "mlp",
                          .epochs = 10,
                          .lr = -1.0f,
                          .momentum = 0.9f,
                          .seed = 1,
                          .bucket_bytes = (size_t)-2,
                          .label = "run",
                          .backend = "cpu",
                          .grad_sync = "host",
                          .gpt = {.steps = 400,
                                  .eval_every = 50,
                                  .layers = 2,
                                  .d_model = 64,
                                  .heads = 4,
                                  .context = 64,
                                  .weight_decay = 0.1f,
                                  .clip = 1.0f,
                                  .val_windows = 256}};
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int k = 0;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            if (print)
                fputs(usage, stdout);
            return 1;
        }
        if (strcmp(opt, "--probe") == 0) {
            o->probe = 1;
            continue;
        }
        while (k < NSPECS && strcmp(opt, specs[k].name) != 0)
            k++;
        if (k == NSPECS) {
            snprintf(err, errlen, "unknown option '%s' (try --help)", opt);
            return -1;
        }
        if (!val) {
            snprintf(err, errlen, "%s needs a value", opt);
            return -1;
        }
        i++;
        if (set(&specs[k], val, o, err, errlen) != 0)
            return -1;
        given[k] = true;
    }
    return finish(o, given, ranks, err, errlen);
}
