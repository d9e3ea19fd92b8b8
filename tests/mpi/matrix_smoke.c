/* matrix_smoke.c: one program per MPI of the matrix (scripts/ci/mpi_matrix.sh) that calls every entry point libapsmpi.so intercepts, checks each result exactly and prints the calls it expects compressed and passed through. */
/* usage: matrix_smoke CHECK (one per run, so that a hang or an abort names its check)
 * CHECK: blocking | init_thread | nonblocking | array_copy | persistent | large_count |
 *        large_count_persistent | mixed_cancel | mixed_persistent | comm_free | start_order
 * Values are small integers (sums of at most 5 ranks below 2^8): exact in fp16 and bf16, so
 * every float result must equal the exact sum bit for bit. Rank 0 prints
 *   "matrix_smoke CHECK: ok: expect compressed C passed P"  (C, P: summed over the ranks)
 * or "matrix_smoke CHECK: FAILED: ..." (status 1) or "matrix_smoke CHECK: not available: ..."
 * (status 77: the MPI lacks the form). The caller compares C and P with the library's statistics
 * line (APSMPI_STATS=1). Forms the MPI may lack are compiled where the MPI has them:
 * MATRIX_HAVE_PERSISTENT (MPI_Allreduce_init and the two others), MATRIX_HAVE_LARGE_COUNT
 * (MPI_Allreduce_c, ..., MPI_Reduce_scatter_block_c) and MATRIX_HAVE_LARGE_COUNT_PERSISTENT
 * (MPI_Allreduce_init_c, ...), defined by the caller from the MPI library's symbols. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 6000 };

static int rank, size, failed;
static long expect_compressed, expect_passed; /* this rank's */
static const char *check;

static void fail(const char *what, long i, double got, double want)
{
    if (failed++ < 3)
        fprintf(stderr, "matrix_smoke %s: rank %d: %s: element %ld is %.9g, not %.9g\n", check, rank, what, i, got,
                want);
}

/* the input of rank r, element i, in round k: small integers, some negative */
static int value(int r, long i, int k) { return (int)((i * 7 + r * 3 + k * 5) % 23) - 7; }

static void fill(float *x, long n, int k)
{
    for (long i = 0; i < n; i++)
        x[i] = (float)value(rank, i, k);
}

static void fill_int(int *x, long n, int k)
{
    for (long i = 0; i < n; i++)
        x[i] = value(rank, i, k);
}

static double exact(long i, int k, int nranks)
{
    double s = 0;
    for (int r = 0; r < nranks; r++)
        s += value(r, i, k);
    return s;
}

/* the n elements of an allreduce's result, from element first of the whole vector */
static void check_sum(const char *what, const float *y, long first, long n, int k, int nranks)
{
    for (long i = 0; i < n; i++)
        if ((double)y[i] != exact(first + i, k, nranks)) {
            fail(what, first + i, y[i], exact(first + i, k, nranks));
            return;
        }
}

static void check_int_sum(const char *what, const int *y, long n, int k)
{
    for (long i = 0; i < n; i++)
        if ((double)y[i] != exact(i, k, size)) {
            fail(what, i, y[i], exact(i, k, size));
            return;
        }
}

/* uneven reduce-scatter counts summing to N: rank r gets N/size + (r % 3) - 1, the last the rest */
static void scatter_counts(int *counts, long *first_of_mine)
{
    long total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r == size - 1 ? (int)(N - total) : N / size + (r % 3) - 1;
        if (r == rank)
            *first_of_mine = total;
        total += counts[r];
    }
}

static void rc_ok(const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "matrix_smoke %s: rank %d: %s returned %d\n", check, rank, what, rc);
        failed++;
    }
}

