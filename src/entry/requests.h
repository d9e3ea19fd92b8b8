/* requests.h: apsmpi's own requests: the non-blocking and persistent reductions that a job holds as MPI_Request handles, their order per communicator, their progress (a thread, the job's test and wait calls), and their end. */
#ifndef APSMPI_REQUESTS_H
#define APSMPI_REQUESTS_H

#include <mpi.h>
#include <stddef.h>

/* How a request looks to the job (docs/design.md, "Requests"): a non-blocking call's is a
 * generalized request (PMPI_Grequest_start) that apsmpi completes when its reduction is done;
 * a persistent one's is a persistent receive of an empty message to this rank on a private
 * duplicate of MPI_COMM_SELF, which apsmpi sends at the end of each of its runs. Both are
 * real MPI requests: MPI_Test*, MPI_Wait*, MPI_Request_get_status and handle conversions work
 * on them as on any other, also in the MPI's own calls, mixed with the job's requests.
 *
 * Order: a request's collectives (its agreement, its fp32 call, the node path's) go on
 * apsmpi's own communicators (the private duplicate of the job's, the node
 * communicators), never the job's, so that they cannot meet the job's own collectives; and a
 * request advances only once every earlier request on its communicator has posted all of its
 * collectives, so that every rank posts them in one order (the order of the job's calls). */

/* Starts an eligible reduction (reductions.c's eligibility) that apsmpi_request_readiness
 * accepted as a non-blocking request: the
 * arguments of the job's call (kind: enum apsmpi_reduction_kind; total: the buffer's
 * elements); *handle receives the request. MPI_SUCCESS or an MPI error code. */
int apsmpi_request_issue(int kind, const void *sendbuf, void *recvbuf, const int *recvcounts, int count, size_t total,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *handle);

/* Makes an inactive persistent request for an eligible reduction (as above; recvcounts are
 * copied); MPI_Start starts it (apsmpi_request_start). */
int apsmpi_request_persistent(int kind, const void *sendbuf, void *recvbuf, const int *recvcounts, int count,
                              size_t total, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *handle);

/* Whether an eligible call on comm can become a request without a collective: 0 when it can
 * (comm was prepared: state/comm_prepare.h), else the statistic of why the MPI's own call
 * takes it: APSMPI_STAT_CALLS_ONE_NODE (comm lies on one node and APSMPI_INTRANODE=pass) or
 * APSMPI_STAT_PASS_UNPREPARED. Makes no MPI call but local ones. */
int apsmpi_request_readiness(MPI_Comm comm);

/* MPI_Start of a request: apsmpi's persistent request starts its reduction; 1 if it was one
 * of apsmpi's (*rc its result), 0 if the MPI's own must start it. */
int apsmpi_request_start(MPI_Request *handle, int *rc);

/* 1 while some request of apsmpi's is started and not complete. */
int apsmpi_requests_outstanding(void);

/* Makes every outstanding request advance as far as it can without waiting. */
void apsmpi_requests_progress(void);

/* MPI_Request_free and MPI_Cancel of one of apsmpi's requests: 1 if it was one (*rc the
 * result), 0 if the MPI's own must take the call. A request freed before it is complete
 * runs to its end and is then released; cancelling has no effect (a started collective
 * cannot be cancelled: it completes normally, MPI_Test_cancelled says false). */
int apsmpi_request_free(MPI_Request *handle, int *rc);
int apsmpi_request_cancel(const MPI_Request *handle, int *rc);

/* Before a blocking compressed call on comm: every request on comm has posted all of its
 * collectives (made to progress until it has), so that the call's own come after them. */
void apsmpi_requests_before_blocking(MPI_Comm comm);

/* At MPI_Init (after apsmpi's start): the thread level the MPI gave. At MPI_Finalize: every
 * request run to its end, the progress thread stopped, the pool freed. */
void apsmpi_requests_init(int thread_level);
void apsmpi_requests_finalize(void);

#endif
