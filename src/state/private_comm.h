/* private_comm.h: a private duplicate of each communicator the library sends its own messages on, cached on it. */
#ifndef APSMPI_PRIVATE_COMM_H
#define APSMPI_PRIVATE_COMM_H

#include <mpi.h>

/* Prepares and releases the cache (at MPI_Init and MPI_Finalize). MPI error codes. */
int apsmpi_private_comm_init(void);
void apsmpi_private_comm_finalize(void);

/* The private duplicate of comm, so that the library's messages can never match the job's
 * own; made on first use (a collective call, made by every rank of comm at the same call).
 * Returns MPI_SUCCESS or an MPI error code. */
int apsmpi_private_comm(MPI_Comm comm, MPI_Comm *out);

#endif
