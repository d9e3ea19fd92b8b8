/* blocking.c: MPI_Allreduce and MPI_Reduce_scatter(_block): eligibility, then the reduction (reductions.c) run to its end on the thread's scratch memory, after the requests on its communicator (requests.c). */
#include "entry/entry_points.h"
#include "entry/reduction.h"
#include "entry/requests.h"

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
    BLOCKING_REDUCTION(APSMPI_ALLREDUCE, NULL, count, PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

int apsmpi_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm)
{
    BLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER, recvcounts, 0,
                       PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

int apsmpi_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm)
{
    BLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER_BLOCK, NULL, recvcount,
                       PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm));
}
