/* nonblocking.c: MPI_Iallreduce, MPI_Ireduce_scatter(_block), their persistent forms (MPI 4), and the job's start, test, wait, free and cancel calls on requests. */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <stdlib.h>

#include "entry/entry_points.h"
#include "entry/next_calls.h"
#include "entry/reduction.h"
#include "entry/requests.h"
#include "state/stats.h"

/* ---- the non-blocking reductions: the blocking calls' eligibility, then a request ---- */

/* An eligible call on a communicator prepared for requests (state/comm_prepare.h) becomes
 * apsmpi's request, made by make_request (apsmpi_request_issue or apsmpi_request_persistent,
 * one signature); any other goes to MPI's own call unchanged (one on one node with
 * APSMPI_INTRANODE=pass counted as such). Written once for both kinds of request. */
#define REQUEST_REDUCTION(kind, recvcounts, count, pmpi_call, make_request)                                            \
    do {                                                                                                               \
        size_t total;                                                                                                  \
        int why = apsmpi_reduction_eligibility(kind, sendbuf, recvbuf, recvcounts, count, datatype, op, comm, &total); \
        if (why == 0)                                                                                                  \
            why = apsmpi_request_readiness(comm);                                                                      \
        if (why == APSMPI_STAT_CALLS_ONE_NODE) {                                                                       \
            apsmpi_stats_add(APSMPI_STAT_CALLS_ONE_NODE, 1);                                                           \
            return pmpi_call;                                                                                          \
        }                                                                                                              \
        if (why != 0)                                                                                                  \
            return apsmpi_passed_through(why, pmpi_call);                                                              \
        return make_request(kind, sendbuf, recvbuf, recvcounts, count, total, datatype, op, comm, request);            \
    } while (0)

/* One non-blocking entry point: apsmpi's requests progress, then the call as above. */
#define NONBLOCKING_REDUCTION(kind, recvcounts, count, pmpi_call)                    \
    do {                                                                             \
        apsmpi_requests_progress();                                                  \
        REQUEST_REDUCTION(kind, recvcounts, count, pmpi_call, apsmpi_request_issue); \
    } while (0)

