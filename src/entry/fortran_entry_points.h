/* fortran_entry_points.h: the Fortran MPI entry points apsmpi intercepts, per MPI library, their C-level parameters written once; wrappers/fortran_wrappers.c exports them. */
#ifndef APSMPI_FORTRAN_ENTRY_POINTS_H
#define APSMPI_FORTRAN_ENTRY_POINTS_H

#include <mpi.h>

/* A Fortran binding passes every argument by reference: buffers as addresses, INTEGERs and
 * handles (mpif.h and `use mpi`: INTEGER; `use mpi_f08`: a TYPE holding one INTEGER) as
 * MPI_Fint *, and ierror last, which `use mpi_f08` makes OPTIONAL (NULL when left out).
 * X(lower, UPPER, Name) for each function, where Name is that of the C entry MPI_<Name>.
 *
 * Which symbols a job's Fortran code calls, and whether they reach MPI_<Name> (which
 * apsmpi's C wrappers intercept) or PMPI_<Name> (which they cannot), depends on the MPI:
 *   Open MPI 4.1: mpif.h and `use mpi` call mpi_<lower>_ (also exported as mpi_<lower>,
 *     mpi_<lower>__ and MPI_<UPPER>), `use mpi_f08` calls mpi_<lower>_f08_; all of them go
 *     to PMPI_<Name>: every one is intercepted here.
 *   MPICH 4: mpif.h, `use mpi` and the reductions of `use mpi_f08` call MPI_<Name>, which
 *     the C wrappers already intercept; `use mpi_f08`'s init and finalize, and its calls
 *     that start, wait for, test, free and cancel requests, mpi_<lower>_f08_, go to
 *     PMPI_<Name>: those are intercepted here. */
/* The calls that complete, free or cancel requests (MPICH's `use mpi_f08` calls PMPI_* for
 * these, and for MPI_Start and MPI_Startall, though MPI_* for the reductions). */
#define APSMPI_FORTRAN_COMPLETION(X)                              \
    X(wait, WAIT, Wait)                                           \
    X(waitall, WAITALL, Waitall)                                  \
    X(waitany, WAITANY, Waitany)                                  \
    X(waitsome, WAITSOME, Waitsome)                               \
    X(test, TEST, Test)                                           \
    X(testall, TESTALL, Testall)                                  \
    X(testany, TESTANY, Testany)                                  \
    X(testsome, TESTSOME, Testsome)                               \
    X(request_get_status, REQUEST_GET_STATUS, Request_get_status) \
    X(request_free, REQUEST_FREE, Request_free)                   \
    X(cancel, CANCEL, Cancel)

#if defined(OMPI_MAJOR_VERSION)
#define APSMPI_FORTRAN_MPIFH(X)                                            \
    X(init, INIT, Init)                                                    \
    X(init_thread, INIT_THREAD, Init_thread)                               \
    X(finalize, FINALIZE, Finalize)                                        \
    X(allreduce, ALLREDUCE, Allreduce)                                     \
    X(reduce_scatter, REDUCE_SCATTER, Reduce_scatter)                      \
    X(reduce_scatter_block, REDUCE_SCATTER_BLOCK, Reduce_scatter_block)    \
    X(iallreduce, IALLREDUCE, Iallreduce)                                  \
    X(ireduce_scatter, IREDUCE_SCATTER, Ireduce_scatter)                   \
    X(ireduce_scatter_block, IREDUCE_SCATTER_BLOCK, Ireduce_scatter_block) \
    APSMPI_FORTRAN_COMPLETION(X)
#define APSMPI_FORTRAN_F08(X) APSMPI_FORTRAN_MPIFH(X)
#elif defined(MPICH_VERSION)
#define APSMPI_FORTRAN_MPIFH(X)
#define APSMPI_FORTRAN_F08(X)                \
    X(init, INIT, Init)                      \
    X(init_thread, INIT_THREAD, Init_thread) \
    X(finalize, FINALIZE, Finalize)          \
    APSMPI_FORTRAN_COMPLETION(X)             \
    APSMPI_FORTRAN_START(X)
#if MPI_VERSION >= 4 /* the persistent reductions */
#define APSMPI_FORTRAN_START(X) \
    X(start, START, Start)      \
    X(startall, STARTALL, Startall)
#else
#define APSMPI_FORTRAN_START(X)
#endif
#else
#define APSMPI_FORTRAN_MPIFH(X)
#define APSMPI_FORTRAN_F08(X)
#endif

