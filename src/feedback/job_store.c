/* job_store.c: the job's one store of error feedback's residuals, and its line in the statistics at MPI_Finalize. */
#include "feedback/job_store.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

static apsmpi_residual_store store;
static int store_on;
static _Atomic uint64_t device_inputs;

int apsmpi_feedback_store_init(size_t max_bytes)
{
    if (store_on)
        return 0;
    if (apsmpi_residual_store_init(&store, max_bytes) != 0)
        return -1;
    store_on = 1;
    return 0;
}

apsmpi_residual_store *apsmpi_feedback_store(void) { return store_on ? &store : NULL; }

void apsmpi_feedback_note_device_input(void) { atomic_fetch_add_explicit(&device_inputs, 1, memory_order_relaxed); }

enum { SUM_ENTRIES, SUM_HELD, SUM_MADE, SUM_REUSED, SUM_EVICTED, SUM_REFUSED, SUM_DEVICE, SUMS };

void apsmpi_feedback_store_report(MPI_Comm comm)
{
    apsmpi_residual_stats st;
    uint64_t local[SUMS], total[SUMS], local_max[2], most[2];
    double sq[2], sq_total[2];
    int rank, size;

    if (store_on)
        apsmpi_residual_stats_of(&store, &st);
    else
        st = (apsmpi_residual_stats){0};
    local[SUM_ENTRIES] = st.entries;
    local[SUM_HELD] = st.held_bytes;
    local[SUM_MADE] = st.made;
    local[SUM_REUSED] = st.reused;
    local[SUM_EVICTED] = st.evicted;
    local[SUM_REFUSED] = st.refused;
    local[SUM_DEVICE] = atomic_load_explicit(&device_inputs, memory_order_relaxed);
    local_max[0] = st.held_bytes;
    local_max[1] = st.peak_bytes;
    sq[0] = st.res_sq;
    sq[1] = st.in_sq;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    PMPI_Reduce(local, total, SUMS, MPI_UINT64_T, MPI_SUM, 0, comm);
    PMPI_Reduce(local_max, most, 2, MPI_UINT64_T, MPI_MAX, 0, comm);
    PMPI_Reduce(sq, sq_total, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank != 0)
        return;
    fprintf(
        stderr,
        "apsmpi stats: error feedback: summed over %d ranks: residuals held %llu, %.2f MiB (at most %.2f MiB on one "
        "rank, peak %.2f MiB; bound %.2f MiB a rank); residual norm %.4g of the inputs' (sqrt(sum r^2 / sum x^2) "
        "over the last call of each key); made %llu, reused %llu, dropped to make room %llu, refused %llu; "
        "contributions on a GPU without feedback %llu\n",
        size, (unsigned long long)total[SUM_ENTRIES], (double)total[SUM_HELD] / 1048576.0, (double)most[0] / 1048576.0,
        (double)most[1] / 1048576.0, (double)st.max_bytes / 1048576.0,
        sq_total[1] > 0 ? sqrt(sq_total[0] / sq_total[1]) : 0.0, (unsigned long long)total[SUM_MADE],
        (unsigned long long)total[SUM_REUSED], (unsigned long long)total[SUM_EVICTED],
        (unsigned long long)total[SUM_REFUSED], (unsigned long long)total[SUM_DEVICE]);
}

void apsmpi_feedback_store_free(void)
{
    if (!store_on)
        return;
    apsmpi_residual_store_free(&store);
    store_on = 0;
}
