/* private_comm.h: a private duplicate of each communicator the library sends its own messages on, cached on it. */
#ifndef APSMPI_PRIVATE_COMM_H
#define APSMPI_PRIVATE_COMM_H

#include <mpi.h>

/* What is cached on a communicator (private_comm.c): its duplicate and the count of its
 * pipelined calls. Counted references: the communicator's attribute holds one, and each
 * request that runs on it holds one from its start to its end, so that the job may free its
 * communicator while a request on it is pending (MPI allows it). */
typedef struct apsmpi_private_comm apsmpi_private_comm_t;

/* Prepares and releases the cache (at MPI_Init and MPI_Finalize). MPI error codes. */
int apsmpi_private_comm_init(void);
void apsmpi_private_comm_finalize(void);

/* The private duplicate of comm, so that the library's messages can never match the job's
 * own; made on first use (a collective call, made by every rank of comm at the same call).
 * Returns MPI_SUCCESS or an MPI error code. */
int apsmpi_private_comm(MPI_Comm comm, MPI_Comm *out);

/* comm's cached duplicate if it has one (no MPI collective: for a call that may not wait),
 * with a reference taken for the caller (apsmpi_private_comm_release gives it back); NULL
 * if comm has none. */
apsmpi_private_comm_t *apsmpi_private_comm_hold(MPI_Comm comm);
void apsmpi_private_comm_release(apsmpi_private_comm_t *held);

/* The duplicate that held caches. */
MPI_Comm apsmpi_private_comm_dup_of(const apsmpi_private_comm_t *held);

/* Tags one pipelined call may use, from its tag base: 32767, the least MPI_TAG_UB of any MPI. */
#define APSMPI_CALL_TAGS 32768

/* The same, for one pipelined call (every rank of comm makes the same calls in the same
 * order), and that call's tag base: its messages use tags [tag_base, tag_base +
 * APSMPI_CALL_TAGS). Successive calls on comm take successive ranges, as many as MPI_TAG_UB
 * leaves room for (65536 in Open MPI), so that messages a call left behind when it failed
 * cannot match the next calls'. held: the duplicate a request holds (then comm is not
 * looked at), or NULL. */
int apsmpi_private_comm_call(MPI_Comm comm, apsmpi_private_comm_t *held, MPI_Comm *out, int *tag_base);

/* How many calls' tag ranges the duplicates have (the same on every communicator): the most
 * calls that may run at once on one communicator with tags of their own. */
int apsmpi_private_comm_tag_ranges(void);

#endif
