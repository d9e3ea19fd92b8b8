/* fortran_wrappers.c: the Fortran MPI entry points (every name form of mpif.h, `use mpi` and `use mpi_f08`) that a preloaded libapsmpi.so puts in front of the MPI's. */
#include "entry/fortran_entry_points.h"
#include "mpi_signatures.h" /* APSMPI_EXPORT */

/* Each exported symbol hands its arguments to apsmpi_fortran_<name> with the binding it
 * serves; that compresses the call or gives it to the MPI's own Fortran entry. For mpif.h
 * and `use mpi` one function, mpi_<name>_ (gfortran's name), is exported under the three
 * other spellings the MPI's own library exports too (compilers append no, one or two
 * underscores, or use upper case), as aliases of it, exported as APSMPI_EXPORT does (the
 * attributes written out, so that tags find the names). `use mpi_f08`: mpi_<name>_f08_. Each
 * is declared with its call's type (fortran_entry_points.h), so that the compiler checks it
 * against the call's parameters. Which MPI needs which: fortran_entry_points.h. */
#define MPIFH APSMPI_FORTRAN_BINDING_MPIFH
#define F08 APSMPI_FORTRAN_BINDING_F08

#if defined(OMPI_MAJOR_VERSION)
/* ---- Open MPI, mpif.h and `use mpi` ---- */

