/* blocking.c: MPI_Allreduce and MPI_Reduce_scatter(_block): eligibility, then the reduction (reductions.c) run to its end on the thread's scratch memory, after the requests on its communicator (requests.c). */
#include <limits.h>
#include <stdlib.h>

#include "entry/entry_points.h"
#include "entry/next_calls.h"
#include "entry/reduction.h"
#include "entry/requests.h"
#include "state/stats.h"

/* Runs an eligible call to its end on the thread's scratch memory, after the requests on its
 * communicator have posted their collectives (entry/requests.h). */
static int run_blocking(apsmpi_reduction *r)
{
    int done = 0, rc;

    apsmpi_requests_before_blocking(r->comm);
    do
        rc = apsmpi_reduction_progress(r, &done);
    while (!done);
    return rc;
}

/* One blocking entry point, written once: eligibility, then the reduction or MPI's own call. */
#define BLOCKING_REDUCTION(kind, recvcounts, count, pmpi_call)                                                         \
    do {                                                                                                               \
        apsmpi_reduction r;                                                                                            \
        size_t total;                                                                                                  \
        int why = apsmpi_reduction_eligibility(kind, sendbuf, recvbuf, recvcounts, count, datatype, op, comm, &total); \
        if (why != 0)                                                                                                  \
            return apsmpi_passed_through(why, pmpi_call);                                                              \
        apsmpi_reduction_begin(&r, kind, sendbuf, recvbuf, recvcounts, count, total, datatype, op, comm,               \
                               &apsmpi_scratch_memory, 1);                                                             \
        return run_blocking(&r);                                                                                       \
    } while (0)

int apsmpi_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    BLOCKING_REDUCTION(APSMPI_ALLREDUCE, NULL, count,
                       APSMPI_NEXT(Allreduce)(sendbuf, recvbuf, count, datatype, op, comm));
}

int apsmpi_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm)
{
    BLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER, recvcounts, 0,
                       APSMPI_NEXT(Reduce_scatter)(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

#ifdef APSMPI_HAVE_LARGE_COUNT_REDUCTIONS
/* MPI_Reduce_scatter_c with its counts as ints (counts), the job's (recvcounts) for MPI's own. */
static int reduce_scatter_ints(const void *sendbuf, void *recvbuf, const int *counts, const MPI_Count *recvcounts,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    BLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER, counts, 0,
                       APSMPI_NEXT(Reduce_scatter_c)(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}
#endif

int apsmpi_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm)
{
    BLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER_BLOCK, NULL, recvcount,
                       APSMPI_NEXT(Reduce_scatter_block)(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

#ifdef APSMPI_HAVE_LARGE_COUNT_REDUCTIONS
/* The large-count forms (MPI 4): compressed as the calls above where every count fits an
 * int, else the MPI's own _c call, unchanged. */
int apsmpi_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm)
{
    if (count > INT_MAX)
        return apsmpi_passed_through(APSMPI_STAT_PASS_LARGE_COUNT,
                                     APSMPI_NEXT(Allreduce_c)(sendbuf, recvbuf, count, datatype, op, comm));
    BLOCKING_REDUCTION(APSMPI_ALLREDUCE, NULL, (int)count,
                       APSMPI_NEXT(Allreduce_c)(sendbuf, recvbuf, count, datatype, op, comm));
}

int apsmpi_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm)
{
    int why, rc, *counts = apsmpi_reduction_int_counts(recvcounts, comm, &why);

    if (counts == NULL)
        return apsmpi_passed_through(why,
                                     APSMPI_NEXT(Reduce_scatter_c)(sendbuf, recvbuf, recvcounts, datatype, op, comm));
    rc = reduce_scatter_ints(sendbuf, recvbuf, counts, recvcounts, datatype, op, comm);
    free(counts);
    return rc;
}

int apsmpi_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm)
{
    if (recvcount > INT_MAX)
        return apsmpi_passed_through(
            APSMPI_STAT_PASS_LARGE_COUNT,
            APSMPI_NEXT(Reduce_scatter_block_c)(sendbuf, recvbuf, recvcount, datatype, op, comm));
    BLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER_BLOCK, NULL, (int)recvcount,
                       APSMPI_NEXT(Reduce_scatter_block_c)(sendbuf, recvbuf, recvcount, datatype, op, comm));
}
#endif
