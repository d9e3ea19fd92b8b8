/* cli.h: the command-line options of apsmpi_train. */
#ifndef TRAIN_CLI_H
#define TRAIN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The language model's own options (--model gpt). */
struct gpt_options {
    long steps, eval_every, warmup; /* optimizer steps; steps between evaluations; warm-up steps */
    int layers, d_model, heads, context;
    float weight_decay, clip; /* AdamW's decoupled weight decay; the global gradient norm's limit (0: none) */
    int val_windows;          /* validation windows of context characters, spread over the validation text */
};

struct options {
    const char *data_dir;
    const char *model; /* "mlp", "cnn" or "gpt" */
    bool is_gpt;
    int epochs;       /* mlp, cnn */
    int batch;        /* per rank */
    int global_batch; /* batch x ranks */
    float lr, momentum;
    uint64_t seed;
    size_t bucket_bytes;          /* 0: one allreduce per tensor; GRADSYNC_ONE_BUCKET: one in all */
    long train_limit, test_limit; /* mlp, cnn; 0: all */
    const char *csv;              /* NULL: none */
    const char *label;
    const char *backend;   /* "cpu" or "cuda" */
    const char *grad_sync; /* "host" or "device" */
    int probe;             /* set up the backend, describe it, exit */
    struct gpt_options gpt;
};

/* Parses argv into o for a job of ranks ranks (which the global batch must divide) and
 * fills in the defaults of the model chosen. Returns 0 to run, 1 when --help was asked
 * (usage printed on stdout if print), -1 on a bad option (one line in err). */
int cli_parse(int argc, char **argv, int ranks, struct options *o, int print, char *err, size_t errlen);

#endif
