/* entry_points.h: apsmpi's implementations of the intercepted MPI functions, with MPI's parameters; wrappers/ forwards MPI_* to them. */
#ifndef APSMPI_ENTRY_POINTS_H
#define APSMPI_ENTRY_POINTS_H

#include <mpi.h>

/* entry/init_finalize.c: MPI's own init, then apsmpi reads and agrees on its settings
 * (stopping the job with one line if they are bad or differ); finalize reports and frees. */
int apsmpi_Init(int *argc, char ***argv);
int apsmpi_Init_thread(int *argc, char ***argv, int required, int *provided);
int apsmpi_Finalize(void);

/* entry/reductions.c: eligible calls (MPI_FLOAT/MPI_REAL/MPI_REAL4, MPI_SUM, an
 * intracommunicator, at least APSMPI_MIN_BYTES) are compressed, the others handed to
 * PMPI_* unchanged. */
int apsmpi_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int apsmpi_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm);
int apsmpi_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm);

#endif
