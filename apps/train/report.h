/* report.h: the per-epoch progress line (stdout) and CSV rows of rank 0. */
#ifndef TRAIN_REPORT_H
#define TRAIN_REPORT_H

#include <stdio.h>

struct epoch_row {
    int epoch, epochs;
    double train_loss;  /* mean over the epoch's training samples, all ranks */
    double test_acc;    /* percent of the test images */
    double epoch_s;     /* the epoch's training steps, wall clock on rank 0 */
    double allreduce_s; /* inside the gradient MPI_Allreduce calls, mean over ranks */
};

/* Opens PATH and writes the header; NULL (with errno) if it cannot. */
FILE *report_csv_open(const char *path);
void report_csv_row(FILE *f, const char *label, const char *model, int ranks, const struct epoch_row *r);
void report_line(const struct epoch_row *r);

#endif
