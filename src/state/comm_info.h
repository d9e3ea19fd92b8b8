/* comm_info.h: what apsmpi keeps about each communicator it reduces on: a private duplicate and the node layout. */
#ifndef APSMPI_COMM_INFO_H
#define APSMPI_COMM_INFO_H

#include <mpi.h>

typedef struct apsmpi_comm_info {
    MPI_Comm priv;      /* a duplicate, so the library's messages never match the job's */
    MPI_Comm node;      /* the ranks that share this rank's node (shared memory) */
    MPI_Comm cross;     /* one rank per node, those with this rank's index on its node; only
                         * for index < min_node_size, else MPI_COMM_NULL */
    int node_size, node_rank;
    int nnodes, min_node_size, max_node_size;
} apsmpi_comm_info;

/* Prepares and releases the attribute key (at MPI_Init and MPI_Finalize). */
int apsmpi_comm_info_init(void);
void apsmpi_comm_info_finalize(void);

/* The information of intracommunicator comm, found on first use and cached on comm as an
 * attribute (freed with it). The first use is collective: every rank of comm must make it
 * at the same call, as all of them do for an eligible reduction. Nodes are those of
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or, when APSMPI_TEST_NODE_OF_RANK is set, the
 * ones it names for each world rank. Returns MPI_SUCCESS or an MPI error code. */
int apsmpi_comm_info_get(MPI_Comm comm, const apsmpi_comm_info **out);

#endif
