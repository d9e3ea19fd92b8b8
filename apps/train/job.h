/* job.h: what every kind of training job shares: ending on all ranks with one line, rank 0's CSV file, the closing summary. */
#ifndef TRAIN_JOB_H
#define TRAIN_JOB_H

#include "cli.h"
#include "gradsync.h"

#include <mpi.h>
#include <stdio.h>

/* Every rank has taken the same decision; rank who says why it fails (on stderr). Finalizes
 * MPI; returns the program's exit status. */
int job_fail_at(int rank, int who, const char *msg);
int job_fail(int rank, const char *msg);

/* Rank 0 opens --csv (if given) into *csv; the ranks agree. Returns 0, or -1 on every rank
 * with rank 0's reason in err. */
int job_open_csv(const struct options *o, int rank, MPI_Comm comm, FILE **csv, char *err, size_t errlen);

/* Rank 0's allreduce summary (per rank: calls and FP32 bytes) after what (e.g. "5 epochs"),
 * then the values the allreduce zeroed; closes csv. Collective. */
void job_summary(const struct gradsync *s, const char *what, FILE *csv, int rank, MPI_Comm comm);

#endif
