/* fortran_calls.c: the Fortran MPI calls apsmpi intercepts: handles converted, the Fortran MPI_IN_PLACE recognised, ierror set; anything else goes to the MPI's own Fortran entry. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "entry/entry_points.h"
#include "entry/fortran_entry_points.h"
#include "entry/requests.h"
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

/* The MPI's own entries of each call, one per binding (an MPI whose Fortran library calls the
 * C entries for some calls, as MPICH's does for its non-blocking ones, leaves those unused). */
__attribute__((unused)) static _Atomic(void *) mpi_init_entry[2], mpi_init_thread_entry[2], mpi_finalize_entry[2],
    mpi_allreduce_entry[2], mpi_reduce_scatter_entry[2], mpi_reduce_scatter_block_entry[2], mpi_iallreduce_entry[2],
    mpi_ireduce_scatter_entry[2], mpi_ireduce_scatter_block_entry[2], mpi_wait_entry[2], mpi_test_entry[2],
    mpi_waitall_entry[2], mpi_testall_entry[2], mpi_waitany_entry[2], mpi_testany_entry[2], mpi_waitsome_entry[2],
    mpi_testsome_entry[2], mpi_request_get_status_entry[2], mpi_request_free_entry[2], mpi_cancel_entry[2];

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

/* A reduction handed to the MPI's own Fortran entry, counted with its reason. */
static void count_not_float_sum(void)
{
    apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);
    apsmpi_stats_add(APSMPI_STAT_PASS_NOT_FLOAT_SUM, 1);
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
        count_not_float_sum();
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
        count_not_float_sum();
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
        count_not_float_sum();
        mpi_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, ierror);
        return;
    }
    set_ierror(ierror,
               apsmpi_Reduce_scatter_block(c_sendbuf(sendbuf), recvbuf, *recvcount, dt, MPI_SUM, PMPI_Comm_f2c(*comm)));
}

#if defined(OMPI_MAJOR_VERSION) /* (Open MPI's Fortran calls PMPI_*; MPICH's reach the C wrappers) */
/* ---- the non-blocking reductions ---- */

void apsmpi_fortran_iallreduce(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                               const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *op,
                               const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Datatype dt;
    MPI_Request req = MPI_REQUEST_NULL;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        apsmpi_fortran_iallreduce_fn *mpi_iallreduce = mpi_entry(&mpi_iallreduce_entry[binding], "iallreduce", binding);
        count_not_float_sum();
        mpi_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request, ierror);
        return;
    }
    set_ierror(ierror, apsmpi_Iallreduce(c_sendbuf(sendbuf), recvbuf, *count, dt, MPI_SUM, PMPI_Comm_f2c(*comm), &req));
    *request = PMPI_Request_c2f(req);
}

void apsmpi_fortran_ireduce_scatter(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                    const MPI_Fint *recvcounts, const MPI_Fint *datatype, const MPI_Fint *op,
                                    const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Datatype dt;
    MPI_Request req = MPI_REQUEST_NULL;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        apsmpi_fortran_ireduce_scatter_fn *mpi_ireduce_scatter =
            mpi_entry(&mpi_ireduce_scatter_entry[binding], "ireduce_scatter", binding);
        count_not_float_sum();
        mpi_ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request, ierror);
        return;
    }
    set_ierror(ierror, apsmpi_Ireduce_scatter(c_sendbuf(sendbuf), recvbuf, recvcounts, dt, MPI_SUM,
                                              PMPI_Comm_f2c(*comm), &req));
    *request = PMPI_Request_c2f(req);
}

