/* fortran_calls.c: the Fortran MPI calls apsmpi intercepts: handles converted, the Fortran MPI_IN_PLACE recognised, ierror set; anything else goes to the MPI's own Fortran entry. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "entry/entry_points.h"
#include "entry/fortran_entry_points.h"
#include "state/end_job.h"
#include "state/stats.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER recvcounts are passed to MPI as int[]");

/* ---- the MPI's own Fortran entries ---- */

/* The MPI's own entry for function `lower` of a binding: its PMPI Fortran entry
 * (pmpi_<lower>_, pmpi_<lower>_f08_), or where it has none (MPICH's mpi_init_f08_) the same
 * symbol as apsmpi's, further down the lookup order; found once into *cache. A missing one
 * ends the job. */
static void *mpi_entry(_Atomic(void *) *cache, const char *lower, enum apsmpi_fortran_binding binding)
{
    const char *suffix = binding == APSMPI_FORTRAN_BINDING_F08 ? "_f08_" : "_";
    char name[64];
    void *f = atomic_load_explicit(cache, memory_order_acquire);

    if (f != NULL)
        return f;
    snprintf(name, sizeof name, "pmpi_%s%s", lower, suffix);
    f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        snprintf(name, sizeof name, "mpi_%s%s", lower, suffix);
        f = dlsym(RTLD_NEXT, name);
    }
    if (f == NULL)
        apsmpi_end_job(APSMPI_END_THIS_RANK, MPI_COMM_WORLD, 1, "the MPI library has no Fortran entry pmpi_%s%s or %s",
                       lower, suffix, name);
    atomic_store_explicit(cache, f, memory_order_release);
    return f;
}

/* The MPI's own entries of each call, one per binding. */
static _Atomic(void *) mpi_init_entry[2], mpi_init_thread_entry[2], mpi_finalize_entry[2], mpi_allreduce_entry[2],
    mpi_reduce_scatter_entry[2], mpi_reduce_scatter_block_entry[2];

/* ---- the Fortran MPI_IN_PLACE and MPI_BOTTOM ---- */

/* Fortran passes MPI_IN_PLACE and MPI_BOTTOM as the address of a variable in a common block
 * (mpif.h, `use mpi`) or a module (`use mpi_f08`) that the MPI's Fortran library defines:
 * the same symbols the MPI's own bindings compare buffers with. The dynamic linker resolves
 * every reference to one definition, which dlsym finds. */
static const char *const in_place_names[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
                                             "MPI_FORTRAN_IN_PLACE", "MPIR_F08_MPI_IN_PLACE"};
static const char *const bottom_names[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
                                           "MPI_FORTRAN_BOTTOM", "MPIR_F08_MPI_BOTTOM"};
#define NSPECIAL (sizeof in_place_names / sizeof in_place_names[0])
static const void *in_place_addr[NSPECIAL], *bottom_addr[NSPECIAL];
static pthread_once_t special_once = PTHREAD_ONCE_INIT;

static void find_special(void)
{
    for (size_t i = 0; i < NSPECIAL; i++) {
        in_place_addr[i] = dlsym(RTLD_DEFAULT, in_place_names[i]);
        bottom_addr[i] = dlsym(RTLD_DEFAULT, bottom_names[i]);
    }
}

static int is_one_of(const void *buf, const void *const *addrs)
{
    pthread_once(&special_once, find_special);
    for (size_t i = 0; i < NSPECIAL; i++)
        if (addrs[i] != NULL && buf == addrs[i])
            return 1;
    return 0;
}

/* The C send buffer for a Fortran one: MPI_IN_PLACE for Fortran's MPI_IN_PLACE. */
static const void *c_sendbuf(const void *sendbuf) { return is_one_of(sendbuf, in_place_addr) ? MPI_IN_PLACE : sendbuf; }

/* A REAL sum apsmpi may compress, on buffers that are not MPI_BOTTOM; the C entry decides
 * the rest (size, communicator) and passes what it does not compress to PMPI_* unchanged. */
