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
 * symbol as apsmpi's, further down the lookup order. Found once; a missing one ends the job. */
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

/* Calls the MPI's own Fortran entry for `lower` with the same arguments. */
#define MPI_FORTRAN_ENTRY(lower)           \
    static _Atomic(void *) entry_cache[2]; \
    ((void (*)(APSMPI_FPARAMS_##lower))mpi_entry(&entry_cache[binding], #lower, binding))(APSMPI_FARGS_##lower)

/* A reduction handed to the MPI's own Fortran entry, counted as passed through. */
#define PASS_TO_MPI(lower)                                   \
    do {                                                     \
        apsmpi_stats_add(APSMPI_STAT_CALLS_PASSED, 1);       \
        apsmpi_stats_add(APSMPI_STAT_PASS_NOT_FLOAT_SUM, 1); \
        MPI_FORTRAN_ENTRY(lower);                            \
    } while (0)

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

/* The MPI's own Fortran init `lower`, then apsmpi's start if it succeeded; ierror as asked. */
#define INIT_THEN_START(lower)                     \
    do {                                           \
        MPI_Fint rc = MPI_SUCCESS, *mine = ierror; \
        ierror = &rc;                              \
        MPI_FORTRAN_ENTRY(lower);                  \
        if (rc == MPI_SUCCESS)                     \
            apsmpi_runtime_after_init();           \
        set_ierror(mine, rc);                      \
    } while (0)

APSMPI_FORTRAN_IMPL(init) { INIT_THEN_START(init); }

APSMPI_FORTRAN_IMPL(init_thread) { INIT_THEN_START(init_thread); }

APSMPI_FORTRAN_IMPL(finalize)
{
    apsmpi_runtime_before_finalize();
    MPI_FORTRAN_ENTRY(finalize);
}

APSMPI_FORTRAN_IMPL(allreduce)
{
    MPI_Datatype dt;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        PASS_TO_MPI(allreduce);
        return;
    }
    set_ierror(ierror, apsmpi_Allreduce(c_sendbuf(sendbuf), recvbuf, *count, dt, MPI_SUM, PMPI_Comm_f2c(*comm)));
}

APSMPI_FORTRAN_IMPL(reduce_scatter)
{
    MPI_Datatype dt;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        PASS_TO_MPI(reduce_scatter);
        return;
    }
    set_ierror(ierror,
               apsmpi_Reduce_scatter(c_sendbuf(sendbuf), recvbuf, recvcounts, dt, MPI_SUM, PMPI_Comm_f2c(*comm)));
}

APSMPI_FORTRAN_IMPL(reduce_scatter_block)
{
    MPI_Datatype dt;

    if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) {
        PASS_TO_MPI(reduce_scatter_block);
        return;
    }
    set_ierror(ierror,
               apsmpi_Reduce_scatter_block(c_sendbuf(sendbuf), recvbuf, *recvcount, dt, MPI_SUM, PMPI_Comm_f2c(*comm)));
}

#if defined(OMPI_MAJOR_VERSION) /* (Open MPI's Fortran calls PMPI_*; MPICH's reach the C wrappers) */
/* ---- the non-blocking reductions ---- */

/* A non-blocking REAL sum: apsmpi's C entry `c_call` with the request converted; any other to
 * the MPI's own Fortran entry. */
#define NONBLOCKING(lower, c_call)                              \
    do {                                                        \
        MPI_Datatype dt;                                        \
        MPI_Request req = MPI_REQUEST_NULL;                     \
        if (!real_sum(sendbuf, recvbuf, *datatype, *op, &dt)) { \
            PASS_TO_MPI(lower);                                 \
            return;                                             \
        }                                                       \
        set_ierror(ierror, c_call);                             \
        *request = PMPI_Request_c2f(req);                       \
    } while (0)

APSMPI_FORTRAN_IMPL(iallreduce)
{
    NONBLOCKING(iallreduce,
                apsmpi_Iallreduce(c_sendbuf(sendbuf), recvbuf, *count, dt, MPI_SUM, PMPI_Comm_f2c(*comm), &req));
}

APSMPI_FORTRAN_IMPL(ireduce_scatter)
{
    NONBLOCKING(ireduce_scatter, apsmpi_Ireduce_scatter(c_sendbuf(sendbuf), recvbuf, recvcounts, dt, MPI_SUM,
                                                        PMPI_Comm_f2c(*comm), &req));
}

APSMPI_FORTRAN_IMPL(ireduce_scatter_block)
{
    NONBLOCKING(ireduce_scatter_block, apsmpi_Ireduce_scatter_block(c_sendbuf(sendbuf), recvbuf, *recvcount, dt,
                                                                    MPI_SUM, PMPI_Comm_f2c(*comm), &req));
}

#endif

#if defined(OMPI_MAJOR_VERSION) || defined(MPICH_VERSION)
/* ---- completion: apsmpi's requests progress, then the MPI's own Fortran entry takes the call
 * (apsmpi's requests are real MPI requests; the MPI converts statuses and flags) ---- */