void apsmpi_fortran_ireduce_scatter_block(enum apsmpi_fortran_binding binding, const void *sendbuf, void *recvbuf,
                                          const MPI_Fint *recvcount, const MPI_Fint *datatype, const MPI_Fint *op,
                                          const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Datatype dt;
    MPI_Request req = MPI_REQUEST_NULL;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        apsmpi_fortran_ireduce_scatter_block_fn *mpi_ireduce_scatter_block =
            mpi_entry(&mpi_ireduce_scatter_block_entry[binding], "ireduce_scatter_block", binding);
        count_not_float_sum();
        mpi_ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request, ierror);
        return;
    }
    set_ierror(ierror, apsmpi_Ireduce_scatter_block(c_sendbuf(sendbuf), recvbuf, *recvcount, dt, MPI_SUM,
                                                    PMPI_Comm_f2c(*comm), &req));
    *request = PMPI_Request_c2f(req);
}
#endif

#if defined(OMPI_MAJOR_VERSION) || defined(MPICH_VERSION)
/* ---- completion: apsmpi's requests progress, then the MPI's own Fortran entry takes the call
 * (apsmpi's requests are real MPI requests; the MPI converts statuses and flags). A wait,
 * while apsmpi has requests outstanding, makes them progress and calls the MPI's own test
 * form until it completes; else it is the MPI's own wait. ---- */

void apsmpi_fortran_wait(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Fint flag = 0, rc = MPI_SUCCESS;

    if (!apsmpi_requests_outstanding()) {
        apsmpi_fortran_wait_fn *mpi_wait = mpi_entry(&mpi_wait_entry[binding], "wait", binding);
        mpi_wait(request, status, ierror);
        return;
    }
    apsmpi_fortran_test_fn *mpi_test = mpi_entry(&mpi_test_entry[binding], "test", binding);
    for (;;) {
        apsmpi_requests_progress();
        mpi_test(request, &flag, status, &rc);
        if (rc != MPI_SUCCESS || flag)
            break;
        sched_yield();
    }
    set_ierror(ierror, rc);
}

void apsmpi_fortran_waitall(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *statuses, MPI_Fint *ierror)
{
    MPI_Fint flag = 0, rc = MPI_SUCCESS;

    if (!apsmpi_requests_outstanding()) {
        apsmpi_fortran_waitall_fn *mpi_waitall = mpi_entry(&mpi_waitall_entry[binding], "waitall", binding);
        mpi_waitall(count, requests, statuses, ierror);
        return;
    }
    apsmpi_fortran_testall_fn *mpi_testall = mpi_entry(&mpi_testall_entry[binding], "testall", binding);
    for (;;) {
        apsmpi_requests_progress();
        mpi_testall(count, requests, &flag, statuses, &rc);
        if (rc != MPI_SUCCESS || flag)
            break;
        sched_yield();
    }
    set_ierror(ierror, rc);
}

void apsmpi_fortran_waitany(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Fint flag = 0, rc = MPI_SUCCESS;

    if (!apsmpi_requests_outstanding()) {
        apsmpi_fortran_waitany_fn *mpi_waitany = mpi_entry(&mpi_waitany_entry[binding], "waitany", binding);
        mpi_waitany(count, requests, index, status, ierror);
        return;
    }
    apsmpi_fortran_testany_fn *mpi_testany = mpi_entry(&mpi_testany_entry[binding], "testany", binding);
    for (;;) {
        apsmpi_requests_progress();
        mpi_testany(count, requests, index, &flag, status, &rc);
        if (rc != MPI_SUCCESS || flag)
            break;
        sched_yield();
    }
    set_ierror(ierror, rc);
}

void apsmpi_fortran_waitsome(enum apsmpi_fortran_binding binding, const MPI_Fint *incount, MPI_Fint *requests,
                             MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;

    if (!apsmpi_requests_outstanding()) {
        apsmpi_fortran_waitsome_fn *mpi_waitsome = mpi_entry(&mpi_waitsome_entry[binding], "waitsome", binding);
        mpi_waitsome(incount, requests, outcount, indices, statuses, ierror);
        return;
    }
    apsmpi_fortran_testsome_fn *mpi_testsome = mpi_entry(&mpi_testsome_entry[binding], "testsome", binding);
    for (;;) {
        apsmpi_requests_progress();
        mpi_testsome(incount, requests, outcount, indices, statuses, &rc);
        if (rc != MPI_SUCCESS || *outcount != 0) /* (MPI_UNDEFINED: no active request) */
            break;
        sched_yield();
    }
    set_ierror(ierror, rc);
}

