/* mpi_signatures.h: every MPI function apsmpi intercepts, its parameter and argument lists written once, for the forwarders. */
#ifndef APSMPI_MPI_SIGNATURES_H
#define APSMPI_MPI_SIGNATURES_H

#include "build_config.h"
#include <mpi.h>

#include "entry/next_calls.h"

/* Symbols the library exports (it is built with -fvisibility=hidden): only the MPI entry
 * points (C here, Fortran in fortran_wrappers.c). */
#define APSMPI_EXPORT __attribute__((visibility("default")))

/* X(name) for each wrapped function MPI_<name> (all of them return int): the list of
 * src/entry/next_calls.h. */
#define APSMPI_WRAPPED(X) APSMPI_INTERCEPTED(X)

#define APSMPI_PARAMS_Init (int *argc, char ***argv)
#define APSMPI_ARGS_Init (argc, argv)
#define APSMPI_PARAMS_Init_thread (int *argc, char ***argv, int required, int *provided)
#define APSMPI_ARGS_Init_thread (argc, argv, required, provided)
#define APSMPI_PARAMS_Finalize (void)
#define APSMPI_ARGS_Finalize ()
#define APSMPI_PARAMS_Comm_dup (MPI_Comm comm, MPI_Comm * newcomm)
#define APSMPI_ARGS_Comm_dup (comm, newcomm)
#define APSMPI_PARAMS_Comm_dup_with_info (MPI_Comm comm, MPI_Info info, MPI_Comm * newcomm)
#define APSMPI_ARGS_Comm_dup_with_info (comm, info, newcomm)
#define APSMPI_PARAMS_Comm_split (MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
#define APSMPI_ARGS_Comm_split (comm, color, key, newcomm)
#define APSMPI_PARAMS_Comm_split_type (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
#define APSMPI_ARGS_Comm_split_type (comm, split_type, key, info, newcomm)
#define APSMPI_PARAMS_Comm_create (MPI_Comm comm, MPI_Group group, MPI_Comm * newcomm)
#define APSMPI_ARGS_Comm_create (comm, group, newcomm)
#define APSMPI_PARAMS_Comm_create_group (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
#define APSMPI_ARGS_Comm_create_group (comm, group, tag, newcomm)
#define APSMPI_PARAMS_Allreduce \
    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Allreduce (sendbuf, recvbuf, count, datatype, op, comm)
#define APSMPI_PARAMS_Reduce_scatter \
    (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Reduce_scatter (sendbuf, recvbuf, recvcounts, datatype, op, comm)
#define APSMPI_PARAMS_Reduce_scatter_block \
    (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Reduce_scatter_block (sendbuf, recvbuf, recvcount, datatype, op, comm)

#define APSMPI_PARAMS_Iallreduce                                                                     \
    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Request *request)
#define APSMPI_ARGS_Iallreduce (sendbuf, recvbuf, count, datatype, op, comm, request)
#define APSMPI_PARAMS_Ireduce_scatter                                                                             \
    (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Request *request)
#define APSMPI_ARGS_Ireduce_scatter (sendbuf, recvbuf, recvcounts, datatype, op, comm, request)
#define APSMPI_PARAMS_Ireduce_scatter_block                                                              \
    (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Request *request)
#define APSMPI_ARGS_Ireduce_scatter_block (sendbuf, recvbuf, recvcount, datatype, op, comm, request)
#define APSMPI_PARAMS_Allreduce_init                                                                                \
    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, \
     MPI_Request *request)
#define APSMPI_ARGS_Allreduce_init (sendbuf, recvbuf, count, datatype, op, comm, info, request)
#define APSMPI_PARAMS_Reduce_scatter_init                                                                         \
    (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Info info, MPI_Request *request)
#define APSMPI_ARGS_Reduce_scatter_init (sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request)
#define APSMPI_PARAMS_Reduce_scatter_block_init                                                          \
    (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Info info, MPI_Request *request)
