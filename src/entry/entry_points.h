/* entry_points.h: apsmpi's implementations of the intercepted MPI functions, with MPI's parameters; wrappers/ forwards MPI_* to them. */
#ifndef APSMPI_ENTRY_POINTS_H
#define APSMPI_ENTRY_POINTS_H

#include "build_config.h"
#include <mpi.h>

/* entry/init_finalize.c: MPI's own init, then apsmpi reads and agrees on its settings
 * (stopping the job with one line if they are bad or differ); finalize reports and frees. */
int apsmpi_Init(int *argc, char ***argv);
int apsmpi_Init_thread(int *argc, char ***argv, int required, int *provided);
int apsmpi_Finalize(void);

/* The halves of init and finalize around the MPI's own, for the Fortran entries
 * (entry/fortran_calls.c), which call the MPI's Fortran init and finalize: after init,
 * apsmpi reads and agrees on its settings (once per job); before finalize, it reports and
 * frees. */
void apsmpi_runtime_after_init(void);
void apsmpi_runtime_before_finalize(void);

/* entry/communicators.c: the communicator constructors: the MPI's own, then the new
 * communicator prepared for requests (state/comm_prepare.h). */
int apsmpi_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int apsmpi_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int apsmpi_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int apsmpi_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm);
int apsmpi_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int apsmpi_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);

/* entry/blocking.c (with entry/reductions.c): eligible calls (MPI_FLOAT/MPI_REAL/MPI_REAL4, MPI_SUM, an
 * intracommunicator, at least APSMPI_MIN_BYTES) are compressed, the others handed to
 * PMPI_* unchanged. */
int apsmpi_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int apsmpi_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm);
int apsmpi_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm);

/* entry/nonblocking.c: the non-blocking reductions, eligible as the blocking ones, become
 * apsmpi's requests (entry/requests.h); the others go to PMPI_I* unchanged. The persistent
 * forms where the MPI has them (build_config.h). The calls that start, test, wait for, free and
 * cancel requests: apsmpi's requests progress in them, then the MPI's own call takes them
 * (apsmpi's requests are real MPI requests). */
int apsmpi_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request *request);
int apsmpi_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm, MPI_Request *request);
int apsmpi_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *request);
#ifdef APSMPI_HAVE_PERSISTENT_REDUCTIONS
int apsmpi_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request);
int apsmpi_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int apsmpi_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
#endif
/* The large-count forms (MPI 4), where the MPI has them (build_config.h): as their int forms
 * where every count fits an int (blocking.c, nonblocking.c), else the MPI's own. */
#ifdef APSMPI_HAVE_LARGE_COUNT_REDUCTIONS
int apsmpi_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm);
int apsmpi_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm);
int apsmpi_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm);
int apsmpi_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request *request);
int apsmpi_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Request *request);
int apsmpi_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Request *request);
#endif
#if defined(APSMPI_HAVE_LARGE_COUNT_PERSISTENT_REDUCTIONS) && defined(APSMPI_HAVE_PERSISTENT_REDUCTIONS)
int apsmpi_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request);
int apsmpi_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int apsmpi_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
#endif
int apsmpi_Start(MPI_Request *request);
int apsmpi_Startall(int count, MPI_Request array_of_requests[]);
int apsmpi_Wait(MPI_Request *request, MPI_Status *status);
int apsmpi_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int apsmpi_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int apsmpi_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                    MPI_Status array_of_statuses[]);
int apsmpi_Test(MPI_Request *request, int *flag, MPI_Status *status);
int apsmpi_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]);
int apsmpi_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status);
int apsmpi_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                    MPI_Status array_of_statuses[]);
int apsmpi_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int apsmpi_Request_free(MPI_Request *request);
int apsmpi_Cancel(MPI_Request *request);

#endif