static int real_sum(const void *sendbuf, const void *recvbuf, MPI_Fint datatype, MPI_Fint op, MPI_Datatype *dt)
{
    *dt = PMPI_Type_f2c(datatype);
    return (*dt == MPI_REAL || *dt == MPI_REAL4 || *dt == MPI_FLOAT) && PMPI_Op_f2c(op) == MPI_SUM &&
           !is_one_of(sendbuf, bottom_addr) && !is_one_of(recvbuf, bottom_addr);
}

static void set_ierror(MPI_Fint *ierror, int rc)
{
    if (ierror != NULL) /* OPTIONAL in `use mpi_f08` */
        *ierror = (MPI_Fint)rc;
}

/* ---- the calls ---- */

/* After the MPI's own Fortran init returned rc: apsmpi's start if it succeeded; ierror. */
static void start_after_init(MPI_Fint rc, MPI_Fint *ierror)
{
    if (rc == MPI_SUCCESS)
        apsmpi_runtime_after_init();
    set_ierror(ierror, rc);
}

void apsmpi_fortran_init(enum apsmpi_fortran_binding binding, MPI_Fint *ierror)
{
    apsmpi_fortran_init_fn *mpi_init = mpi_entry(&mpi_init_entry[binding], "init", binding);
    MPI_Fint rc = MPI_SUCCESS;

    mpi_init(&rc);
    start_after_init(rc, ierror);
}

void apsmpi_fortran_init_thread(enum apsmpi_fortran_binding binding, const MPI_Fint *required, MPI_Fint *provided,
                                MPI_Fint *ierror)
{
    apsmpi_fortran_init_thread_fn *mpi_init_thread = mpi_entry(&mpi_init_thread_entry[binding], "init_thread", binding);
    MPI_Fint rc = MPI_SUCCESS;

    mpi_init_thread(required, provided, &rc);
    start_after_init(rc, ierror);
}

void apsmpi_fortran_finalize(enum apsmpi_fortran_binding binding, MPI_Fint *ierror)
{
    apsmpi_fortran_finalize_fn *mpi_finalize = mpi_entry(&mpi_finalize_entry[binding], "finalize", binding);

    apsmpi_runtime_before_finalize();
    mpi_finalize(ierror);
}

void apsmpi_fortran_allreduce(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                              const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                              MPI_Fint *ierror)
{
    MPI_Datatype dt;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        apsmpi_fortran_allreduce_fn *mpi_allreduce = mpi_entry(&mpi_allreduce_entry[binding], "allreduce", binding);
        apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);
        mpi_allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierror);
        return;
    }
    set_ierror(ierror, apsmpi_Allreduce(c_sendbuf(sendbuf), recvbuf, *count, dt, MPI_SUM, PMPI_Comm_f2c(*comm)));
}

void apsmpi_fortran_reduce_scatter(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                   const MPI_Fint *recvcounts, const MPI_Fint *datatype, const MPI_Fint *op,
                                   const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Datatype dt;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        apsmpi_fortran_reduce_scatter_fn *mpi_reduce_scatter =
            mpi_entry(&mpi_reduce_scatter_entry[binding], "reduce_scatter", binding);
        apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);
        mpi_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, ierror);
        return;
    }
    set_ierror(ierror,
               apsmpi_Reduce_scatter(c_sendbuf(sendbuf), recvbuf, recvcounts, dt, MPI_SUM, PMPI_Comm_f2c(*comm)));
}

void apsmpi_fortran_reduce_scatter_block(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                         const MPI_Fint *recvcount, const MPI_Fint *datatype, const MPI_Fint *op,
                                         const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Datatype dt;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        apsmpi_fortran_reduce_scatter_block_fn *mpi_reduce_scatter_block =
            mpi_entry(&mpi_reduce_scatter_block_entry[binding], "reduce_scatter_block", binding);
        apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);
        mpi_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, ierror);
        return;
    }
    set_ierror(ierror,
               apsmpi_Reduce_scatter_block(c_sendbuf(sendbuf), recvbuf, *recvcount, dt, MPI_SUM, PMPI_Comm_f2c(*comm)));
}
