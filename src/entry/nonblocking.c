/* nonblocking.c: MPI_Iallreduce, MPI_Ireduce_scatter(_block), their persistent forms (MPI 4), and the job's start, test, wait, free and cancel calls on requests. */
#define _GNU_SOURCE
#include <sched.h>

#include "entry/entry_points.h"
#include "entry/reduction.h"
#include "entry/requests.h"
#include "state/stats.h"

/* ---- the non-blocking reductions: the blocking calls' eligibility, then a request ---- */

/* One non-blocking entry point, written once: an eligible call becomes apsmpi's request,
 * any other goes to MPI's own call unchanged. */
#define NONBLOCKING_REDUCTION(kind, recvcounts, count, pmpi_call)                                                      \
    do {                                                                                                               \
        size_t total;                                                                                                  \
        int why = apsmpi_reduction_eligibility(kind, sendbuf, recvbuf, recvcounts, count, datatype, op, comm, &total); \
        apsmpi_requests_progress();                                                                                    \
        if (why != 0)                                                                                                  \
            return apsmpi_passed_through(why, pmpi_call);                                                              \
        return apsmpi_request_issue(kind, sendbuf, recvbuf, recvcounts, count, total, datatype, op, comm, request);    \
    } while (0)

int apsmpi_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request *request)
{
    NONBLOCKING_REDUCTION(APSMPI_ALLREDUCE, NULL, count,
                          PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int apsmpi_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm, MPI_Request *request)
{
    NONBLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER, recvcounts, 0,
                          PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
}

int apsmpi_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *request)
{
    NONBLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER_BLOCK, NULL, recvcount,
                          PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}

#if MPI_VERSION >= 4
/* ---- the persistent reductions (MPI 4): made once, each MPI_Start one reduction ---- */

/* One persistent entry point: an eligible call becomes apsmpi's persistent request (or MPI's
 * own where the communicator lies on one node and APSMPI_INTRANODE=pass); any other is MPI's
 * own, counted once when it is made. */
#define PERSISTENT_REDUCTION(kind, recvcounts, count, pmpi_call)                                                       \
    do {                                                                                                               \
        size_t total;                                                                                                  \
        int why = apsmpi_reduction_eligibility(kind, sendbuf, recvbuf, recvcounts, count, datatype, op, comm, &total); \
        if (why != 0)                                                                                                  \
            return apsmpi_passed_through(why, pmpi_call);                                                              \
        if (apsmpi_request_one_node(comm))                                                                             \
            return pmpi_call;                                                                                          \
        return apsmpi_request_persistent(kind, sendbuf, recvbuf, recvcounts, count, total, datatype, op, comm,         \
                                         request);                                                                     \
    } while (0)

int apsmpi_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSISTENT_REDUCTION(APSMPI_ALLREDUCE, NULL, count,
                         PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

int apsmpi_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSISTENT_REDUCTION(APSMPI_REDUCE_SCATTER, recvcounts, 0,
                         PMPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request));
}

int apsmpi_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSISTENT_REDUCTION(
        APSMPI_REDUCE_SCATTER_BLOCK, NULL, recvcount,
        PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request));
}
#endif

int apsmpi_Start(MPI_Request *request)
{
    int rc;

    if (apsmpi_request_start(request, &rc))
        return rc;
    return PMPI_Start(request);
}

int apsmpi_Startall(int count, MPI_Request array_of_requests[])
{
    int rc = MPI_SUCCESS;

    /* one at a time, in array order: each of apsmpi's in its turn among the MPI's own */
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        if (!apsmpi_request_start(&array_of_requests[i], &rc))
            rc = PMPI_Start(&array_of_requests[i]);
    return rc;
}

/* ---- completion: MPI's own calls, with apsmpi's requests progressed first ---- */

/* A wait: while apsmpi has requests outstanding, they progress and the MPI's test form of the
 * call is tried until `complete`; else the MPI's own wait, unchanged. */
#define WAIT_WITH_PROGRESS(pmpi_wait, pmpi_test, complete) \
    do {                                                   \
        int rc;                                            \
        if (!apsmpi_requests_outstanding())                \
            return pmpi_wait;                              \
        for (;;) {                                         \
            apsmpi_requests_progress();                    \
            rc = pmpi_test;                                \
            if (rc != MPI_SUCCESS || (complete))           \
                return rc;                                 \
            sched_yield();                                 \
        }                                                  \
    } while (0)

int apsmpi_Wait(MPI_Request *request, MPI_Status *status)
{
    int flag = 0;
    WAIT_WITH_PROGRESS(PMPI_Wait(request, status), PMPI_Test(request, &flag, status), flag);
}

int apsmpi_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    int flag = 0;
    WAIT_WITH_PROGRESS(PMPI_Waitall(count, array_of_requests, array_of_statuses),
                       PMPI_Testall(count, array_of_requests, &flag, array_of_statuses), flag);
}

int apsmpi_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    int flag = 0;
    WAIT_WITH_PROGRESS(PMPI_Waitany(count, array_of_requests, index, status),
                       PMPI_Testany(count, array_of_requests, index, &flag, status), flag);
}

int apsmpi_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                    MPI_Status array_of_statuses[])
{
    WAIT_WITH_PROGRESS(PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses),
                       PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses),
                       *outcount != 0);
}

int apsmpi_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    apsmpi_requests_progress();
    return PMPI_Test(request, flag, status);
}

int apsmpi_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    apsmpi_requests_progress();
    return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
}

int apsmpi_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    apsmpi_requests_progress();
    return PMPI_Testany(count, array_of_requests, index, flag, status);
}

int apsmpi_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                    MPI_Status array_of_statuses[])
{
    apsmpi_requests_progress();
    return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int apsmpi_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    apsmpi_requests_progress();
    return PMPI_Request_get_status(request, flag, status);
}

int apsmpi_Request_free(MPI_Request *request)
{
    int rc;

    if (apsmpi_request_free(request, &rc))
        return rc;
    return PMPI_Request_free(request);
}

int apsmpi_Cancel(MPI_Request *request)
{
    int rc;

    if (apsmpi_request_cancel(request, &rc))
        return rc;
    return PMPI_Cancel(request);
}
