/* private_comm.c: the cache of private communicator duplicates, an MPI attribute on each user communicator. */
#include "state/private_comm.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "core/fault.h"

static int private_keyval = MPI_KEYVAL_INVALID;

/* What is cached on a communicator: its duplicate, and the count of pipelined calls made on
 * it, which gives each call its own range of tags. */
struct apsmpi_private_comm {
    MPI_Comm dup;
    atomic_ulong calls;
    int ranges;      /* tag ranges of APSMPI_CALL_TAGS below the duplicate's MPI_TAG_UB */
    atomic_int refs; /* the attribute's, and one per request holding it */
};
typedef struct apsmpi_private_comm private_comm;

void apsmpi_private_comm_release(private_comm *held)
{
    if (held != NULL && atomic_fetch_sub_explicit(&held->refs, 1, memory_order_acq_rel) == 1) {
        PMPI_Comm_free(&held->dup);
        free(held);
    }
}

/* The job freed the communicator (or MPI_Finalize did): the attribute's reference goes. */
static int free_private_comm(MPI_Comm comm, int keyval, void *value, void *extra)
{
    apsmpi_private_comm_release(value);
    return MPI_SUCCESS;
}

/* How many ranges of APSMPI_CALL_TAGS tags MPI_TAG_UB leaves room for (at least 1: MPI
 * guarantees tags to 32767). MPI attaches MPI_TAG_UB to MPI_COMM_WORLD, the same for every
 * communicator; Open MPI attaches nothing to those MPI_Comm_split makes (nor to their
 * duplicates): reading it there would give every call on them the same tags. */
static int tag_ranges(void)
{
    int *ub = NULL, flag = 0;
    long ranges;

    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) != MPI_SUCCESS || !flag || ub == NULL)
        return 1;
    ranges = ((long)*ub + 1) / APSMPI_CALL_TAGS;
    return ranges < 1 ? 1 : ranges > 65536 ? 65536 : (int)ranges;
}

int apsmpi_private_comm_init(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_private_comm, &private_keyval, NULL);
}

void apsmpi_private_comm_finalize(void)
{
    if (private_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&private_keyval);
}

/* comm's cached duplicate, made on first use (see private_comm.h). */
static int private_of(MPI_Comm comm, private_comm **out)
{
    MPI_Comm dup;
    private_comm *held = NULL;
    int flag, rc, ok, all_ok;

    rc = PMPI_Comm_get_attr(comm, private_keyval, &held, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag) {
        *out = held;
        return MPI_SUCCESS;
    }
    /* Every rank of comm comes here at the same call (the ranks make the same choice from the
     * same arguments): the duplicate is made, and its caching agreed, on all of them alike,
     * so that a rank that cannot keep it never leaves the others waiting in a collective. */
    rc = PMPI_Comm_dup(comm, &dup);
    if (rc != MPI_SUCCESS)
        return rc;
    held = apsmpi_fault(APSMPI_FAULT_DUP_MALLOC) ? NULL : malloc(sizeof *held);
    ok = held != NULL;
    if (ok) {
        *held = (private_comm){.dup = dup, .ranges = tag_ranges()};
        atomic_init(&held->calls, 0);
        atomic_init(&held->refs, 1);
        ok = !apsmpi_fault(APSMPI_FAULT_DUP_ATTR) && PMPI_Comm_set_attr(comm, private_keyval, held) == MPI_SUCCESS;
    }
    rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, dup);
    if (rc == MPI_SUCCESS && all_ok) {
        *out = held;
        return MPI_SUCCESS;
    }
    /* some rank could not keep it: no rank does (the next call makes it again on all), and
     * none leaks it */
    if (ok) {
        PMPI_Comm_delete_attr(comm, private_keyval); /* free_private_comm frees dup and held */
    } else {
        free(held);
        PMPI_Comm_free(&dup);
    }
    return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
}

int apsmpi_private_comm(MPI_Comm comm, MPI_Comm *out)
{
    private_comm *held;
    int rc = private_of(comm, &held);

    if (rc == MPI_SUCCESS)
        *out = held->dup;
    return rc;
}

private_comm *apsmpi_private_comm_hold(MPI_Comm comm)
{
    private_comm *held = NULL;
    int flag = 0;

    if (private_keyval == MPI_KEYVAL_INVALID || PMPI_Comm_get_attr(comm, private_keyval, &held, &flag) != MPI_SUCCESS ||
        !flag)
        return NULL;
    atomic_fetch_add_explicit(&held->refs, 1, memory_order_relaxed);
    return held;
}

MPI_Comm apsmpi_private_comm_dup_of(const private_comm *held) { return held->dup; }

int apsmpi_private_comm_call(MPI_Comm comm, private_comm *held, MPI_Comm *out, int *tag_base)
{
    int rc = held != NULL ? MPI_SUCCESS : private_of(comm, &held);

    if (rc != MPI_SUCCESS)
        return rc;
    *out = held->dup;
    *tag_base = (int)(atomic_fetch_add_explicit(&held->calls, 1, memory_order_relaxed) % (unsigned long)held->ranges) *
                APSMPI_CALL_TAGS;
    return MPI_SUCCESS;
}

int apsmpi_private_comm_tag_ranges(void)
{
    static int ranges; /* (MPI_TAG_UB does not change while the job runs) */
    if (ranges == 0)
        ranges = tag_ranges();
    return ranges;
}
