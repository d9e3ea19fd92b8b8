/* fortran_entry_points.h: the Fortran MPI calls apsmpi intercepts: each one's C-level parameters, written once as a function type, and apsmpi's implementation of it (entry/fortran_calls.c). */
#ifndef APSMPI_FORTRAN_ENTRY_POINTS_H
#define APSMPI_FORTRAN_ENTRY_POINTS_H

#include <mpi.h>

/* A Fortran binding passes every argument by reference: buffers as addresses, INTEGERs and
 * handles (mpif.h and `use mpi`: INTEGER; `use mpi_f08`: a TYPE holding one INTEGER) as
 * MPI_Fint *, and ierror last, which `use mpi_f08` makes OPTIONAL (NULL when left out).
 *
 * Which symbols a job's Fortran code calls, and whether they reach MPI_<Name> (which
 * apsmpi's C wrappers intercept) or PMPI_<Name> (which they cannot), depends on the MPI;
 * wrappers/fortran_wrappers.c exports, for each MPI, the symbols that need it:
 *   Open MPI 4.1: mpif.h and `use mpi` call mpi_<name>_ (also exported as mpi_<name>,
 *     mpi_<name>__ and MPI_<NAME>), `use mpi_f08` calls mpi_<name>_f08_; all of them go
 *     to PMPI_<Name>: every one is intercepted.
 *   MPICH 4: mpif.h, `use mpi` and the reductions of `use mpi_f08` call MPI_<Name>, which
 *     the C wrappers already intercept; `use mpi_f08`'s init and finalize, and its calls that
 *     wait for, test, free, cancel and (MPI 4) start requests, mpi_<name>_f08_, go to
 *     PMPI_<Name>: those are intercepted. */

/* The binding a call came from, which names the MPI's own entry that takes it on: mpif.h and
 * `use mpi` share one set of symbols, `use mpi_f08` has its own. */
enum apsmpi_fortran_binding { APSMPI_FORTRAN_BINDING_MPIFH, APSMPI_FORTRAN_BINDING_F08 };

/* The parameters of each intercepted call, as C sees them. Every symbol that takes the call
 * is declared with its type: apsmpi's exported entries (wrappers/fortran_wrappers.c) and the
 * MPI's own, called through a pointer of that type (entry/fortran_calls.c). */
typedef void apsmpi_fortran_init_fn(MPI_Fint *ierror);
typedef void apsmpi_fortran_init_thread_fn(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror);
typedef void apsmpi_fortran_finalize_fn(MPI_Fint *ierror);
typedef void apsmpi_fortran_allreduce_fn(const void *sendbuf, void *recvbuf, const MPI_Fint *count,
                                         const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                                         MPI_Fint *ierror);
typedef void apsmpi_fortran_reduce_scatter_fn(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts,
                                              const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                                              MPI_Fint *ierror);
typedef void apsmpi_fortran_reduce_scatter_block_fn(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount,
                                                    const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                                                    MPI_Fint *ierror);

/* The non-blocking reductions (Open MPI's Fortran calls PMPI_*; MPICH's reach the C wrappers). */
typedef void apsmpi_fortran_iallreduce_fn(const void *sendbuf, void *recvbuf, const MPI_Fint *count,
                                          const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                                          MPI_Fint *request, MPI_Fint *ierror);
typedef void apsmpi_fortran_ireduce_scatter_fn(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts,
                                               const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                                               MPI_Fint *request, MPI_Fint *ierror);
typedef void apsmpi_fortran_ireduce_scatter_block_fn(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount,
                                                     const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                                                     MPI_Fint *request, MPI_Fint *ierror);
/* The calls that complete, free, cancel or start requests (statuses and LOGICAL flags go to
 * the MPI's own entries as they came). */
