/* semantics_check.c: legal MPI programs that must work with the library preloaded as without it: request handles MPI hands out again, communicators started in different orders, arrays changed or freed after the call, a communicator freed with a request pending, and the large-count (MPI_*_c) and persistent forms against their int-count twins.
 *
 * semantics_check CASE [--count N]   (every rank the same CASE)
 *   reuse      a compressed MPI_Iallreduce completed, then requests of the job's own that MPI
 *              may give the same handle: an MPI_Irecv cancelled (MPI_Test_cancelled must say
 *              so) and, where the MPI has them, an MPI_Allreduce_init on ints started and
 *              waited for (its sum checked); 20 rounds.
 *   crossed    even ranks start MPI_Iallreduce on d1 then d2, odd ranks on d2 then d1, then
 *              wait for both: d1, d2 made by MPI_Comm_dup (prepared: compressed) and by
 *              MPI_Cart_create (not prepared: passed through). Must not hang.
 *   counts     MPI_Ireduce_scatter whose recvcounts array the job overwrites and frees right
 *              after the call (as mpi4py does); the result checked against MPI_Reduce_scatter
 *              with the same counts.
 *   commfree   MPI_Iallreduce on a duplicate that the job frees before waiting for it.
 *   large      the MPI_*_c forms (where the library wraps them: build_config.h) against their
 *              int-count forms, bit for bit; and the persistent forms against the blocking,
 *              also a compressed one and the job's own started and waited for together.
 *   huge       at 1 rank, the MPI_*_c forms with 2^31 + 64 floats (beyond INT_MAX), on buffers
 *              whose 64 MiB of memory repeat across their 8 GiB of addresses: MPI's sum of
 *              one rank copies the whole count, so a count cut to an int (64, or negative)
 *              leaves most of the 64 MiB unwritten, or fails.
 * Each compressed result is compared bit for bit with the same call made blocking (the same
 * algorithm and format: the same bits; not with --bound-only, for APSMPI_ALGORITHM=ring's
 * small calls, whose requests take MPI's non-blocking collective), and with the exact sum within 1/8 of the largest
 * value (the coarsest format the tests run). Prints "semantics_check CASE: ok" on rank 0;
 * exits non-zero on a wrong result. */
#define _GNU_SOURCE
#include "build_config.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int count = 100003;
static int bound_only; /* --bound-only: a request's bits may differ from the blocking call's */

static void fail(const char *what)
{
    fprintf(stderr, "semantics_check[%d]: FAILED: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The job's input: values of several magnitudes, different on each rank. */
static void fill(float *x, int n, int salt)
{
    for (int i = 0; i < n; i++)
        x[i] = (float)(((i * 7 + rank * 13 + salt) % 29) - 14) * (1.0f + (float)(i % 5) * 0.25f);
}

/* got against the exact sum of every rank's fill(.., salt) from element `first` on. */
static void check_sum(const float *got, int n, int first, int salt, const char *what)
{
    float *mine = malloc((size_t)(first + n) * sizeof *mine);
    double maxabs = 0, err = 0;

    for (int i = 0; i < n; i++) {
        double exact = 0;
        for (int r = 0; r < size; r++) {
            int save = rank;
            rank = r;
            fill(mine, first + n, salt);
            rank = save;
            exact += mine[first + i];
        }
        maxabs = fmax(maxabs, fabs(exact));
        err = fmax(err, fabs(exact - got[i]));
        if (i > 2000) /* (the head of the buffer is enough for the bound; every element is
                       * compared bit for bit elsewhere) */
            break;
    }
    free(mine);
    if (err > maxabs / 8)
        fail(what);
}

static void same_bits(const float *a, const float *b, int n, const char *what)
{
    if (memcmp(a, b, (size_t)n * sizeof *a) != 0)
        fail(what);
}

static void case_reuse(void)
{
    float *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out);
    float *ref = malloc((size_t)count * sizeof *ref);

    fill(in, count, 1);
    MPI_Allreduce(in, ref, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int round = 0; round < 20; round++) {
        MPI_Request req, recv;
        MPI_Status st;
        int flag = 0, dummy;

        MPI_Iallreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        same_bits(out, ref, count, "reuse: the request's result is the blocking call's");
        /* a receive nobody sends to: cancelled, it must report cancelled */
        MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &recv);
        MPI_Cancel(&recv);
        MPI_Wait(&recv, &st);
        MPI_Test_cancelled(&st, &flag);
        if (!flag)
            fail("reuse: MPI_Cancel of the job's own MPI_Irecv did not cancel it");
#ifdef APSMPI_HAVE_PERSISTENT_REDUCTIONS
        {
            int one = rank + 1, sum = 0;
            MPI_Request p;
            MPI_Iallreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Allreduce_init(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p);
            MPI_Start(&p);
            MPI_Wait(&p, MPI_STATUS_IGNORE);
            MPI_Request_free(&p);
            if (sum != size * (size + 1) / 2)
                fail("reuse: the job's own persistent MPI_Allreduce_init did not run");
        }
#endif
    }
    free(in);
    free(out);
    free(ref);
}

