/* end_job.c: ends the job with one line saying why (every rank together, or this rank alone through PMPI_Abort). */
#include "state/end_job.h"

#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "core/log.h"

void apsmpi_end_job(enum apsmpi_end_scope scope, MPI_Comm comm, int say, const char *fmt, ...)
{
    int initialized = 0, finalized = 0;
    va_list ap;

    if (say || scope == APSMPI_END_THIS_RANK) {
        va_start(ap, fmt);
        apsmpi_vlog(APSMPI_LOG_FATAL, fmt, ap);
        va_end(ap);
    }
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (initialized && !finalized) {
        if (scope == APSMPI_END_THIS_RANK) {
            /* MPICH's Hydra kills every process at an abort, its own forwarders of
             * the ranks' stderr included, and may drop a line still in the pipe (CI
             * lost this one under load): give the launcher a moment to read it. */
            const struct timespec forward_time = {.tv_sec = 1, .tv_nsec = 0};
            nanosleep(&forward_time, NULL);
            PMPI_Abort(comm, 1);
        }
        PMPI_Finalize();
    }
    exit(1);
}
