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
