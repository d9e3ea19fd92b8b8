/* train_text.h: the language model's data-parallel training loop (global batch sharded over the ranks, allreduce, clipping, AdamW, validation). */
#ifndef TRAIN_TRAIN_TEXT_H
#define TRAIN_TRAIN_TEXT_H

#include "adamw.h"
#include "cli.h"
#include "gpt.h"
#include "gradsync.h"
#include "text.h"

#include <mpi.h>
#include <stdio.h>

struct text_run {
    const struct options *opt;
    struct gpt *model;
    const struct text_corpus *text;
    struct gradsync sync;
    struct adamw adamw;
    MPI_Comm comm;
    int rank, ranks;
    FILE *csv;       /* rank 0 only; NULL for none */
    double train_s;  /* wall clock of the training steps on rank 0, evaluations left out */
    long steps_done; /* optimizer steps taken */
};

/* Trains for opt->gpt.steps steps (or up to the first evaluation whose training loss is not
 * finite). Step s draws the global batch's opt->global_batch windows of the training text
 * from the seed and s alone; rank r takes windows r * batch .. (r + 1) * batch - 1 of them,
 * so every rank count sees the same examples. The gradient of the summed loss is summed
 * over the ranks (gradsync), divided by the global batch's characters, clipped to the
 * global norm (after the allreduce: every rank clips alike) and applied by AdamW with the
 * warm-up and cosine schedule. Every opt->gpt.eval_every steps and after the last, the
 * mean loss and next-character accuracy on the validation windows: rank 0 prints a line
 * and writes a CSV row. */
void text_train_run(struct text_run *r);

#endif
