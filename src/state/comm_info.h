/* comm_info.h: what apsmpi keeps about each communicator it reduces on: how its ranks lie on nodes. */
#ifndef APSMPI_COMM_INFO_H
#define APSMPI_COMM_INFO_H

#include <mpi.h>
#include <stdatomic.h>

typedef struct apsmpi_comm_info {
    MPI_Comm node;  /* the ranks that share this rank's node (shared memory) */
    MPI_Comm cross; /* one rank per node, those with this rank's index on its node; only
                         * for index < min_node_size, else MPI_COMM_NULL */
    int node_size, node_rank;
    int nnodes, min_node_size, max_node_size;
    int rank, size;              /* this rank in the communicator, and its ranks */
    int announced;               /* apsmpi_comm_info_announce said it */
    int prepare_tried, prepared; /* state/comm_prepare.h: what its requests need was made (on every rank) */
    atomic_int refs;             /* the communicator's attribute, and one per request holding it */
} apsmpi_comm_info;

/* Prepares and releases the attribute key (at MPI_Init and MPI_Finalize). */
int apsmpi_comm_info_init(void);
void apsmpi_comm_info_finalize(void);

/* The information of intracommunicator comm, found on first use and cached on comm as an
 * attribute (freed with it). The first use is collective: every rank of comm must make it
 * at the same call, as all of them do for an eligible reduction. Nodes are those of
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or, when test_node_map (APSMPI_TEST_NODE_OF_RANK,
 * core/node_map.h) is not NULL, the ones it names for each world rank. Returns MPI_SUCCESS
 * or an MPI error code. */
int apsmpi_comm_info_get(MPI_Comm comm, const char *test_node_map, const apsmpi_comm_info **out);

/* comm's information if it was found already (no MPI collective: for a call that may not
 * wait), with a reference taken for the caller, who gives it back with
 * apsmpi_comm_info_release; NULL if it was not. The job may free comm meanwhile. */
const apsmpi_comm_info *apsmpi_comm_info_hold(MPI_Comm comm);
void apsmpi_comm_info_release(const apsmpi_comm_info *info);

/* Says once, on the communicator's rank 0 at log level info, how it lies on nodes and what
 * that means for its reductions (pass: one node is handed to MPI). For the job's
 * communicators, not the library's own. */
void apsmpi_comm_info_announce(const apsmpi_comm_info *info, int pass);

#endif