/* The MPI's own Fortran entry for `lower` as a function of its parameters. */
#define OWN_ENTRY(lower)                   \
    static _Atomic(void *) own_##lower[2]; \
    void (*own)(APSMPI_FPARAMS_##lower) =  \
        (void (*)(APSMPI_FPARAMS_##lower))mpi_entry(&own_##lower[binding], #lower, binding)

/* A wait: while apsmpi has requests outstanding, they progress and the MPI's own test form
 * (`test_lower`, called with `test_args`) is tried until `complete`; else the MPI's own wait. */
#define FORTRAN_WAIT(lower, test_lower, test_args, complete) \
    MPI_Fint flag = 0;                                       \
    FORTRAN_WAIT_NO_FLAG(lower, test_lower, test_args, complete)
#define FORTRAN_WAIT_NO_FLAG(lower, test_lower, test_args, complete) \
    do {                                                             \
        MPI_Fint rc = MPI_SUCCESS;                                   \
        if (!apsmpi_requests_outstanding()) {                        \
            MPI_FORTRAN_ENTRY(lower);                                \
            return;                                                  \
        }                                                            \
        OWN_ENTRY(test_lower);                                       \
        for (;;) {                                                   \
            apsmpi_requests_progress();                              \
            own test_args;                                           \
            if (rc != MPI_SUCCESS || (complete))                     \
                break;                                               \
            sched_yield();                                           \
        }                                                            \
        set_ierror(ierror, rc);                                      \
    } while (0)

APSMPI_FORTRAN_IMPL(wait) { FORTRAN_WAIT(wait, test, (request, &flag, status, &rc), flag); }

APSMPI_FORTRAN_IMPL(waitall) { FORTRAN_WAIT(waitall, testall, (count, requests, &flag, statuses, &rc), flag); }

APSMPI_FORTRAN_IMPL(waitany) { FORTRAN_WAIT(waitany, testany, (count, requests, index, &flag, status, &rc), flag); }

APSMPI_FORTRAN_IMPL(waitsome)
{
    FORTRAN_WAIT_NO_FLAG(waitsome, testsome, (incount, requests, outcount, indices, statuses, &rc), *outcount != 0);
}

/* A test (or MPI_Request_get_status): apsmpi's requests progress, then the MPI's own. */
#define FORTRAN_TEST(lower)         \
    do {                            \
        apsmpi_requests_progress(); \
        MPI_FORTRAN_ENTRY(lower);   \
    } while (0)

APSMPI_FORTRAN_IMPL(test) { FORTRAN_TEST(test); }
APSMPI_FORTRAN_IMPL(testall) { FORTRAN_TEST(testall); }
APSMPI_FORTRAN_IMPL(testany) { FORTRAN_TEST(testany); }
APSMPI_FORTRAN_IMPL(testsome) { FORTRAN_TEST(testsome); }
APSMPI_FORTRAN_IMPL(request_get_status) { FORTRAN_TEST(request_get_status); }

APSMPI_FORTRAN_IMPL(request_free)
{
    MPI_Request req = PMPI_Request_f2c(*request);
    int rc;

    if (!apsmpi_request_free(&req, &rc)) {
        MPI_FORTRAN_ENTRY(request_free);
        return;
    }
    *request = PMPI_Request_c2f(MPI_REQUEST_NULL);
    set_ierror(ierror, rc);
}

APSMPI_FORTRAN_IMPL(cancel)
{
    MPI_Request req = PMPI_Request_f2c(*request);
    int rc;

    if (!apsmpi_request_cancel(&req, &rc)) {
        MPI_FORTRAN_ENTRY(cancel);
        return;
    }
    set_ierror(ierror, rc);
}
#endif

#if defined(MPICH_VERSION) && MPI_VERSION >= 4
/* ---- MPI_Start and MPI_Startall of `use mpi_f08` (MPICH), for the persistent reductions ---- */

/* Starts the Fortran request *request: apsmpi's, or the MPI's own through its Fortran entry. */
static void start_one(enum apsmpi_fortran_binding binding, MPI_Fint *request, MPI_Fint *rc)
{
    MPI_Request req = PMPI_Request_f2c(*request);
    int crc;

    if (apsmpi_request_start(&req, &crc)) {
        *rc = crc;
        return;
    }
    OWN_ENTRY(start);
    own(request, rc);
}

APSMPI_FORTRAN_IMPL(start)
{
    MPI_Fint rc = MPI_SUCCESS;
    start_one(binding, request, &rc);
    set_ierror(ierror, rc);
}

APSMPI_FORTRAN_IMPL(startall)
{
    MPI_Fint rc = MPI_SUCCESS;
    for (MPI_Fint i = 0; i < *count && rc == MPI_SUCCESS; i++)
        start_one(binding, &requests[i], &rc);
    set_ierror(ierror, rc);
}
#endif
