/* train.h: the data-parallel training loop (shard, forward, backward, allreduce, SGD, evaluate). */
#ifndef TRAIN_TRAIN_H
#define TRAIN_TRAIN_H

#include "cli.h"
#include "data.h"
#include "gradsync.h"
#include "model.h"

#include <mpi.h>
#include <stdio.h>

struct run {
    const struct options *opt;
    struct model *model;
    const struct dataset *train, *test; /* already cut to the limits */
    struct gradsync sync;
    MPI_Comm comm;
    int rank, ranks;
    FILE *csv; /* rank 0 only; NULL for none */
};

/* Trains for opt->epochs epochs (or up to the first whose loss is not finite). Rank 0
 * prints a line per epoch and writes the CSV rows. Returns the number of epochs run. */
int train_run(struct run *r);

#endif