/* The parameter and argument lists, without parentheses (an implementation adds one in front). */
#define APSMPI_FPARAMS_init MPI_Fint *ierror
#define APSMPI_FARGS_init ierror
#define APSMPI_FPARAMS_init_thread const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror
#define APSMPI_FARGS_init_thread required, provided, ierror
#define APSMPI_FPARAMS_finalize MPI_Fint *ierror
#define APSMPI_FARGS_finalize ierror
#define APSMPI_FPARAMS_allreduce                                                                             \
    const void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *op, \
        const MPI_Fint *comm, MPI_Fint *ierror
#define APSMPI_FARGS_allreduce sendbuf, recvbuf, count, datatype, op, comm, ierror
#define APSMPI_FPARAMS_reduce_scatter                                                                             \
    const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *datatype, const MPI_Fint *op, \
        const MPI_Fint *comm, MPI_Fint *ierror
#define APSMPI_FARGS_reduce_scatter sendbuf, recvbuf, recvcounts, datatype, op, comm, ierror
#define APSMPI_FPARAMS_reduce_scatter_block                                                                      \
    const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *datatype, const MPI_Fint *op, \
        const MPI_Fint *comm, MPI_Fint *ierror
#define APSMPI_FARGS_reduce_scatter_block sendbuf, recvbuf, recvcount, datatype, op, comm, ierror

#define APSMPI_FPARAMS_iallreduce                                                                            \
    const void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *op, \
        const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror
#define APSMPI_FARGS_iallreduce sendbuf, recvbuf, count, datatype, op, comm, request, ierror
#define APSMPI_FPARAMS_ireduce_scatter                                                                            \
    const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *datatype, const MPI_Fint *op, \
        const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror
#define APSMPI_FARGS_ireduce_scatter sendbuf, recvbuf, recvcounts, datatype, op, comm, request, ierror
#define APSMPI_FPARAMS_ireduce_scatter_block                                                                     \
    const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *datatype, const MPI_Fint *op, \
        const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror
#define APSMPI_FARGS_ireduce_scatter_block sendbuf, recvbuf, recvcount, datatype, op, comm, request, ierror
/* (statuses and LOGICAL flags go to the MPI's own entries as they came) */
#define APSMPI_FPARAMS_wait MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror
#define APSMPI_FARGS_wait request, status, ierror
#define APSMPI_FPARAMS_test MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror
#define APSMPI_FARGS_test request, flag, status, ierror
#define APSMPI_FPARAMS_waitall const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierror
#define APSMPI_FARGS_waitall count, requests, statuses, ierror
#define APSMPI_FPARAMS_testall \
    const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierror
#define APSMPI_FARGS_testall count, requests, flag, statuses, ierror
#define APSMPI_FPARAMS_waitany \
    const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierror
#define APSMPI_FARGS_waitany count, requests, index, status, ierror
#define APSMPI_FPARAMS_testany \
    const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror
#define APSMPI_FARGS_testany count, requests, index, flag, status, ierror
#define APSMPI_FPARAMS_waitsome                                                                             \
    const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses, \
        MPI_Fint *ierror
#define APSMPI_FARGS_waitsome incount, requests, outcount, indices, statuses, ierror
#define APSMPI_FPARAMS_testsome APSMPI_FPARAMS_waitsome
#define APSMPI_FARGS_testsome APSMPI_FARGS_waitsome
#define APSMPI_FPARAMS_request_get_status const MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror
#define APSMPI_FARGS_request_get_status request, flag, status, ierror
#define APSMPI_FPARAMS_request_free MPI_Fint *request, MPI_Fint *ierror
#define APSMPI_FARGS_request_free request, ierror
#define APSMPI_FPARAMS_cancel MPI_Fint *request, MPI_Fint *ierror
#define APSMPI_FARGS_cancel request, ierror
#define APSMPI_FPARAMS_start MPI_Fint *request, MPI_Fint *ierror
#define APSMPI_FARGS_start request, ierror
#define APSMPI_FPARAMS_startall const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierror
#define APSMPI_FARGS_startall count, requests, ierror

/* The two Fortran bindings. */
enum apsmpi_fortran_binding { APSMPI_FORTRAN_BINDING_MPIFH, APSMPI_FORTRAN_BINDING_F08 };

/* apsmpi's implementation of the Fortran MPI_<Name>, called with the binding it came from
 * (entry/fortran_calls.c). */
#define APSMPI_FORTRAN_IMPL(lower) \
    void apsmpi_fortran_##lower(enum apsmpi_fortran_binding binding, APSMPI_FPARAMS_##lower)

#define APSMPI_DECLARE_FORTRAN_IMPL(lower, UPPER, Name) APSMPI_FORTRAN_IMPL(lower);
APSMPI_FORTRAN_F08(APSMPI_DECLARE_FORTRAN_IMPL)
#undef APSMPI_DECLARE_FORTRAN_IMPL

#endif
