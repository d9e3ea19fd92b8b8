/* comm_bench.c: what making communicators costs a job (apsmpi prepares each for its requests where the job makes it: docs/compatibility.md): the time of MPI_Init and of N MPI_Comm_dup + MPI_Comm_free, the slowest rank's, with or without the library preloaded.
 * comm_bench [N]   (default 100) prints "comm_bench: ranks R, MPI_Init S s, dup+free MS ms each" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, rank, size;
    double t0 = now(), init, dups, mine[2], worst[2];

    MPI_Init(&argc, &argv);
    init = now() - t0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    for (int i = 0; i < n; i++) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_free(&dup);
    }
    dups = now() - t0;
    mine[0] = init;
    mine[1] = dups;
    MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_bench: ranks %d, MPI_Init %.3f s, dup+free %.3f ms each\n", size, worst[0], 1e3 * worst[1] / n);
    MPI_Finalize();
    return 0;
}