static void case_crossed(void)
{
    float *in = malloc((size_t)count * sizeof *in), *out[2], *ref = malloc((size_t)count * sizeof *ref);
    MPI_Comm d[2];
    int dims[1] = {size}, periods[1] = {0};

    out[0] = malloc((size_t)count * sizeof *out[0]);
    out[1] = malloc((size_t)count * sizeof *out[1]);
    fill(in, count, 2);
    for (int how = 0; how < 2; how++) {
        MPI_Request req[2];
        if (how == 0) {
            MPI_Comm_dup(MPI_COMM_WORLD, &d[0]);
            MPI_Comm_dup(MPI_COMM_WORLD, &d[1]);
        } else {
            MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &d[0]);
            MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &d[1]);
        }
        for (int k = 0; k < 2; k++) {
            int which = rank % 2 == 0 ? k : 1 - k;
            MPI_Iallreduce(in, out[which], count, MPI_FLOAT, MPI_SUM, d[which], &req[which]);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; k++) {
            MPI_Allreduce(in, ref, count, MPI_FLOAT, MPI_SUM, d[k]);
            if (how == 0 && !bound_only)
                same_bits(out[k], ref, count, "crossed: a request's result is the blocking call's");
            check_sum(out[k], count, 0, 2, "crossed: the sum");
            MPI_Comm_free(&d[k]);
        }
    }
    free(in);
    free(out[0]);
    free(out[1]);
    free(ref);
}

static void case_counts(void)
{
    int *counts = malloc((size_t)size * sizeof *counts), *kept = malloc((size_t)size * sizeof *kept), total = 0,
        first = 0;
    float *in, *out, *ref;
    MPI_Request req;

    for (int r = 0; r < size; r++) {
        kept[r] = count / size + (r == size - 1 ? count % size : 0) + r * 64;
        total += kept[r];
    }
    for (int r = 0; r < rank; r++)
        first += kept[r];
    in = malloc((size_t)total * sizeof *in);
    out = malloc((size_t)kept[rank] * sizeof *out);
    ref = malloc((size_t)kept[rank] * sizeof *ref);
    fill(in, total, 3);
    MPI_Reduce_scatter(in, ref, kept, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    memcpy(counts, kept, (size_t)size * sizeof *counts);
    MPI_Ireduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
    for (int r = 0; r < size; r++) /* the job's array, reused and then freed */
        counts[r] = 7 + r;
    free(counts);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    same_bits(out, ref, kept[rank], "counts: the request's result is the blocking call's");
    check_sum(out, kept[rank], first, 3, "counts: the sum");
    free(in);
    free(out);
    free(ref);
    free(kept);
}

static void case_commfree(void)
{
    float *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out);
    float *ref = malloc((size_t)count * sizeof *ref);

    fill(in, count, 4);
    MPI_Allreduce(in, ref, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int round = 0; round < 3; round++) {
        MPI_Comm dup;
        MPI_Request req;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Iallreduce(in, out, count, MPI_FLOAT, MPI_SUM, dup, &req);
        MPI_Comm_free(&dup);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        same_bits(out, ref, count, "commfree: the result of a request on a freed communicator");
    }
    free(in);
    free(out);
    free(ref);
}

