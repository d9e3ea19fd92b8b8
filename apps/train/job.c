/* job.c: ends a job on every rank with one line, opens rank 0's CSV file with the ranks agreeing, prints the closing summary. */
#include "job.h"

#include "report.h"

#include <errno.h>
#include <string.h>

int job_fail_at(int rank, int who, const char *msg)
{
    if (rank == who)
        fprintf(stderr, "apsmpi_train: %s\n", msg);
    MPI_Finalize();
    return 1;
}

int job_fail(int rank, const char *msg) { return job_fail_at(rank, 0, msg); }

int job_open_csv(const struct options *o, int rank, MPI_Comm comm, FILE **csv, char *err, size_t errlen)
{
    int ok = 1;

    *csv = NULL;
    if (rank == 0 && o->csv) {
        *csv = report_csv_open(o->csv);
        if (!*csv) {
            snprintf(err, errlen, "--csv %s: cannot write (%s)", o->csv, strerror(errno));
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    return ok ? 0 : -1;
}

void job_summary(const struct gradsync *s, const char *what, FILE *csv, int rank, MPI_Comm comm)
{
    if (rank == 0) {
        printf("apsmpi_train: done: %s; per rank %ld gradient allreduce calls, %llu bytes of MPI_FLOAT\n", what,
               s->calls, s->bytes);
        fflush(stdout);
        if (csv)
            fclose(csv);
    }
    gradsync_report_zeroed(s, comm);
}
