/* report.h: the progress line of each epoch or evaluation (stdout) and the CSV rows of rank 0. */
#ifndef TRAIN_REPORT_H
#define TRAIN_REPORT_H

#include <stdio.h>

/* One row: an epoch of an image model, or an evaluation of the language model (whose
 * "test" set is its validation text and whose "epoch" counts evaluations). */
struct epoch_row {
    int epoch, epochs;
    long step;          /* optimizer steps taken so far */
    double train_loss;  /* mean over the training samples (gpt: characters) since the last row, all ranks */
    double test_acc;    /* percent of the test images (gpt: validation characters predicted right) */
    double test_loss;   /* mean cross-entropy over them, in nats */
    double epoch_s;     /* the training steps since the last row, wall clock on rank 0 */
    double allreduce_s; /* inside the gradient MPI_Allreduce calls, mean over ranks */
};

/* Opens PATH and writes the header; NULL (with errno) if it cannot. */
FILE *report_csv_open(const char *path);
void report_csv_row(FILE *f, const char *label, const char *model, int ranks, const struct epoch_row *r);
/* The line of an image model's epoch, and of the language model's evaluation. */
void report_line(const struct epoch_row *r);
void report_eval_line(const struct epoch_row *r);

#endif
