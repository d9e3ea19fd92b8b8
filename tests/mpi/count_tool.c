/* count_tool.c: a small PMPI profiling tool, as mpiP and Darshan are written, for the tests of apsmpi preloaded beside another tool (tests/mpi/stacking.sh): counts the calls that reach it and prints them at MPI_Finalize.
 * It intercepts MPI_Init, MPI_Init_thread, MPI_Finalize (unless built with
 * COUNT_TOOL_REDUCTIONS_ONLY), MPI_Allreduce and MPI_Iallreduce, and hands each to PMPI_*
 * (as most tools do: a tool preloaded after it never sees the call). World rank 0 prints
 * "count_tool: init N, allreduce N, iallreduce N, finalize 1" on stdout; with
 * COUNT_TOOL_REDUCTIONS_ONLY (no MPI_Finalize of its own) it prints at exit. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long inits, allreduces, iallreduces;
static int world_rank = -1;

static void report(const char *when)
{
    if (world_rank == 0)
        printf("count_tool: init %ld, allreduce %ld, iallreduce %ld, %s\n", inits, allreduces, iallreduces, when);
    fflush(stdout);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    allreduces++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request)
{
    iallreduces++;
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

#ifndef COUNT_TOOL_REDUCTIONS_ONLY
int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    inits++;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    inits++;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    return rc;
}

int MPI_Finalize(void)
{
    report("finalize 1");
    return PMPI_Finalize();
}
#else
__attribute__((destructor)) static void at_exit(void)
{
    int init = 0;
    if (PMPI_Initialized(&init) == MPI_SUCCESS && init) {
        const char *r = getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK") : getenv("PMI_RANK");
        world_rank = r != NULL ? atoi(r) : 0;
        report("at exit");
    }
}
#endif