typedef void apsmpi_fortran_wait_fn(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror);
typedef void apsmpi_fortran_test_fn(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror);
typedef void apsmpi_fortran_waitall_fn(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierror);
typedef void apsmpi_fortran_testall_fn(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                                       MPI_Fint *ierror);
typedef void apsmpi_fortran_waitany_fn(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                                       MPI_Fint *ierror);
typedef void apsmpi_fortran_testany_fn(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                                       MPI_Fint *status, MPI_Fint *ierror);
typedef void apsmpi_fortran_waitsome_fn(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                                        MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror);
typedef apsmpi_fortran_waitsome_fn apsmpi_fortran_testsome_fn;
typedef void apsmpi_fortran_request_get_status_fn(const MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status,
                                                  MPI_Fint *ierror);
typedef void apsmpi_fortran_request_free_fn(MPI_Fint *request, MPI_Fint *ierror);
typedef void apsmpi_fortran_cancel_fn(MPI_Fint *request, MPI_Fint *ierror);
typedef void apsmpi_fortran_start_fn(MPI_Fint *request, MPI_Fint *ierror);
typedef void apsmpi_fortran_startall_fn(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierror);

/* apsmpi's implementation of each call: the binding it came from, then the call's arguments.
 * Init and finalize wrap the MPI's own; a REAL sum goes to the C entry (entry_points.h),
 * which compresses it or passes it on; anything else goes to the MPI's own Fortran entry. */
void apsmpi_fortran_init(enum apsmpi_fortran_binding binding, MPI_Fint *ierror);
void apsmpi_fortran_init_thread(enum apsmpi_fortran_binding binding, const MPI_Fint *required, MPI_Fint *provided,
                                MPI_Fint *ierror);
void apsmpi_fortran_finalize(enum apsmpi_fortran_binding binding, MPI_Fint *ierror);
void apsmpi_fortran_allreduce(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                              const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                              MPI_Fint *ierror);
void apsmpi_fortran_reduce_scatter(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                   const MPI_Fint *recvcounts, const MPI_Fint *datatype, const MPI_Fint *op,
                                   const MPI_Fint *comm, MPI_Fint *ierror);
void apsmpi_fortran_reduce_scatter_block(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                         const MPI_Fint *recvcount, const MPI_Fint *datatype, const MPI_Fint *op,
                                         const MPI_Fint *comm, MPI_Fint *ierror);

/* The non-blocking reductions: a REAL sum to the C entry, with the request converted. */
void apsmpi_fortran_iallreduce(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                               const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *op,
                               const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror);
void apsmpi_fortran_ireduce_scatter(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                    const MPI_Fint *recvcounts, const MPI_Fint *datatype, const MPI_Fint *op,
                                    const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror);
void apsmpi_fortran_ireduce_scatter_block(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                          const MPI_Fint *recvcount, const MPI_Fint *datatype, const MPI_Fint *op,
                                          const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror);
/* Completion: apsmpi's requests progress, then the MPI's own Fortran entry takes the call;
 * free and cancel of apsmpi's requests, and start of its persistent ones, done here. */
void apsmpi_fortran_wait(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror);
void apsmpi_fortran_test(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status,
                         MPI_Fint *ierror);
void apsmpi_fortran_waitall(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *statuses, MPI_Fint *ierror);
void apsmpi_fortran_testall(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierror);
void apsmpi_fortran_waitany(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierror);
void apsmpi_fortran_testany(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror);
void apsmpi_fortran_waitsome(enum apsmpi_fortran_binding binding, const MPI_Fint *incount, MPI_Fint *requests,
                             MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror);
void apsmpi_fortran_testsome(enum apsmpi_fortran_binding binding, const MPI_Fint *incount, MPI_Fint *requests,
                             MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror);
void apsmpi_fortran_request_get_status(enum apsmpi_fortran_binding binding, const MPI_Fint *request, MPI_Fint *flag,
                                       MPI_Fint *status, MPI_Fint *ierror);
void apsmpi_fortran_request_free(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *ierror);
void apsmpi_fortran_cancel(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *ierror);
void apsmpi_fortran_start(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *ierror);
void apsmpi_fortran_startall(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                             MPI_Fint *ierror);

#endif
