/* mpi_signatures.h: every MPI function apsmpi intercepts, its parameter and argument lists written once, for the forwarders. */
#ifndef APSMPI_MPI_SIGNATURES_H
#define APSMPI_MPI_SIGNATURES_H

#include <mpi.h>

/* Symbols the library exports (it is built with -fvisibility=hidden): only the MPI entry
 * points (C here, Fortran in fortran_wrappers.c). */
#define APSMPI_EXPORT __attribute__((visibility("default")))

/* X(name) for each wrapped function MPI_<name>; all of them return int. */
#define APSMPI_WRAPPED(X) \
    X(Init)               \
    X(Init_thread)        \
    X(Finalize)           \
    X(Allreduce)          \
    X(Reduce_scatter)     \
    X(Reduce_scatter_block)

#define APSMPI_PARAMS_Init (int *argc, char ***argv)
#define APSMPI_ARGS_Init (argc, argv)
#define APSMPI_PARAMS_Init_thread (int *argc, char ***argv, int required, int *provided)
#define APSMPI_ARGS_Init_thread (argc, argv, required, provided)
#define APSMPI_PARAMS_Finalize (void)
#define APSMPI_ARGS_Finalize ()
#define APSMPI_PARAMS_Allreduce \
    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Allreduce (sendbuf, recvbuf, count, datatype, op, comm)
#define APSMPI_PARAMS_Reduce_scatter \
    (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Reduce_scatter (sendbuf, recvbuf, recvcounts, datatype, op, comm)
#define APSMPI_PARAMS_Reduce_scatter_block \
    (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Reduce_scatter_block (sendbuf, recvbuf, recvcount, datatype, op, comm)

#endif