#define APSMPI_ARGS_Reduce_scatter_block_init (sendbuf, recvbuf, recvcount, datatype, op, comm, info, request)
#define APSMPI_PARAMS_Allreduce_c \
    (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Allreduce_c APSMPI_ARGS_Allreduce
#define APSMPI_PARAMS_Reduce_scatter_c \
    (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Reduce_scatter_c APSMPI_ARGS_Reduce_scatter
#define APSMPI_PARAMS_Reduce_scatter_block_c \
    (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define APSMPI_ARGS_Reduce_scatter_block_c APSMPI_ARGS_Reduce_scatter_block
#define APSMPI_PARAMS_Iallreduce_c                                                                         \
    (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Request *request)
#define APSMPI_ARGS_Iallreduce_c APSMPI_ARGS_Iallreduce
#define APSMPI_PARAMS_Ireduce_scatter_c                                                                  \
    (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, \
     MPI_Comm comm, MPI_Request *request)
#define APSMPI_ARGS_Ireduce_scatter_c APSMPI_ARGS_Ireduce_scatter
#define APSMPI_PARAMS_Ireduce_scatter_block_c                                                                  \
    (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Request *request)
#define APSMPI_ARGS_Ireduce_scatter_block_c APSMPI_ARGS_Ireduce_scatter_block
#define APSMPI_PARAMS_Allreduce_init_c                                                                     \
    (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Info info, MPI_Request *request)
#define APSMPI_ARGS_Allreduce_init_c APSMPI_ARGS_Allreduce_init
#define APSMPI_PARAMS_Reduce_scatter_init_c                                                              \
    (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, \
     MPI_Comm comm, MPI_Info info, MPI_Request *request)
#define APSMPI_ARGS_Reduce_scatter_init_c APSMPI_ARGS_Reduce_scatter_init
#define APSMPI_PARAMS_Reduce_scatter_block_init_c                                                              \
    (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
     MPI_Info info, MPI_Request *request)
#define APSMPI_ARGS_Reduce_scatter_block_init_c APSMPI_ARGS_Reduce_scatter_block_init
#define APSMPI_PARAMS_Start (MPI_Request * request)
#define APSMPI_ARGS_Start (request)
#define APSMPI_PARAMS_Startall (int count, MPI_Request array_of_requests[])
#define APSMPI_ARGS_Startall (count, array_of_requests)
#define APSMPI_PARAMS_Wait (MPI_Request * request, MPI_Status * status)
#define APSMPI_ARGS_Wait (request, status)
#define APSMPI_PARAMS_Waitall (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
#define APSMPI_ARGS_Waitall (count, array_of_requests, array_of_statuses)
#define APSMPI_PARAMS_Waitany (int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
#define APSMPI_ARGS_Waitany (count, array_of_requests, index, status)
#define APSMPI_PARAMS_Waitsome                                                            \
    (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], \
     MPI_Status array_of_statuses[])
#define APSMPI_ARGS_Waitsome (incount, array_of_requests, outcount, array_of_indices, array_of_statuses)
#define APSMPI_PARAMS_Test (MPI_Request * request, int *flag, MPI_Status *status)
#define APSMPI_ARGS_Test (request, flag, status)
#define APSMPI_PARAMS_Testall (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
#define APSMPI_ARGS_Testall (count, array_of_requests, flag, array_of_statuses)
#define APSMPI_PARAMS_Testany (int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
#define APSMPI_ARGS_Testany (count, array_of_requests, index, flag, status)
#define APSMPI_PARAMS_Testsome APSMPI_PARAMS_Waitsome
#define APSMPI_ARGS_Testsome APSMPI_ARGS_Waitsome
#define APSMPI_PARAMS_Request_get_status (MPI_Request request, int *flag, MPI_Status *status)
#define APSMPI_ARGS_Request_get_status (request, flag, status)
#define APSMPI_PARAMS_Request_free (MPI_Request * request)
#define APSMPI_ARGS_Request_free (request)
#define APSMPI_PARAMS_Cancel (MPI_Request * request)
#define APSMPI_ARGS_Cancel (request)

#endif