static void case_large(void)
{
    int per = count / size;
    float *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out);
    float *ref = malloc((size_t)count * sizeof *ref);
    int *counts = malloc((size_t)size * sizeof *counts);
    MPI_Request req;

    fill(in, count, 5);
    for (int r = 0; r < size; r++)
        counts[r] = per;
    MPI_Allreduce(in, ref, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    check_sum(ref, count, 0, 5, "large: the int-count allreduce's sum");
#ifdef APSMPI_HAVE_PERSISTENT_REDUCTIONS
    MPI_Allreduce_init(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int k = 0; k < 2; k++) {
        memset(out, 0, (size_t)count * sizeof *out);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        same_bits(out, ref, count, "large: MPI_Allreduce_init + MPI_Start against MPI_Allreduce");
    }
    MPI_Request_free(&req);
    {
        /* a compressed persistent request beside the job's own (on ints), started and waited
         * for together, with statuses */
        int ints[8], sums[8];
        MPI_Request two[2];
        MPI_Status st[2];
        for (int i = 0; i < 8; i++)
            ints[i] = rank + i;
        MPI_Allreduce_init(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &two[0]);
        MPI_Allreduce_init(ints, sums, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &two[1]);
        for (int k = 0; k < 3; k++) {
            memset(out, 0, (size_t)count * sizeof *out);
            if (MPI_Startall(2, two) != MPI_SUCCESS || MPI_Waitall(2, two, st) != MPI_SUCCESS)
                fail("large: MPI_Startall + MPI_Waitall of a compressed and a plain persistent request");
            same_bits(out, ref, count, "large: the compressed one of two persistent requests waited for together");
            for (int i = 0; i < 8; i++)
                if (sums[i] != size * (size - 1) / 2 + size * i)
                    fail("large: the plain one of two persistent requests waited for together");
        }
        MPI_Request_free(&two[0]);
        MPI_Request_free(&two[1]);
    }
#endif
#ifdef APSMPI_HAVE_LARGE_COUNT_REDUCTIONS
    {
        MPI_Count ccount = count, *ccounts = malloc((size_t)size * sizeof *ccounts);
        float *ref_rs = malloc((size_t)per * sizeof *ref_rs);
        for (int r = 0; r < size; r++)
            ccounts[r] = per;
        MPI_Allreduce_c(in, out, ccount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        same_bits(out, ref, count, "large: MPI_Allreduce_c against MPI_Allreduce");
        MPI_Iallreduce_c(in, out, ccount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        same_bits(out, ref, count, "large: MPI_Iallreduce_c against MPI_Allreduce");
        MPI_Reduce_scatter(in, ref_rs, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Reduce_scatter_c(in, out, ccounts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        same_bits(out, ref_rs, per, "large: MPI_Reduce_scatter_c against MPI_Reduce_scatter");
        MPI_Ireduce_scatter_c(in, out, ccounts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        same_bits(out, ref_rs, per, "large: MPI_Ireduce_scatter_c against MPI_Reduce_scatter");
        MPI_Reduce_scatter_block(in, ref_rs, per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Reduce_scatter_block_c(in, out, (MPI_Count)per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        same_bits(out, ref_rs, per, "large: MPI_Reduce_scatter_block_c against MPI_Reduce_scatter_block");
        MPI_Ireduce_scatter_block_c(in, out, (MPI_Count)per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        same_bits(out, ref_rs, per, "large: MPI_Ireduce_scatter_block_c against MPI_Reduce_scatter_block");
#if defined(APSMPI_HAVE_LARGE_COUNT_PERSISTENT_REDUCTIONS) && defined(APSMPI_HAVE_PERSISTENT_REDUCTIONS)
        MPI_Allreduce_init_c(in, out, ccount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
        same_bits(out, ref, count, "large: MPI_Allreduce_init_c against MPI_Allreduce");
        MPI_Reduce_scatter_init_c(in, out, ccounts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
        MPI_Reduce_scatter(in, ref_rs, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        same_bits(out, ref_rs, per, "large: MPI_Reduce_scatter_init_c against MPI_Reduce_scatter");
        MPI_Reduce_scatter_block_init_c(in, out, (MPI_Count)per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                        &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
        same_bits(out, ref_rs, per, "large: MPI_Reduce_scatter_block_init_c against MPI_Reduce_scatter_block");
#endif
        free(ccounts);
        free(ref_rs);
    }
#endif
    free(in);
    free(out);
    free(ref);
    free(counts);
}

#if defined(APSMPI_HAVE_LARGE_COUNT_REDUCTIONS) && defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>

enum { HUGE_PERIOD = 64 << 20 }; /* bytes of memory behind every buffer of case huge */

/* n floats of addresses whose memory repeats every HUGE_PERIOD bytes (one memfd mapped again
 * and again), so that 8 GiB of addresses need 64 MiB. */
static float *repeating_floats(size_t n)
{
    size_t bytes = (n * sizeof(float) + HUGE_PERIOD - 1) / HUGE_PERIOD * HUGE_PERIOD;
    int fd = memfd_create("semantics_check", 0);
    char *base = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (fd < 0 || ftruncate(fd, HUGE_PERIOD) != 0 || base == MAP_FAILED)
        fail("huge: memfd and address space");
    for (size_t off = 0; off < bytes; off += HUGE_PERIOD)
        if (mmap(base + off, HUGE_PERIOD, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
            fail("huge: mapping the memfd");
    close(fd);
    return (float *)(void *)base;
}

/* out's memory (one period) holds in's after a call that copied all of it (1 rank), and is
 * then marked again. */
static void copied(float *out, const float *in, const char *what)
{
    if (memcmp(out, in, HUGE_PERIOD) != 0)
        fail(what);
    for (size_t i = 0; i < HUGE_PERIOD / sizeof(float); i++)
        out[i] = -1.0f;
}

static void case_huge(void)
{
    const MPI_Count n = (MPI_Count)INT_MAX + 65; /* 2^31 + 64 */
    float *in = repeating_floats((size_t)n), *out = repeating_floats((size_t)n);
    MPI_Request req;

    if (size != 1)
        fail("huge: run it on 1 rank");
    for (size_t i = 0; i < HUGE_PERIOD / sizeof(float); i++) {
        in[i] = (float)(i % 1000) - 500.0f;
        out[i] = -1.0f;
    }
    MPI_Allreduce_c(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    copied(out, in, "huge: MPI_Allreduce_c of 2^31 + 64 floats");
    MPI_Iallreduce_c(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    copied(out, in, "huge: MPI_Iallreduce_c of 2^31 + 64 floats");
    MPI_Reduce_scatter_c(in, out, &n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    copied(out, in, "huge: MPI_Reduce_scatter_c of 2^31 + 64 floats");
    MPI_Reduce_scatter_block_c(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    copied(out, in, "huge: MPI_Reduce_scatter_block_c of 2^31 + 64 floats");
}
#else
static void case_huge(void)
{
    if (rank == 0)
        printf("semantics_check huge: not available: the library wraps no large-count reduction with this MPI\n");
    MPI_Finalize();
    exit(77);
}
#endif

int main(int argc, char **argv)
{
    int provided;
    const char *which = argc > 1 ? argv[1] : "";

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            count = atoi(argv[++i]);
        else if (strcmp(argv[i], "--bound-only") == 0)
            bound_only = 1;
        else
            fail("unknown option");
    if (strcmp(which, "reuse") == 0)
        case_reuse();
    else if (strcmp(which, "crossed") == 0)
        case_crossed();
    else if (strcmp(which, "counts") == 0)
        case_counts();
    else if (strcmp(which, "commfree") == 0)
        case_commfree();
    else if (strcmp(which, "large") == 0)
        case_large();
    else if (strcmp(which, "huge") == 0)
        case_huge();
    else
        fail("usage: semantics_check reuse|crossed|counts|commfree|large|huge [--count N] [--bound-only]");
    if (rank == 0)
        printf("semantics_check %s: ok\n", which);
    MPI_Finalize();
    return 0;
}