/* ---- blocking: MPI_Allreduce (and in place), MPI_Reduce_scatter, MPI_Reduce_scatter_block ---- */
static void blocking(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    int *xi = malloc(N * sizeof *xi), *yi = malloc(N * sizeof *yi), counts[64];
    long first;
    int block = N / size;

    fill(x, N, 1);
    rc_ok("MPI_Allreduce", MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_sum("MPI_Allreduce", y, 0, N, 1, size);
    fill(y, N, 2);
    rc_ok("MPI_Allreduce in place", MPI_Allreduce(MPI_IN_PLACE, y, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_sum("MPI_Allreduce in place", y, 0, N, 2, size);
    scatter_counts(counts, &first);
    fill(x, N, 3);
    rc_ok("MPI_Reduce_scatter", MPI_Reduce_scatter(x, y, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_sum("MPI_Reduce_scatter", y, first, counts[rank], 3, size);
    fill(x, N, 4);
    rc_ok("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(x, y, block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_sum("MPI_Reduce_scatter_block", y, (long)rank * block, block, 4, size);
    expect_compressed += 4;
    /* passed through: not a float sum */
    fill_int(xi, N, 5);
    rc_ok("MPI_Allreduce MPI_INT", MPI_Allreduce(xi, yi, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    check_int_sum("MPI_Allreduce MPI_INT", yi, N, 5);
    fill(x, N, 6);
    rc_ok("MPI_Allreduce MPI_MAX", MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD));
    expect_passed += 2;
    free(x), free(y), free(xi), free(yi);
}

/* ---- non-blocking: the three I-forms and an MPI_INT one, completed by each completion call ---- */
enum { NB = 4 };
struct nb {
    float *x[3], *y[3];
    int *xi, *yi, counts[64], block;
    long first;
    MPI_Request req[NB];
};

static void nb_start(struct nb *s, int k)
{
    for (int j = 0; j < 3; j++)
        fill(s->x[j], N, k + j);
    fill_int(s->xi, N, k + 3);
    rc_ok("MPI_Iallreduce", MPI_Iallreduce(s->x[0], s->y[0], N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &s->req[0]));
    rc_ok("MPI_Ireduce_scatter",
          MPI_Ireduce_scatter(s->x[1], s->y[1], s->counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &s->req[1]));
    rc_ok("MPI_Ireduce_scatter_block",
          MPI_Ireduce_scatter_block(s->x[2], s->y[2], s->block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &s->req[2]));
    rc_ok("MPI_Iallreduce MPI_INT", MPI_Iallreduce(s->xi, s->yi, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &s->req[3]));
    expect_compressed += 3;
    expect_passed += 1;
}

static void nb_check(struct nb *s, int k, const char *how)
{
    char what[96];
    for (int j = 0; j < NB; j++)
        if (s->req[j] != MPI_REQUEST_NULL) {
            snprintf(what, sizeof what, "%s left request %d active", how, j);
            fail(what, j, 0, 0);
        }
    snprintf(what, sizeof what, "MPI_Iallreduce (%s)", how);
    check_sum(what, s->y[0], 0, N, k, size);
    snprintf(what, sizeof what, "MPI_Ireduce_scatter (%s)", how);
    check_sum(what, s->y[1], s->first, s->counts[rank], k + 1, size);
    snprintf(what, sizeof what, "MPI_Ireduce_scatter_block (%s)", how);
    check_sum(what, s->y[2], (long)rank * s->block, s->block, k + 2, size);
    snprintf(what, sizeof what, "MPI_Iallreduce MPI_INT (%s)", how);
    check_int_sum(what, s->yi, N, k + 3);
}

/* The completion calls, each completing all NB requests of a round its own way. */
static void by_wait(struct nb *s)
{
    MPI_Status statuses[NB];
    rc_ok("MPI_Wait", MPI_Wait(&s->req[0], MPI_STATUS_IGNORE));
    rc_ok("MPI_Waitall", MPI_Waitall(NB, s->req, statuses));
}

static void by_waitany(struct nb *s)
{
    int index;
    for (int done = 0; done < NB; done++)
        rc_ok("MPI_Waitany", MPI_Waitany(NB, s->req, &index, MPI_STATUS_IGNORE));
}

static void by_waitsome(struct nb *s)
{
    int outcount, indices[NB];
    MPI_Status statuses[NB];
    for (int done = 0; done < NB; done += outcount)
        rc_ok("MPI_Waitsome", MPI_Waitsome(NB, s->req, &outcount, indices, statuses));
}

static void by_test(struct nb *s)
{
    int flag;
    for (int j = 0; j < NB; j++)
        do
            rc_ok("MPI_Test", MPI_Test(&s->req[j], &flag, MPI_STATUS_IGNORE));
        while (!flag);
}

static void by_testall(struct nb *s)
{
    int flag;
    MPI_Status statuses[NB];
    do
        rc_ok("MPI_Testall", MPI_Testall(NB, s->req, &flag, statuses));
    while (!flag);
}

static void by_testany(struct nb *s)
{
    int index, flag;
    for (int done = 0; done < NB;) {
        rc_ok("MPI_Testany", MPI_Testany(NB, s->req, &index, &flag, MPI_STATUS_IGNORE));
        done += flag && index != MPI_UNDEFINED;
    }
}

static void by_testsome(struct nb *s)
{
    int outcount, indices[NB];
    MPI_Status statuses[NB];
    for (int done = 0; done < NB; done += outcount)
        rc_ok("MPI_Testsome", MPI_Testsome(NB, s->req, &outcount, indices, statuses));
}

static void by_get_status(struct nb *s)
{
    int flag;
    for (int j = 0; j < NB; j++) {
        do
            rc_ok("MPI_Request_get_status", MPI_Request_get_status(s->req[j], &flag, MPI_STATUS_IGNORE));
        while (!flag);
        rc_ok("MPI_Wait after MPI_Request_get_status", MPI_Wait(&s->req[j], MPI_STATUS_IGNORE));
    }
}

static const struct {
    const char *how;
    void (*complete)(struct nb *s);
} completions[] = {
    {"MPI_Wait, MPI_Waitall", by_wait}, {"MPI_Waitany", by_waitany},
    {"MPI_Waitsome", by_waitsome},      {"MPI_Test", by_test},
    {"MPI_Testall", by_testall},        {"MPI_Testany", by_testany},
    {"MPI_Testsome", by_testsome},      {"MPI_Request_get_status", by_get_status},
};

static void nonblocking(void)
{
    struct nb s;

    for (int j = 0; j < 3; j++)
        s.x[j] = malloc(N * sizeof(float)), s.y[j] = malloc(N * sizeof(float));
    s.xi = malloc(N * sizeof(int)), s.yi = malloc(N * sizeof(int));
    scatter_counts(s.counts, &s.first);
    s.block = N / size;

    /* round i: values from k = 10 (i + 1), so that no round's result is the last one's */
    for (size_t i = 0; i < sizeof completions / sizeof completions[0]; i++) {
        int k = 10 * (int)(i + 1);
        nb_start(&s, k);
        completions[i].complete(&s);
        nb_check(&s, k, completions[i].how);
    }
    for (int j = 0; j < 3; j++)
        free(s.x[j]), free(s.y[j]);
    free(s.xi), free(s.yi);
}

/* ---- the counts array of MPI_Ireduce_scatter freed and its memory reused before the wait ---- */
static void array_copy(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    int counts[64];
    long first;
    MPI_Request req;

    scatter_counts(counts, &first);
    for (int round = 0; round < 3; round++) {
        int *c = malloc(size * sizeof *c);
        memcpy(c, counts, size * sizeof *c);
        fill(x, N, 60 + round);
        rc_ok("MPI_Ireduce_scatter", MPI_Ireduce_scatter(x, y, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
        for (int r = 0; r < size; r++)
            c[r] = r == rank ? 1 : N; /* wrong counts where the call's own were */
        free(c);
        c = malloc(size * sizeof *c); /* likely the same memory */
        for (int r = 0; r < size; r++)
            c[r] = N;
        rc_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        free(c);
        check_sum("MPI_Ireduce_scatter, counts array freed after the call", y, first, counts[rank], 60 + round, size);
        expect_compressed += 1;
    }
    free(x), free(y);
}

/* ---- the job's own requests among compressed ones: a handle MPI hands out again ---- */
static void mixed_cancel(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    int buf = 0, cancelled = 0;
    MPI_Request req, recv;
    MPI_Status status;

    for (int round = 0; round < 4; round++) {
        fill(x, N, 70 + round);
        rc_ok("MPI_Iallreduce", MPI_Iallreduce(x, y, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
        rc_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        check_sum("MPI_Iallreduce", y, 0, N, 70 + round, size);
        expect_compressed += 1;
        /* a receive no rank sends to: only MPI_Cancel can complete it */
        rc_ok("MPI_Irecv", MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &recv));
        rc_ok("MPI_Cancel", MPI_Cancel(&recv));
        rc_ok("MPI_Wait of the cancelled receive", MPI_Wait(&recv, &status));
        rc_ok("MPI_Test_cancelled", MPI_Test_cancelled(&status, &cancelled));
        if (!cancelled)
            fail("the job's own MPI_Irecv after a compressed request was not cancelled", round, 0, 1);
    }
    free(x), free(y);
}

#ifdef MATRIX_HAVE_PERSISTENT
/* ---- persistent: MPI_Allreduce_init and the others, MPI_Start, MPI_Startall, MPI_Request_free ---- */
static void persistent(void)
{
    float *x[3], *y[3];
    int *xi = malloc(N * sizeof *xi), *yi = malloc(N * sizeof *yi), counts[64], block = N / size;
    long first;
    MPI_Request req[4];

    for (int j = 0; j < 3; j++)
        x[j] = malloc(N * sizeof(float)), y[j] = malloc(N * sizeof(float));
    scatter_counts(counts, &first);
    rc_ok("MPI_Allreduce_init",
          MPI_Allreduce_init(x[0], y[0], N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    rc_ok("MPI_Reduce_scatter_init",
          MPI_Reduce_scatter_init(x[1], y[1], counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    rc_ok("MPI_Reduce_scatter_block_init",
          MPI_Reduce_scatter_block_init(x[2], y[2], block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
    rc_ok("MPI_Allreduce_init MPI_INT",
          MPI_Allreduce_init(xi, yi, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[3]));
    expect_passed += 1; /* the MPI_INT one, counted once when it is made */
    for (int round = 0; round < 3; round++) {
        int k = 80 + 10 * round;
        for (int j = 0; j < 3; j++)
            fill(x[j], N, k + j);
        fill_int(xi, N, k + 3);
        if (round == 0) {
            for (int j = 0; j < 4; j++) {
                rc_ok("MPI_Start", MPI_Start(&req[j]));
                rc_ok("MPI_Wait", MPI_Wait(&req[j], MPI_STATUS_IGNORE));
            }
        } else {
            rc_ok("MPI_Startall", MPI_Startall(4, req));
            rc_ok("MPI_Waitall", MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
        }
        check_sum("MPI_Allreduce_init + MPI_Start", y[0], 0, N, k, size);
        check_sum("MPI_Reduce_scatter_init + MPI_Start", y[1], first, counts[rank], k + 1, size);
        check_sum("MPI_Reduce_scatter_block_init + MPI_Start", y[2], (long)rank * block, block, k + 2, size);
        check_int_sum("MPI_Allreduce_init MPI_INT + MPI_Start", yi, N, k + 3);
        expect_compressed += 3;
    }
    for (int j = 0; j < 4; j++) {
        rc_ok("MPI_Request_free", MPI_Request_free(&req[j]));
        if (req[j] != MPI_REQUEST_NULL)
            fail("MPI_Request_free left the request", j, 0, 0);
    }
    for (int j = 0; j < 3; j++)
        free(x[j]), free(y[j]);
    free(xi), free(yi);
}

/* ---- a persistent request made right after a compressed MPI_Iallreduce completed ---- */
static void mixed_persistent(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    int *xi = malloc(N * sizeof *xi), *yi = malloc(N * sizeof *yi);
    MPI_Request req, preq;

    for (int round = 0; round < 4; round++) {
        fill(x, N, 120 + round);
        rc_ok("MPI_Iallreduce", MPI_Iallreduce(x, y, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
        rc_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        check_sum("MPI_Iallreduce", y, 0, N, 120 + round, size);
        /* MPI may hand out the handle just released: the new request is another one */
        if (round % 2 == 0) {
            rc_ok("MPI_Allreduce_init",
                  MPI_Allreduce_init(x, z, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq));
            rc_ok("MPI_Start", MPI_Start(&preq));
            rc_ok("MPI_Wait", MPI_Wait(&preq, MPI_STATUS_IGNORE));
            check_sum("MPI_Allreduce_init after a compressed MPI_Iallreduce", z, 0, N, 120 + round, size);
            expect_compressed += 2;
        } else {
            /* the job's own (not compressed) persistent request */
            fill_int(xi, N, 130 + round);
            rc_ok("MPI_Allreduce_init MPI_INT",
                  MPI_Allreduce_init(xi, yi, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq));
            rc_ok("MPI_Start", MPI_Start(&preq));
            rc_ok("MPI_Wait", MPI_Wait(&preq, MPI_STATUS_IGNORE));
            check_int_sum("MPI_Allreduce_init MPI_INT after a compressed MPI_Iallreduce", yi, N, 130 + round);
            expect_compressed += 1;
            expect_passed += 1;
        }
        rc_ok("MPI_Request_free", MPI_Request_free(&preq));
    }
    free(x), free(y), free(z), free(xi), free(yi);
}
#endif

#ifdef MATRIX_HAVE_LARGE_COUNT
/* ---- MPI 4's large-count forms: compressed as their int-count twins ---- */
static void large_count(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    int *xi = malloc(N * sizeof *xi), *yi = malloc(N * sizeof *yi), icounts[64];
    MPI_Count counts[64], block = N / size;
    long first;
    MPI_Request req;

    scatter_counts(icounts, &first);
    for (int r = 0; r < size; r++)
        counts[r] = icounts[r];
    fill(x, N, 140);
    rc_ok("MPI_Allreduce_c", MPI_Allreduce_c(x, y, (MPI_Count)N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_sum("MPI_Allreduce_c", y, 0, N, 140, size);
    fill(x, N, 141);
    rc_ok("MPI_Reduce_scatter_c", MPI_Reduce_scatter_c(x, y, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_sum("MPI_Reduce_scatter_c", y, first, icounts[rank], 141, size);
    fill(x, N, 142);
    rc_ok("MPI_Reduce_scatter_block_c", MPI_Reduce_scatter_block_c(x, y, block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_sum("MPI_Reduce_scatter_block_c", y, (long)rank * block, block, 142, size);
    fill(x, N, 143);
    rc_ok("MPI_Iallreduce_c", MPI_Iallreduce_c(x, y, (MPI_Count)N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
    rc_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_sum("MPI_Iallreduce_c", y, 0, N, 143, size);
    fill(x, N, 144);
    {
        MPI_Count *c = malloc(size * sizeof *c);
        memcpy(c, counts, size * sizeof *c);
        rc_ok("MPI_Ireduce_scatter_c", MPI_Ireduce_scatter_c(x, y, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
        for (int r = 0; r < size; r++)
            c[r] = (MPI_Count)1 << 40;
        free(c);
    }
    rc_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_sum("MPI_Ireduce_scatter_c", y, first, icounts[rank], 144, size);
    fill(x, N, 145);
    rc_ok("MPI_Ireduce_scatter_block_c",
          MPI_Ireduce_scatter_block_c(x, y, block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
    rc_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_sum("MPI_Ireduce_scatter_block_c", y, (long)rank * block, block, 145, size);
    expect_compressed += 6;
    fill_int(xi, N, 146);
    rc_ok("MPI_Allreduce_c MPI_INT", MPI_Allreduce_c(xi, yi, (MPI_Count)N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    check_int_sum("MPI_Allreduce_c MPI_INT", yi, N, 146);
    expect_passed += 1;
    free(x), free(y), free(xi), free(yi);
}
#endif

#ifdef MATRIX_HAVE_LARGE_COUNT_PERSISTENT
static void large_count_persistent(void)
{
    float *x[3], *y[3];
    int icounts[64];
    MPI_Count counts[64], block = N / size;
    long first;
    MPI_Request req[3];

    for (int j = 0; j < 3; j++)
        x[j] = malloc(N * sizeof(float)), y[j] = malloc(N * sizeof(float));
    scatter_counts(icounts, &first);
    for (int r = 0; r < size; r++)
        counts[r] = icounts[r];
    rc_ok("MPI_Allreduce_init_c",
          MPI_Allreduce_init_c(x[0], y[0], (MPI_Count)N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    rc_ok("MPI_Reduce_scatter_init_c",
          MPI_Reduce_scatter_init_c(x[1], y[1], counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    rc_ok("MPI_Reduce_scatter_block_init_c", MPI_Reduce_scatter_block_init_c(x[2], y[2], block, MPI_FLOAT, MPI_SUM,
                                                                             MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
    for (int round = 0; round < 2; round++) {
        int k = 150 + 10 * round;
        for (int j = 0; j < 3; j++)
            fill(x[j], N, k + j);
        rc_ok("MPI_Startall", MPI_Startall(3, req));
        rc_ok("MPI_Waitall", MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
        check_sum("MPI_Allreduce_init_c + MPI_Start", y[0], 0, N, k, size);
        check_sum("MPI_Reduce_scatter_init_c + MPI_Start", y[1], first, icounts[rank], k + 1, size);
        check_sum("MPI_Reduce_scatter_block_init_c + MPI_Start", y[2], (long)rank * block, block, k + 2, size);
        expect_compressed += 3;
    }
    for (int j = 0; j < 3; j++) {
        rc_ok("MPI_Request_free", MPI_Request_free(&req[j]));
        free(x[j]), free(y[j]);
    }
}
#endif

/* ---- MPI_Comm_free with a compressed request pending on the communicator (legal) ---- */
static void comm_free(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    MPI_Comm dup, dup2;
    MPI_Request req[2];

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
    fill(x, N, 170);
    /* one compressed call first, so that the communicator's state exists before the free */
    rc_ok("MPI_Allreduce on the duplicate", MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_SUM, dup));
    check_sum("MPI_Allreduce on the duplicate", y, 0, N, 170, size);
    fill(x, N, 171);
    rc_ok("MPI_Iallreduce", MPI_Iallreduce(x, y, N, MPI_FLOAT, MPI_SUM, dup, &req[0]));
    rc_ok("MPI_Comm_free", MPI_Comm_free(&dup));
    /* and on a communicator whose first call is the pending one */
    rc_ok("MPI_Iallreduce on a fresh communicator", MPI_Iallreduce(x, z, N, MPI_FLOAT, MPI_SUM, dup2, &req[1]));
    rc_ok("MPI_Comm_free of the fresh one", MPI_Comm_free(&dup2));
    rc_ok("MPI_Waitall", MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    check_sum("MPI_Iallreduce whose communicator was freed", y, 0, N, 171, size);
    check_sum("MPI_Iallreduce on a fresh communicator freed", z, 0, N, 171, size);
    expect_compressed += 3;
    free(x), free(y), free(z);
}

/* ---- non-blocking calls started in different orders on fresh communicators (legal) ---- */
static void start_order(void)
{
    float *x = malloc(N * sizeof *x), *y[2] = {malloc(N * sizeof(float)), malloc(N * sizeof(float))};
    MPI_Comm d[2];
    MPI_Request req[2];
    int first = rank % 2;

    MPI_Comm_dup(MPI_COMM_WORLD, &d[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &d[1]);
    fill(x, N, 180);
    /* even ranks start on d[0] then d[1], odd ranks d[1] then d[0]: MPI orders each
     * communicator's collectives alone, so this may not wait for the other ranks */
    rc_ok("MPI_Iallreduce", MPI_Iallreduce(x, y[first], N, MPI_FLOAT, MPI_SUM, d[first], &req[first]));
    rc_ok("MPI_Iallreduce", MPI_Iallreduce(x, y[!first], N, MPI_FLOAT, MPI_SUM, d[!first], &req[!first]));
    rc_ok("MPI_Waitall", MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    check_sum("MPI_Iallreduce on d1", y[0], 0, N, 180, size);
    check_sum("MPI_Iallreduce on d2", y[1], 0, N, 180, size);
    expect_compressed += 2;
    MPI_Comm_free(&d[0]);
    MPI_Comm_free(&d[1]);
    free(x), free(y[0]), free(y[1]);
}

struct check {
    const char *name;
    void (*run)(void);
    const char *lacking; /* why the form is not available; NULL if it is */
};

static const struct check checks[] = {
    {"blocking", blocking, NULL},
    {"init_thread", blocking, NULL},
    {"nonblocking", nonblocking, NULL},
    {"array_copy", array_copy, NULL},
    {"mixed_cancel", mixed_cancel, NULL},
    {"comm_free", comm_free, NULL},
    {"start_order", start_order, NULL},
#ifdef MATRIX_HAVE_PERSISTENT
    {"persistent", persistent, NULL},
    {"mixed_persistent", mixed_persistent, NULL},
#else
    {"persistent", NULL, "the MPI has no MPI_Allreduce_init"},
    {"mixed_persistent", NULL, "the MPI has no MPI_Allreduce_init"},
#endif
#ifdef MATRIX_HAVE_LARGE_COUNT
    {"large_count", large_count, NULL},
#else
    {"large_count", NULL, "the MPI has no MPI_Allreduce_c"},
#endif
#ifdef MATRIX_HAVE_LARGE_COUNT_PERSISTENT
    {"large_count_persistent", large_count_persistent, NULL},
#else
    {"large_count_persistent", NULL, "the MPI has no MPI_Allreduce_init_c"},
#endif
};

int main(int argc, char **argv)
{
    const struct check *c = NULL;
    long counts[2], totals[2];
    int provided;

    check = argc > 1 ? argv[1] : "";
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
        if (strcmp(check, checks[i].name) == 0)
            c = &checks[i];
    if (c == NULL) {
        fprintf(stderr, "usage: matrix_smoke CHECK; CHECK one of:");
        for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
            fprintf(stderr, " %s", checks[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    if (c->run == NULL) {
        printf("matrix_smoke %s: not available: %s\n", check, c->lacking);
        return 77;
    }
    if (strcmp(check, "init_thread") == 0) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        if (provided < MPI_THREAD_FUNNELED)
            failed++;
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    c->run();
    /* the two MPI_Allreduce calls below (MPI_LONG, MPI_INT) pass through too */
    expect_passed += 2;
    counts[0] = expect_compressed, counts[1] = expect_passed;
    MPI_Allreduce(counts, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    {
        int f = failed, any;
        MPI_Allreduce(&f, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        failed = any;
    }
    if (rank == 0) {
        if (failed)
            printf("matrix_smoke %s: FAILED: %d wrong result(s) or error(s) (stderr names them)\n", check, failed);
        else
            printf("matrix_smoke %s: ok: expect compressed %ld passed %ld\n", check, totals[0], totals[1]);
        fflush(stdout);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
