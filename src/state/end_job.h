/* end_job.h: the one way apsmpi ends a job: one line on stderr, "apsmpi[R] FATAL: why", then every rank stops. */
#ifndef APSMPI_END_JOB_H
#define APSMPI_END_JOB_H

#include <mpi.h>

/* Who knows that the job must end. */
enum apsmpi_end_scope {
    /* Every rank of MPI_COMM_WORLD calls apsmpi_end_job at the same point, having agreed
     * that the job cannot go on (a setting at MPI_Init): each finalizes MPI and exits with
     * status 1, so the job ends cleanly; only the ranks with `say` set write the line. */
    APSMPI_END_EVERY_RANK,
    /* This rank alone (out of memory, a missing MPI entry): PMPI_Abort on comm stops the
     * others, who may be waiting for this one; before MPI_Init or after MPI_Finalize the
     * process exits with status 1. `say` is ignored: this rank writes the line. */
    APSMPI_END_THIS_RANK
};

/* Ends the job; never returns. The line is written whatever APSMPI_LOG_LEVEL says. */
_Noreturn void apsmpi_end_job(enum apsmpi_end_scope scope, MPI_Comm comm, int say, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
