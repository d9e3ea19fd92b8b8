/* private_comm.c: the cache of private communicator duplicates, an MPI attribute on each user communicator. */
#include "state/private_comm.h"

#include <stdlib.h>

#include "core/fault.h"

static int private_keyval = MPI_KEYVAL_INVALID;

static int free_private_comm(MPI_Comm comm, int keyval, void *value, void *extra)
{
    MPI_Comm *dup = value;
    PMPI_Comm_free(dup);
    free(dup);
    return MPI_SUCCESS;
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

int apsmpi_private_comm(MPI_Comm comm, MPI_Comm *out)
{
    MPI_Comm dup, *held = NULL;
    int flag, rc, ok, all_ok;

    rc = PMPI_Comm_get_attr(comm, private_keyval, &held, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag) {
        *out = *held;
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
        *held = dup;
        ok = !apsmpi_fault(APSMPI_FAULT_DUP_ATTR) && PMPI_Comm_set_attr(comm, private_keyval, held) == MPI_SUCCESS;
    }
    rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, dup);
    if (rc == MPI_SUCCESS && all_ok) {
        *out = dup;
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
