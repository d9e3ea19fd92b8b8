/* soak.c: a soak program (not part of make check): many float reductions of random size from several threads on duplicated communicators; checks results, memory growth and progress.
 *
 * Each of --threads threads (MPI_THREAD_MULTIPLE) works on its own duplicate of
 * MPI_COMM_WORLD and makes --calls / threads calls: MPI_Allreduce (in place or not),
 * MPI_Reduce_scatter_block or MPI_Reduce_scatter, with 0 to --max-count elements
 * (log-uniform), drawn from a seed per thread that all ranks share. The inputs are small
 * integers whose sums every format with 3 or more mantissa bits holds exactly at up to 8
 * ranks (rank r holds (i + r) mod 2 at element i), so every result must be exact. Rank 0
 * samples its resident set size (/proc/self/statm) every --sample calls of thread 0 and
 * prints the samples; the run fails if a result is wrong or if the resident size at the
 * end exceeds the one after the first tenth of the calls (when every buffer size has
 * likely been seen) by more than --rss-slack-mb. A hang is caught by the caller's timeout.
 *
 * usage: soak [--calls N] [--threads T] [--max-count N] [--sample N] [--rss-slack-mb M] [--seed S]
 *
 * the long run (README of tests/): mpirun -np 3 -x LD_PRELOAD=... -x APSMPI_MIN_BYTES=0 soak --calls 1000000
 */
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long calls = 1000000, max_count = 65536, sample = 1000, rss_slack_mb = 16;
static int nthreads = 3, world_rank, world_size;
static uint64_t seed = 1;

struct worker {
    int id;
    MPI_Comm comm;
    long wrong, done;
    long rss_first, rss_warm, rss_last, rss_max; /* KiB, thread 0 on rank 0 */
};

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static float input(int r, long i) { return (float)((i + r) % 2); }

static float expected(long i)
{
    float s = 0;
    for (int r = 0; r < world_size; r++)
        s += input(r, i);
    return s;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    long mine = calls / nthreads + (w->id < calls % nthreads);
    float *send = malloc((size_t)max_count * sizeof(float)), *recv = malloc((size_t)max_count * sizeof(float));
    int *counts = malloc((size_t)world_size * sizeof(int));

    for (long k = 0; k < mine; k++) {
        uint64_t h = mix64(seed ^ ((uint64_t)w->id << 48) ^ (uint64_t)k);
        long n = (long)exp((double)(h >> 11) / 9007199254740992.0 * log((double)max_count + 1)) - 1;
        int op = (int)(h % 4), per = (int)(n / world_size);
        long first = 0, len = n;

        for (long i = 0; i < n; i++)
            send[i] = input(world_rank, i);
        if (op == 0) {
            MPI_Allreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, w->comm);
        } else if (op == 1) {
            memcpy(recv, send, (size_t)n * sizeof(float));
            MPI_Allreduce(MPI_IN_PLACE, recv, (int)n, MPI_FLOAT, MPI_SUM, w->comm);
        } else if (op == 2) {
            MPI_Reduce_scatter_block(send, recv, per, MPI_FLOAT, MPI_SUM, w->comm);
            first = (long)world_rank * per;
            len = per;
        } else {
            for (int r = 0; r < world_size; r++)
                counts[r] = per + (r == world_size - 1 ? (int)(n - (long)per * world_size) : 0);
            MPI_Reduce_scatter(send, recv, counts, MPI_FLOAT, MPI_SUM, w->comm);
            first = (long)world_rank * per;
            len = counts[world_rank];
        }
        for (long i = 0; i < len; i++)
            if (recv[i] != expected(first + i)) {
                if (w->wrong++ < 5)
                    fprintf(stderr,
                            "soak: rank %d thread %d call %ld (op %d, %ld elements): element %ld is %g, not %g\n",
                            world_rank, w->id, k, op, n, first + i, recv[i], expected(first + i));
                break;
            }
        w->done++;
        if (w->id == 0 && world_rank == 0 && (k % sample == 0 || k == mine / 10 || k == mine - 1)) {
            long rss = rss_kib();
            if (k == 0)
                w->rss_first = rss;
            if (k <= mine / 10)
                w->rss_warm = rss;
            w->rss_last = rss;
            w->rss_max = rss > w->rss_max ? rss : w->rss_max;
            printf("rss %ld %ld\n", k, rss);
        }
    }
    free(send);
    free(recv);
    free(counts);
    return NULL;
}

int main(int argc, char **argv)
{
    struct worker w[16];
    pthread_t t[16];
    int provided;
    long wrong = 0, all_wrong, done = 0;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--calls") == 0)
            calls = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0)
            nthreads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--max-count") == 0)
            max_count = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--sample") == 0)
            sample = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--rss-slack-mb") == 0)
            rss_slack_mb = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 0);
        else {
            fprintf(stderr, "usage: soak [--calls N] [--threads T<=16] [--max-count N] [--sample N] [--rss-slack-mb M] "
                            "[--seed S]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 16 || max_count < 1 || sample < 1)
        return 2;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (world_rank == 0)
            fprintf(stderr, "soak: the MPI gives no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < nthreads; i++) {
        w[i] = (struct worker){.id = i};
        MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, work, &w[i]);
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        wrong += w[i].wrong;
        done += w[i].done;
        MPI_Comm_free(&w[i].comm);
    }
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0) {
        long growth = w[0].rss_last - w[0].rss_warm;
        printf("soak: %ld calls per rank from %d threads on %d ranks, %ld wrong results; resident KiB: start %ld, "
               "after a tenth %ld, end %ld, most %ld (growth after the first tenth %ld KiB, allowed %ld)\n",
               done, nthreads, world_size, all_wrong, w[0].rss_first, w[0].rss_warm, w[0].rss_last, w[0].rss_max,
               growth, rss_slack_mb * 1024);
        if (growth > rss_slack_mb * 1024)
            all_wrong++;
    }
    MPI_Bcast(&all_wrong, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_wrong != 0;
}
