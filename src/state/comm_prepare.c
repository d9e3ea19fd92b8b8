/* comm_prepare.c: makes a communicator's node layout and private duplicates in a collective call of the job's, for the requests that will run on it (comm_prepare.h). */
#include "state/comm_prepare.h"

#include "state/comm_info.h"
#include "state/private_comm.h"
#include "state/runtime_state.h"

int apsmpi_comm_prepare(MPI_Comm comm)
{
    const apsmpi_runtime *rt = &apsmpi_rt;
    const apsmpi_comm_info *info;
    apsmpi_comm_info *held;
    MPI_Comm dup;
    int inter, size, ok, all_ok = 0, rc;

    if (rt->codec == NULL || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2)
        return MPI_SUCCESS;
    rc = apsmpi_comm_info_get(comm, rt->cfg.test_node_of_rank, &info);
    if (rc != MPI_SUCCESS)
        return rc;
    held = (apsmpi_comm_info *)info; /* (the cached layout: only its preparation changes) */
    if (held->prepare_tried)
        return MPI_SUCCESS;
    held->prepare_tried = 1;
    if (info->nnodes == 1 && rt->cfg.intranode == APSMPI_INTRANODE_PASS) {
        held->prepared = 1; /* its reductions go to MPI as they are: nothing to make */
        return MPI_SUCCESS;
    }
    ok = apsmpi_private_comm(comm, &dup) == MPI_SUCCESS;
    /* the node path's parts send on the cross-node communicator's duplicate (its ranks are
     * all here: every rank of comm is) */
    if (info->cross != MPI_COMM_NULL && info->nnodes > 1 && info->max_node_size > 1)
        ok = (apsmpi_private_comm(info->cross, &dup) == MPI_SUCCESS) && ok;
    rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    held->prepared = rc == MPI_SUCCESS && all_ok;
    return rc;
}
