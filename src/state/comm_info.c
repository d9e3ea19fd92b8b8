/* comm_info.c: finds, caches and frees each communicator's node communicators and node facts. */
#include "state/comm_info.h"

#include <stdlib.h>

#include "core/log.h"
#include "state/auto_width.h"
#include "core/node_map.h"

static int info_keyval = MPI_KEYVAL_INVALID;

static void free_comm(MPI_Comm *comm)
{
    if (*comm != MPI_COMM_NULL)
        PMPI_Comm_free(comm);
}

static void info_free(apsmpi_comm_info *info)
{
    free_comm(&info->node);
    free_comm(&info->cross);
    free(info);
}

void apsmpi_comm_info_release(const apsmpi_comm_info *info)
{
    apsmpi_comm_info *held = (apsmpi_comm_info *)info;
    if (held != NULL && atomic_fetch_sub_explicit(&held->refs, 1, memory_order_acq_rel) == 1)
        info_free(held);
}

/* The job freed the communicator (or MPI_Finalize did): the attribute's reference goes. */
static int delete_info(MPI_Comm comm, int keyval, void *value, void *extra)
{
    apsmpi_auto_forget_comm(comm); /* its handle may come back for another communicator */
    apsmpi_comm_info_release(value);
    return MPI_SUCCESS;
}

int apsmpi_comm_info_init(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_info, &info_keyval, NULL);
}

void apsmpi_comm_info_finalize(void)
{
    if (info_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&info_keyval);
}

/* The ranks of comm on this rank's node: the real node, or the test map's. */
static int split_node(MPI_Comm comm, const char *map, int rank, MPI_Comm *node)
{
    int world_rank;

    if (map == NULL)
        return PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    return PMPI_Comm_split(comm, apsmpi_node_map_get(map, world_rank), rank, node);
}

static int make_info(MPI_Comm comm, const char *map, apsmpi_comm_info *info)
{
    int rank, rc, mine[3], all[3];

    PMPI_Comm_rank(comm, &rank);
    info->rank = rank;
    PMPI_Comm_size(comm, &info->size);
    rc = split_node(comm, map, rank, &info->node);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Comm_size(info->node, &info->node_size);
    PMPI_Comm_rank(info->node, &info->node_rank);
    mine[0] = info->node_size;
    mine[1] = -info->node_size;
    rc = PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm);
    mine[2] = info->node_rank == 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&mine[2], &all[2], 1, MPI_INT, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    info->max_node_size = all[0];
    info->min_node_size = -all[1];
    info->nnodes = all[2];
    return PMPI_Comm_split(comm, info->node_rank < info->min_node_size ? info->node_rank : MPI_UNDEFINED, rank,
                           &info->cross);
}

int apsmpi_comm_info_get(MPI_Comm comm, const char *test_node_map, const apsmpi_comm_info **out)
{
    apsmpi_comm_info *info;
    int flag, rc;

    rc = PMPI_Comm_get_attr(comm, info_keyval, &info, &flag);
    if (rc != MPI_SUCCESS || flag) {
        *out = info;
        return rc;
    }
    info = malloc(sizeof *info);
    if (info == NULL)
        return MPI_ERR_NO_MEM;
    *info = (apsmpi_comm_info){.node = MPI_COMM_NULL, .cross = MPI_COMM_NULL};
    atomic_init(&info->refs, 1);
    rc = make_info(comm, test_node_map, info);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_attr(comm, info_keyval, info);
    if (rc != MPI_SUCCESS) {
        info_free(info);
        return rc;
    }
    *out = info;
    return MPI_SUCCESS;
}

const apsmpi_comm_info *apsmpi_comm_info_hold(MPI_Comm comm)
{
    apsmpi_comm_info *info = NULL;
    int flag = 0;

    if (info_keyval == MPI_KEYVAL_INVALID || PMPI_Comm_get_attr(comm, info_keyval, &info, &flag) != MPI_SUCCESS ||
        !flag)
        return NULL;
    atomic_fetch_add_explicit(&info->refs, 1, memory_order_relaxed);
    return info;
}

void apsmpi_comm_info_announce(const apsmpi_comm_info *held, int pass)
{
    apsmpi_comm_info *info = (apsmpi_comm_info *)held; /* (only its announced flag changes) */

    if (info->announced)
        return;
    info->announced = 1;
    if (info->rank == 0)
        APSMPI_INFO("a communicator of %d ranks on %d node(s), %d to %d ranks each%s", info->size, info->nnodes,
                    info->min_node_size, info->max_node_size,
                    info->nnodes > 1 ? (info->max_node_size > 1 ? ": fp32 within nodes, compressed across" : "")
                    : pass ? ": all on one node, its reductions go to MPI uncompressed (APSMPI_INTRANODE=compress "
                             "compresses them)"
                           : ": all on one node, compressed (APSMPI_INTRANODE=compress)");
}