int apsmpi_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request *request)
{
    NONBLOCKING_REDUCTION(APSMPI_ALLREDUCE, NULL, count,
                          APSMPI_NEXT(Iallreduce)(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int apsmpi_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm, MPI_Request *request)
{
    NONBLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER, recvcounts, 0,
                          APSMPI_NEXT(Ireduce_scatter)(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
}

int apsmpi_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *request)
{
    NONBLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER_BLOCK, NULL, recvcount,
                          APSMPI_NEXT(Ireduce_scatter_block)(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}

#ifdef APSMPI_HAVE_PERSISTENT_REDUCTIONS
/* ---- the persistent reductions (MPI 4): made once, each MPI_Start one reduction ---- */

/* One persistent entry point: made once; what is not compressed is MPI's own, counted once
 * when it is made. */
#define PERSISTENT_REDUCTION(kind, recvcounts, count, pmpi_call) \
    REQUEST_REDUCTION(kind, recvcounts, count, pmpi_call, apsmpi_request_persistent)

int apsmpi_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSISTENT_REDUCTION(APSMPI_ALLREDUCE, NULL, count,
                         APSMPI_NEXT(Allreduce_init)(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

int apsmpi_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSISTENT_REDUCTION(
        APSMPI_REDUCE_SCATTER, recvcounts, 0,
        APSMPI_NEXT(Reduce_scatter_init)(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request));
}

int apsmpi_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSISTENT_REDUCTION(
        APSMPI_REDUCE_SCATTER_BLOCK, NULL, recvcount,
        APSMPI_NEXT(Reduce_scatter_block_init)(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request));
}
#endif

#ifdef APSMPI_HAVE_LARGE_COUNT_REDUCTIONS
/* ---- the large-count forms (MPI 4): as their int forms where every count fits an int, else
 * the MPI's own _c call, unchanged ---- */

int apsmpi_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request *request)
{
    if (count > INT_MAX)
        return apsmpi_passed_through(APSMPI_STAT_PASS_LARGE_COUNT,
                                     APSMPI_NEXT(Iallreduce_c)(sendbuf, recvbuf, count, datatype, op, comm, request));
    NONBLOCKING_REDUCTION(APSMPI_ALLREDUCE, NULL, (int)count,
                          APSMPI_NEXT(Iallreduce_c)(sendbuf, recvbuf, count, datatype, op, comm, request));
}

/* MPI_Ireduce_scatter_c with its counts as ints (counts: the request copies them), the job's
 * (recvcounts) for MPI's own. */
static int ireduce_scatter_ints(const void *sendbuf, void *recvbuf, const int *counts, const MPI_Count *recvcounts,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    NONBLOCKING_REDUCTION(APSMPI_REDUCE_SCATTER, counts, 0,
                          APSMPI_NEXT(Ireduce_scatter_c)(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
}

int apsmpi_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    int why, rc, *counts = apsmpi_reduction_int_counts(recvcounts, comm, &why);

    if (counts == NULL)
        return apsmpi_passed_through(
            why, APSMPI_NEXT(Ireduce_scatter_c)(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
    rc = ireduce_scatter_ints(sendbuf, recvbuf, counts, recvcounts, datatype, op, comm, request);
    free(counts);
    return rc;
}

int apsmpi_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (recvcount > INT_MAX)
        return apsmpi_passed_through(
            APSMPI_STAT_PASS_LARGE_COUNT,
            APSMPI_NEXT(Ireduce_scatter_block_c)(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
    NONBLOCKING_REDUCTION(
        APSMPI_REDUCE_SCATTER_BLOCK, NULL, (int)recvcount,
        APSMPI_NEXT(Ireduce_scatter_block_c)(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}
#endif

#if defined(APSMPI_HAVE_LARGE_COUNT_PERSISTENT_REDUCTIONS) && defined(APSMPI_HAVE_PERSISTENT_REDUCTIONS)
int apsmpi_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (count > INT_MAX)
        return apsmpi_passed_through(
            APSMPI_STAT_PASS_LARGE_COUNT,
            APSMPI_NEXT(Allreduce_init_c)(sendbuf, recvbuf, count, datatype, op, comm, info, request));
    PERSISTENT_REDUCTION(APSMPI_ALLREDUCE, NULL, (int)count,
                         APSMPI_NEXT(Allreduce_init_c)(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

/* MPI_Reduce_scatter_init_c with its counts as ints (the request copies them). */
static int reduce_scatter_init_ints(const void *sendbuf, void *recvbuf, const int *counts, const MPI_Count *recvcounts,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    PERSISTENT_REDUCTION(
        APSMPI_REDUCE_SCATTER, counts, 0,
        APSMPI_NEXT(Reduce_scatter_init_c)(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request));
}

int apsmpi_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int why, rc, *counts = apsmpi_reduction_int_counts(recvcounts, comm, &why);

    if (counts == NULL)
        return apsmpi_passed_through(
            why, APSMPI_NEXT(Reduce_scatter_init_c)(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request));
    rc = reduce_scatter_init_ints(sendbuf, recvbuf, counts, recvcounts, datatype, op, comm, info, request);
    free(counts);
    return rc;
}

int apsmpi_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (recvcount > INT_MAX)
        return apsmpi_passed_through(
            APSMPI_STAT_PASS_LARGE_COUNT,
            APSMPI_NEXT(Reduce_scatter_block_init_c)(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request));
    PERSISTENT_REDUCTION(
        APSMPI_REDUCE_SCATTER_BLOCK, NULL, (int)recvcount,
        APSMPI_NEXT(Reduce_scatter_block_init_c)(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request));
}
#endif

int apsmpi_Start(MPI_Request *request)
{
    int rc;

    if (apsmpi_request_start(request, &rc))
        return rc;
    return APSMPI_NEXT(Start)(request);
}

int apsmpi_Startall(int count, MPI_Request array_of_requests[])
{
    int rc = MPI_SUCCESS;

    /* one at a time, in array order: each of apsmpi's in its turn among the MPI's own */
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        if (!apsmpi_request_start(&array_of_requests[i], &rc))
            rc = APSMPI_NEXT(Start)(&array_of_requests[i]);
    return rc;
}

/* ---- completion: MPI's own calls, with apsmpi's requests progressed first ---- */

/* How many of requests[0..n) are complete, asked without completing any
 * (MPI_Request_get_status: nothing is freed or made inactive); -1 on an MPI error, which the
 * MPI's own wait then reports. */
static int complete_count(int n, const MPI_Request requests[])
{
    int done = 0;
    for (int i = 0; i < n; i++) {
        int flag = 0;
        if (PMPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        done += flag != 0;
    }
    return done;
}

/* A wait: while apsmpi has requests outstanding, they progress until the requests waited for
 * are complete as the wait needs them (`ready`: all of them, or one), asked without completing
 * any; then, and when apsmpi has nothing outstanding, the MPI's own wait, unchanged, which
 * returns at once (and completes, frees and reports as it does). The MPI's test forms are not
 * used for this: MPICH 4's MPI_Testall fails (MPI_ERR_IN_STATUS) on a persistent collective
 * request beside a persistent receive that has not completed, which its MPI_Waitall does not. */
#define WAIT_WITH_PROGRESS(n, requests, ready, next_wait) \
    do {                                                  \
        while (apsmpi_requests_outstanding()) {           \
            int done;                                     \
            apsmpi_requests_progress();                   \
            done = complete_count(n, requests);           \
            if (done < 0 || (ready))                      \
                break;                                    \
            sched_yield();                                \
        }                                                 \
        return next_wait;                                 \
    } while (0)

int apsmpi_Wait(MPI_Request *request, MPI_Status *status)
{
    WAIT_WITH_PROGRESS(1, request, done == 1, APSMPI_NEXT(Wait)(request, status));
}

int apsmpi_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    WAIT_WITH_PROGRESS(count, array_of_requests, done == count,
                       APSMPI_NEXT(Waitall)(count, array_of_requests, array_of_statuses));
}

/* (Waitany and Waitsome: ready when one is complete; MPI_REQUEST_NULL and inactive requests
 * count as complete for MPI_Request_get_status, but the MPI's wait skips them: they are ready
 * only when all are, and the MPI's call then returns at once as well.) */
static int any_active_complete(int n, const MPI_Request requests[])
{
    for (int i = 0; i < n; i++) {
        int flag = 0;
        if (requests[i] != MPI_REQUEST_NULL &&
            PMPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag)
            return 1;
    }
    return 0;
}

int apsmpi_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    WAIT_WITH_PROGRESS(count, array_of_requests, done == count || any_active_complete(count, array_of_requests),
                       APSMPI_NEXT(Waitany)(count, array_of_requests, index, status));
}

int apsmpi_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                    MPI_Status array_of_statuses[])
{
    WAIT_WITH_PROGRESS(
        incount, array_of_requests, done == incount || any_active_complete(incount, array_of_requests),
        APSMPI_NEXT(Waitsome)(incount, array_of_requests, outcount, array_of_indices, array_of_statuses));
}

int apsmpi_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    apsmpi_requests_progress();
    return APSMPI_NEXT(Test)(request, flag, status);
}

int apsmpi_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    apsmpi_requests_progress();
    return APSMPI_NEXT(Testall)(count, array_of_requests, flag, array_of_statuses);
}

int apsmpi_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    apsmpi_requests_progress();
    return APSMPI_NEXT(Testany)(count, array_of_requests, index, flag, status);
}

int apsmpi_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                    MPI_Status array_of_statuses[])
{
    apsmpi_requests_progress();
    return APSMPI_NEXT(Testsome)(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int apsmpi_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    apsmpi_requests_progress();
    return APSMPI_NEXT(Request_get_status)(request, flag, status);
}

int apsmpi_Request_free(MPI_Request *request)
{
    int rc;

    if (apsmpi_request_free(request, &rc))
        return rc;
    return APSMPI_NEXT(Request_free)(request);
}

int apsmpi_Cancel(MPI_Request *request)
{
    int rc;

    if (apsmpi_request_cancel(request, &rc))
        return rc;
    return APSMPI_NEXT(Cancel)(request);
}
