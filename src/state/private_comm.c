/* private_comm.c: the cache of private communicator duplicates, an MPI attribute on each user communicator. */
#include "state/private_comm.h"

#include <stdlib.h>

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
    MPI_Comm *dup;
    int flag, rc;

    rc = PMPI_Comm_get_attr(comm, private_keyval, &dup, &flag);
    if (rc == MPI_SUCCESS && !flag) {
        dup = malloc(sizeof *dup);
        if (dup == NULL)
            return MPI_ERR_NO_MEM;
        rc = PMPI_Comm_dup(comm, dup);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Comm_set_attr(comm, private_keyval, dup);
    }
    if (rc == MPI_SUCCESS)
        *out = *dup;
    return rc;
}
