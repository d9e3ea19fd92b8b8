/* cli.h: the command-line options of apsmpi_train. */
#ifndef TRAIN_CLI_H
#define TRAIN_CLI_H

#include <stddef.h>
#include <stdint.h>

struct options {
    const char *data_dir;
    const char *model;
    int epochs;
    int batch; /* per rank */
    float lr, momentum;
    uint64_t seed;
    size_t bucket_bytes;          /* 0: one allreduce per tensor */
    long train_limit, test_limit; /* 0: all */
    const char *csv;              /* NULL: none */
    const char *label;
    const char *backend;   /* "cpu" or "cuda" */
    const char *grad_sync; /* "host" or "device" */
    int probe;             /* set up the backend, describe it, exit */
};

/* Parses argv into o. Returns 0 to run, 1 when --help was asked (usage printed on stdout
 * if print), -1 on a bad option (one line in err). */
int cli_parse(int argc, char **argv, struct options *o, int print, char *err, size_t errlen);

#endif
