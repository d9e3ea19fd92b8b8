/* run_gpt.h: the job of --model gpt: the text, the transformer, its training and summary. */
#ifndef TRAIN_RUN_GPT_H
#define TRAIN_RUN_GPT_H

#include "cli.h"

/* Runs the whole job on the host (info: what the backend runs on, for the header line);
 * finalizes MPI and returns the exit status. */
int run_gpt(const struct options *opt, const char *info, int rank, int ranks);

#endif