void apsmpi_fortran_test(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status,
                         MPI_Fint *ierror)
{
    apsmpi_fortran_test_fn *mpi_test = mpi_entry(&mpi_test_entry[binding], "test", binding);

    apsmpi_requests_progress();
    mpi_test(request, flag, status, ierror);
}

void apsmpi_fortran_testall(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_testall_fn *mpi_testall = mpi_entry(&mpi_testall_entry[binding], "testall", binding);

    apsmpi_requests_progress();
    mpi_testall(count, requests, flag, statuses, ierror);
}

void apsmpi_fortran_testany(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                            MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_testany_fn *mpi_testany = mpi_entry(&mpi_testany_entry[binding], "testany", binding);

    apsmpi_requests_progress();
    mpi_testany(count, requests, index, flag, status, ierror);
}

void apsmpi_fortran_testsome(enum apsmpi_fortran_binding binding, const MPI_Fint *incount, MPI_Fint *requests,
                             MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    apsmpi_fortran_testsome_fn *mpi_testsome = mpi_entry(&mpi_testsome_entry[binding], "testsome", binding);

    apsmpi_requests_progress();
    mpi_testsome(incount, requests, outcount, indices, statuses, ierror);
}

void apsmpi_fortran_request_get_status(enum apsmpi_fortran_binding binding, const MPI_Fint *request, MPI_Fint *flag,
                                       MPI_Fint *status, MPI_Fint *ierror)
{
    apsmpi_fortran_request_get_status_fn *mpi_request_get_status =
        mpi_entry(&mpi_request_get_status_entry[binding], "request_get_status", binding);

    apsmpi_requests_progress();
    mpi_request_get_status(request, flag, status, ierror);
}

void apsmpi_fortran_request_free(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request req = PMPI_Request_f2c(*request);
    int rc;

    if (!apsmpi_request_free(&req, &rc)) {
        apsmpi_fortran_request_free_fn *mpi_request_free =
            mpi_entry(&mpi_request_free_entry[binding], "request_free", binding);
        mpi_request_free(request, ierror);
        return;
    }
    *request = PMPI_Request_c2f(MPI_REQUEST_NULL);
    set_ierror(ierror, rc);
}

void apsmpi_fortran_cancel(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request req = PMPI_Request_f2c(*request);
    int rc;

    if (!apsmpi_request_cancel(&req, &rc)) {
        apsmpi_fortran_cancel_fn *mpi_cancel = mpi_entry(&mpi_cancel_entry[binding], "cancel", binding);
        mpi_cancel(request, ierror);
        return;
    }
    set_ierror(ierror, rc);
}
#endif

#if defined(MPICH_VERSION) && MPI_VERSION >= 4
/* ---- MPI_Start and MPI_Startall of `use mpi_f08` (MPICH), for the persistent reductions ---- */

static _Atomic(void *) mpi_start_entry[2]; /* the MPI's own MPI_Start, per binding */

/* Starts the Fortran request *request: apsmpi's, or the MPI's own through its Fortran entry. */
static void start_one(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *rc)
{
    MPI_Request req = PMPI_Request_f2c(*request);
    int crc;

    if (apsmpi_request_start(&req, &crc)) {
        *rc = crc;
        return;
    }
    apsmpi_fortran_start_fn *mpi_start = mpi_entry(&mpi_start_entry[binding], "start", binding);
    mpi_start(request, rc);
}

void apsmpi_fortran_start(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;

    start_one(binding, request, &rc);
    set_ierror(ierror, rc);
}

void apsmpi_fortran_startall(enum apsmpi_fortran_binding binding, const MPI_Fint *count, MPI_Fint *requests,
                             MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;

    for (MPI_Fint i = 0; i < *count && rc == MPI_SUCCESS; i++)
        start_one(binding, &requests[i], &rc);
    set_ierror(ierror, rc);
}
#endif