APSMPI_EXPORT apsmpi_fortran_init_fn mpi_init_;
void mpi_init_(MPI_Fint *ierror) { apsmpi_fortran_init(MPIFH, ierror); }
apsmpi_fortran_init_fn mpi_init __attribute__((alias("mpi_init_"), visibility("default")));
apsmpi_fortran_init_fn mpi_init__ __attribute__((alias("mpi_init_"), visibility("default")));
apsmpi_fortran_init_fn MPI_INIT __attribute__((alias("mpi_init_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_init_thread_fn mpi_init_thread_;
void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    apsmpi_fortran_init_thread(MPIFH, required, provided, ierror);
}
apsmpi_fortran_init_thread_fn mpi_init_thread __attribute__((alias("mpi_init_thread_"), visibility("default")));
apsmpi_fortran_init_thread_fn mpi_init_thread__ __attribute__((alias("mpi_init_thread_"), visibility("default")));
apsmpi_fortran_init_thread_fn MPI_INIT_THREAD __attribute__((alias("mpi_init_thread_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_finalize_fn mpi_finalize_;
void mpi_finalize_(MPI_Fint *ierror) { apsmpi_fortran_finalize(MPIFH, ierror); }
apsmpi_fortran_finalize_fn mpi_finalize __attribute__((alias("mpi_finalize_"), visibility("default")));
apsmpi_fortran_finalize_fn mpi_finalize__ __attribute__((alias("mpi_finalize_"), visibility("default")));
apsmpi_fortran_finalize_fn MPI_FINALIZE __attribute__((alias("mpi_finalize_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_allreduce_fn mpi_allreduce_;
void mpi_allreduce_(const void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,
                    const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierror)
{
    apsmpi_fortran_allreduce(MPIFH, sendbuf, recvbuf, count, datatype, op, comm, ierror);
}
apsmpi_fortran_allreduce_fn mpi_allreduce __attribute__((alias("mpi_allreduce_"), visibility("default")));
apsmpi_fortran_allreduce_fn mpi_allreduce__ __attribute__((alias("mpi_allreduce_"), visibility("default")));
apsmpi_fortran_allreduce_fn MPI_ALLREDUCE __attribute__((alias("mpi_allreduce_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_reduce_scatter_fn mpi_reduce_scatter_;
void mpi_reduce_scatter_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *datatype,
                         const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierror)
{
    apsmpi_fortran_reduce_scatter(MPIFH, sendbuf, recvbuf, recvcounts, datatype, op, comm, ierror);
}
apsmpi_fortran_reduce_scatter_fn mpi_reduce_scatter
    __attribute__((alias("mpi_reduce_scatter_"), visibility("default")));
apsmpi_fortran_reduce_scatter_fn mpi_reduce_scatter__
    __attribute__((alias("mpi_reduce_scatter_"), visibility("default")));
apsmpi_fortran_reduce_scatter_fn MPI_REDUCE_SCATTER
    __attribute__((alias("mpi_reduce_scatter_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_reduce_scatter_block_fn mpi_reduce_scatter_block_;
void mpi_reduce_scatter_block_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *datatype,
                               const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierror)
{
    apsmpi_fortran_reduce_scatter_block(MPIFH, sendbuf, recvbuf, recvcount, datatype, op, comm, ierror);
}
apsmpi_fortran_reduce_scatter_block_fn mpi_reduce_scatter_block
    __attribute__((alias("mpi_reduce_scatter_block_"), visibility("default")));
apsmpi_fortran_reduce_scatter_block_fn mpi_reduce_scatter_block__
    __attribute__((alias("mpi_reduce_scatter_block_"), visibility("default")));
apsmpi_fortran_reduce_scatter_block_fn MPI_REDUCE_SCATTER_BLOCK
    __attribute__((alias("mpi_reduce_scatter_block_"), visibility("default")));

/* ---- Open MPI, the reductions of `use mpi_f08` ---- */

APSMPI_EXPORT apsmpi_fortran_allreduce_fn mpi_allreduce_f08_;
void mpi_allreduce_f08_(const void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,
                        const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierror)
{
    apsmpi_fortran_allreduce(F08, sendbuf, recvbuf, count, datatype, op, comm, ierror);
}

APSMPI_EXPORT apsmpi_fortran_reduce_scatter_fn mpi_reduce_scatter_f08_;
void mpi_reduce_scatter_f08_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *datatype,
                             const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierror)
{
    apsmpi_fortran_reduce_scatter(F08, sendbuf, recvbuf, recvcounts, datatype, op, comm, ierror);
}

APSMPI_EXPORT apsmpi_fortran_reduce_scatter_block_fn mpi_reduce_scatter_block_f08_;
void mpi_reduce_scatter_block_f08_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount,
                                   const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierror)
{
    apsmpi_fortran_reduce_scatter_block(F08, sendbuf, recvbuf, recvcount, datatype, op, comm, ierror);
}
#endif

#if defined(OMPI_MAJOR_VERSION) || defined(MPICH_VERSION)
/* ---- Open MPI and MPICH, init and finalize of `use mpi_f08` ---- */

APSMPI_EXPORT apsmpi_fortran_init_fn mpi_init_f08_;
void mpi_init_f08_(MPI_Fint *ierror) { apsmpi_fortran_init(F08, ierror); }

APSMPI_EXPORT apsmpi_fortran_init_thread_fn mpi_init_thread_f08_;
void mpi_init_thread_f08_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    apsmpi_fortran_init_thread(F08, required, provided, ierror);
}

APSMPI_EXPORT apsmpi_fortran_finalize_fn mpi_finalize_f08_;
void mpi_finalize_f08_(MPI_Fint *ierror) { apsmpi_fortran_finalize(F08, ierror); }
#endif

#if defined(OMPI_MAJOR_VERSION)
/* ---- Open MPI, mpif.h and `use mpi`: the non-blocking reductions and the calls that complete,
 * free or cancel requests ---- */

APSMPI_EXPORT apsmpi_fortran_iallreduce_fn mpi_iallreduce_;
void mpi_iallreduce_(const void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,
                     const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    apsmpi_fortran_iallreduce(MPIFH, sendbuf, recvbuf, count, datatype, op, comm, request, ierror);
}
apsmpi_fortran_iallreduce_fn mpi_iallreduce __attribute__((alias("mpi_iallreduce_"), visibility("default")));
apsmpi_fortran_iallreduce_fn mpi_iallreduce__ __attribute__((alias("mpi_iallreduce_"), visibility("default")));
apsmpi_fortran_iallreduce_fn MPI_IALLREDUCE __attribute__((alias("mpi_iallreduce_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_ireduce_scatter_fn mpi_ireduce_scatter_;
void mpi_ireduce_scatter_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *datatype,
                          const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    apsmpi_fortran_ireduce_scatter(MPIFH, sendbuf, recvbuf, recvcounts, datatype, op, comm, request, ierror);
}
apsmpi_fortran_ireduce_scatter_fn mpi_ireduce_scatter
    __attribute__((alias("mpi_ireduce_scatter_"), visibility("default")));
apsmpi_fortran_ireduce_scatter_fn mpi_ireduce_scatter__
    __attribute__((alias("mpi_ireduce_scatter_"), visibility("default")));
apsmpi_fortran_ireduce_scatter_fn MPI_IREDUCE_SCATTER
    __attribute__((alias("mpi_ireduce_scatter_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_ireduce_scatter_block_fn mpi_ireduce_scatter_block_;
void mpi_ireduce_scatter_block_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *datatype,
                                const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    apsmpi_fortran_ireduce_scatter_block(MPIFH, sendbuf, recvbuf, recvcount, datatype, op, comm, request, ierror);
}
apsmpi_fortran_ireduce_scatter_block_fn mpi_ireduce_scatter_block
    __attribute__((alias("mpi_ireduce_scatter_block_"), visibility("default")));
apsmpi_fortran_ireduce_scatter_block_fn mpi_ireduce_scatter_block__
    __attribute__((alias("mpi_ireduce_scatter_block_"), visibility("default")));
apsmpi_fortran_ireduce_scatter_block_fn MPI_IREDUCE_SCATTER_BLOCK
    __attribute__((alias("mpi_ireduce_scatter_block_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_wait_fn mpi_wait_;
void mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_wait(MPIFH, request, status, ierror);
}
apsmpi_fortran_wait_fn mpi_wait __attribute__((alias("mpi_wait_"), visibility("default")));
apsmpi_fortran_wait_fn mpi_wait__ __attribute__((alias("mpi_wait_"), visibility("default")));
apsmpi_fortran_wait_fn MPI_WAIT __attribute__((alias("mpi_wait_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_waitall_fn mpi_waitall_;
void mpi_waitall_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_waitall(MPIFH, count, requests, statuses, ierror);
}
apsmpi_fortran_waitall_fn mpi_waitall __attribute__((alias("mpi_waitall_"), visibility("default")));
apsmpi_fortran_waitall_fn mpi_waitall__ __attribute__((alias("mpi_waitall_"), visibility("default")));
apsmpi_fortran_waitall_fn MPI_WAITALL __attribute__((alias("mpi_waitall_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_waitany_fn mpi_waitany_;
void mpi_waitany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_waitany(MPIFH, count, requests, index, status, ierror);
}
apsmpi_fortran_waitany_fn mpi_waitany __attribute__((alias("mpi_waitany_"), visibility("default")));
apsmpi_fortran_waitany_fn mpi_waitany__ __attribute__((alias("mpi_waitany_"), visibility("default")));
apsmpi_fortran_waitany_fn MPI_WAITANY __attribute__((alias("mpi_waitany_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_waitsome_fn mpi_waitsome_;
void mpi_waitsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                   MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_waitsome(MPIFH, incount, requests, outcount, indices, statuses, ierror);
}
apsmpi_fortran_waitsome_fn mpi_waitsome __attribute__((alias("mpi_waitsome_"), visibility("default")));
apsmpi_fortran_waitsome_fn mpi_waitsome__ __attribute__((alias("mpi_waitsome_"), visibility("default")));
apsmpi_fortran_waitsome_fn MPI_WAITSOME __attribute__((alias("mpi_waitsome_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_test_fn mpi_test_;
void mpi_test_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_test(MPIFH, request, flag, status, ierror);
}
apsmpi_fortran_test_fn mpi_test __attribute__((alias("mpi_test_"), visibility("default")));
apsmpi_fortran_test_fn mpi_test__ __attribute__((alias("mpi_test_"), visibility("default")));
apsmpi_fortran_test_fn MPI_TEST __attribute__((alias("mpi_test_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_testall_fn mpi_testall_;
void mpi_testall_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_testall(MPIFH, count, requests, flag, statuses, ierror);
}
apsmpi_fortran_testall_fn mpi_testall __attribute__((alias("mpi_testall_"), visibility("default")));
apsmpi_fortran_testall_fn mpi_testall__ __attribute__((alias("mpi_testall_"), visibility("default")));
apsmpi_fortran_testall_fn MPI_TESTALL __attribute__((alias("mpi_testall_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_testany_fn mpi_testany_;
void mpi_testany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                  MPI_Fint *ierror)
{
    apsmpi_fortran_testany(MPIFH, count, requests, index, flag, status, ierror);
}
apsmpi_fortran_testany_fn mpi_testany __attribute__((alias("mpi_testany_"), visibility("default")));
apsmpi_fortran_testany_fn mpi_testany__ __attribute__((alias("mpi_testany_"), visibility("default")));
apsmpi_fortran_testany_fn MPI_TESTANY __attribute__((alias("mpi_testany_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_testsome_fn mpi_testsome_;
void mpi_testsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                   MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_testsome(MPIFH, incount, requests, outcount, indices, statuses, ierror);
}
apsmpi_fortran_testsome_fn mpi_testsome __attribute__((alias("mpi_testsome_"), visibility("default")));
apsmpi_fortran_testsome_fn mpi_testsome__ __attribute__((alias("mpi_testsome_"), visibility("default")));
apsmpi_fortran_testsome_fn MPI_TESTSOME __attribute__((alias("mpi_testsome_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_request_get_status_fn mpi_request_get_status_;
void mpi_request_get_status_(const MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_request_get_status(MPIFH, request, flag, status, ierror);
}
apsmpi_fortran_request_get_status_fn mpi_request_get_status
    __attribute__((alias("mpi_request_get_status_"), visibility("default")));
apsmpi_fortran_request_get_status_fn mpi_request_get_status__
    __attribute__((alias("mpi_request_get_status_"), visibility("default")));
apsmpi_fortran_request_get_status_fn MPI_REQUEST_GET_STATUS
    __attribute__((alias("mpi_request_get_status_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_request_free_fn mpi_request_free_;
void mpi_request_free_(MPI_Fint *request, MPI_Fint *ierror) { apsmpi_fortran_request_free(MPIFH, request, ierror); }
apsmpi_fortran_request_free_fn mpi_request_free __attribute__((alias("mpi_request_free_"), visibility("default")));
apsmpi_fortran_request_free_fn mpi_request_free__ __attribute__((alias("mpi_request_free_"), visibility("default")));
apsmpi_fortran_request_free_fn MPI_REQUEST_FREE __attribute__((alias("mpi_request_free_"), visibility("default")));

APSMPI_EXPORT apsmpi_fortran_cancel_fn mpi_cancel_;
void mpi_cancel_(MPI_Fint *request, MPI_Fint *ierror) { apsmpi_fortran_cancel(MPIFH, request, ierror); }
apsmpi_fortran_cancel_fn mpi_cancel __attribute__((alias("mpi_cancel_"), visibility("default")));
apsmpi_fortran_cancel_fn mpi_cancel__ __attribute__((alias("mpi_cancel_"), visibility("default")));
apsmpi_fortran_cancel_fn MPI_CANCEL __attribute__((alias("mpi_cancel_"), visibility("default")));

/* ---- Open MPI, the non-blocking reductions of `use mpi_f08` ---- */

APSMPI_EXPORT apsmpi_fortran_iallreduce_fn mpi_iallreduce_f08_;
void mpi_iallreduce_f08_(const void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,
                         const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    apsmpi_fortran_iallreduce(F08, sendbuf, recvbuf, count, datatype, op, comm, request, ierror);
}

APSMPI_EXPORT apsmpi_fortran_ireduce_scatter_fn mpi_ireduce_scatter_f08_;
void mpi_ireduce_scatter_f08_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *datatype,
                              const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    apsmpi_fortran_ireduce_scatter(F08, sendbuf, recvbuf, recvcounts, datatype, op, comm, request, ierror);
}

APSMPI_EXPORT apsmpi_fortran_ireduce_scatter_block_fn mpi_ireduce_scatter_block_f08_;
void mpi_ireduce_scatter_block_f08_(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount,
                                    const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                                    MPI_Fint *request, MPI_Fint *ierror)
{
    apsmpi_fortran_ireduce_scatter_block(F08, sendbuf, recvbuf, recvcount, datatype, op, comm, request, ierror);
}
#endif

#if defined(OMPI_MAJOR_VERSION) || defined(MPICH_VERSION)
/* ---- Open MPI and MPICH, `use mpi_f08`'s calls that complete, free or cancel requests (MPICH's
 * calls PMPI_* for these, though MPI_* for the reductions) ---- */

APSMPI_EXPORT apsmpi_fortran_wait_fn mpi_wait_f08_;
void mpi_wait_f08_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_wait(F08, request, status, ierror);
}

APSMPI_EXPORT apsmpi_fortran_waitall_fn mpi_waitall_f08_;
void mpi_waitall_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_waitall(F08, count, requests, statuses, ierror);
}

APSMPI_EXPORT apsmpi_fortran_waitany_fn mpi_waitany_f08_;
void mpi_waitany_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_waitany(F08, count, requests, index, status, ierror);
}

APSMPI_EXPORT apsmpi_fortran_waitsome_fn mpi_waitsome_f08_;
void mpi_waitsome_f08_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_waitsome(F08, incount, requests, outcount, indices, statuses, ierror);
}

APSMPI_EXPORT apsmpi_fortran_test_fn mpi_test_f08_;
void mpi_test_f08_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_test(F08, request, flag, status, ierror);
}

APSMPI_EXPORT apsmpi_fortran_testall_fn mpi_testall_f08_;
void mpi_testall_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_testall(F08, count, requests, flag, statuses, ierror);
}

APSMPI_EXPORT apsmpi_fortran_testany_fn mpi_testany_f08_;
void mpi_testany_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                      MPI_Fint *ierror)
{
    apsmpi_fortran_testany(F08, count, requests, index, flag, status, ierror);
}

APSMPI_EXPORT apsmpi_fortran_testsome_fn mpi_testsome_f08_;
void mpi_testsome_f08_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_testsome(F08, incount, requests, outcount, indices, statuses, ierror);
}

APSMPI_EXPORT apsmpi_fortran_request_get_status_fn mpi_request_get_status_f08_;
void mpi_request_get_status_f08_(const MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_request_get_status(F08, request, flag, status, ierror);
}

APSMPI_EXPORT apsmpi_fortran_request_free_fn mpi_request_free_f08_;
void mpi_request_free_f08_(MPI_Fint *request, MPI_Fint *ierror) { apsmpi_fortran_request_free(F08, request, ierror); }

APSMPI_EXPORT apsmpi_fortran_cancel_fn mpi_cancel_f08_;
void mpi_cancel_f08_(MPI_Fint *request, MPI_Fint *ierror) { apsmpi_fortran_cancel(F08, request, ierror); }

#endif

#if defined(MPICH_VERSION) && MPI_VERSION >= 4
/* ---- MPICH, MPI_Start and MPI_Startall of `use mpi_f08`, for the persistent reductions ---- */
APSMPI_EXPORT apsmpi_fortran_start_fn mpi_start_f08_;
void mpi_start_f08_(MPI_Fint *request, MPI_Fint *ierror) { apsmpi_fortran_start(F08, request, ierror); }

APSMPI_EXPORT apsmpi_fortran_startall_fn mpi_startall_f08_;
void mpi_startall_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierror)
{
    apsmpi_fortran_startall(F08, count, requests, ierror);
}

#endif
