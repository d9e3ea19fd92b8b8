/* auto_width.c: APSMPI_FORMAT=auto's job state: the rungs' codecs, the buckets' store, the counters per width and their line at MPI_Finalize. */
#include "state/auto_width.h"

#include <stdatomic.h>
#include <stdio.h>

static apsmpi_codec *codecs[APSMPI_MAX_RUNGS - 1];
static apsmpi_width_store store;
static const apsmpi_ladder *ladder;
static int on;

enum { C_CALLS, C_IN, C_WIRE, C_MEASURED, C_ERR_SUM, C_EXCEEDED, C_RAISED, C_LOWERED, C_COUNT };
static _Atomic uint64_t counters[APSMPI_MAX_RUNGS][C_COUNT];
static _Atomic uint64_t err_max[APSMPI_MAX_RUNGS]; /* in 1e-9 */

int apsmpi_auto_init(const apsmpi_config *cfg)
{
    if (on)
        return 0;
    ladder = &cfg->ladder;
    for (int r = 0; r < apsmpi_ladder_fp32(ladder); r++)
        if ((codecs[r] = apsmpi_codec_create_isa(&ladder->format[r], cfg->codec_isa)) == NULL) {
            apsmpi_auto_free();
            return -1;
        }
    if (apsmpi_width_store_init(&store, APSMPI_WIDTH_MAX_BUCKETS, ladder) != 0) {
        apsmpi_auto_free();
        return -1;
    }
    on = 1;
    return 0;
}

void apsmpi_auto_free(void)
{
    for (int r = 0; r < APSMPI_MAX_RUNGS - 1; r++) {
        apsmpi_codec_free(codecs[r]);
        codecs[r] = NULL;
    }
    apsmpi_width_store_free(&store);
    on = 0;
}

const apsmpi_codec *apsmpi_auto_codec(int rung)
{
    return on && rung >= 0 && rung < apsmpi_ladder_fp32(ladder) ? codecs[rung] : NULL;
}

const apsmpi_ladder *apsmpi_auto_ladder(void) { return on ? ladder : NULL; }

apsmpi_width_store *apsmpi_auto_store(void) { return on ? &store : NULL; }

void apsmpi_auto_forget_comm(MPI_Comm comm)
{
    if (on)
        apsmpi_width_forget_comm(&store, (uint64_t)(uintptr_t)comm);
}

static void add(int rung, int c, uint64_t v) { atomic_fetch_add_explicit(&counters[rung][c], v, memory_order_relaxed); }

void apsmpi_auto_count(int rung, uint64_t bytes_in, uint64_t bytes_wire, int measured, double error, int exceeded,
                       int move)
{
    if (!on || rung < 0 || rung >= ladder->rungs)
        return;
    add(rung, C_CALLS, 1);
    add(rung, C_IN, bytes_in);
    add(rung, C_WIRE, bytes_wire);
    if (measured) {
        uint64_t e = (uint64_t)(error * 1e9 + 0.5), old = atomic_load_explicit(&err_max[rung], memory_order_relaxed);
        add(rung, C_MEASURED, 1);
        add(rung, C_ERR_SUM, e);
        while (e > old && !atomic_compare_exchange_weak(&err_max[rung], &old, e))
            ;
    }
    add(rung, C_EXCEEDED, exceeded != 0);
    add(rung, C_RAISED, move == APSMPI_WIDTH_RAISED);
    add(rung, C_LOWERED, move == APSMPI_WIDTH_LOWERED);
}

void apsmpi_auto_report(MPI_Comm comm, double budget)
{
    uint64_t local[APSMPI_MAX_RUNGS * C_COUNT], total[APSMPI_MAX_RUNGS * C_COUNT], most[APSMPI_MAX_RUNGS],
        calls[APSMPI_MAX_RUNGS], calls_max[APSMPI_MAX_RUNGS], calls_min[APSMPI_MAX_RUNGS];
    char line[2048];
    size_t used = 0;
    int rank, size, same = 1, rungs = on ? ladder->rungs : 0;

    if (!on)
        return;
    for (int r = 0; r < rungs; r++) {
        for (int c = 0; c < C_COUNT; c++)
            local[r * C_COUNT + c] = atomic_load_explicit(&counters[r][c], memory_order_relaxed);
        most[r] = atomic_load_explicit(&err_max[r], memory_order_relaxed);
        calls[r] = local[r * C_COUNT + C_CALLS];
    }
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    PMPI_Reduce(local, total, rungs * C_COUNT, MPI_UINT64_T, MPI_SUM, 0, comm);
    PMPI_Reduce(rank == 0 ? MPI_IN_PLACE : most, most, rungs, MPI_UINT64_T, MPI_MAX, 0, comm);
    PMPI_Reduce(calls, calls_max, rungs, MPI_UINT64_T, MPI_MAX, 0, comm);
    PMPI_Reduce(calls, calls_min, rungs, MPI_UINT64_T, MPI_MIN, 0, comm);
    if (rank != 0)
        return;
    for (int r = 0; r < rungs; r++) {
        const uint64_t *t = &total[r * C_COUNT];
        same &= calls_max[r] == calls_min[r];
        used += (size_t)snprintf(
            line + used, sizeof line - used,
            "%s%s calls %llu, bytes %llu -> %llu, flushed share largest %.4f%% mean %.4f%% (of %llu measured), "
            "over budget %llu, raised %llu, lowered %llu",
            r ? "; " : "", apsmpi_ladder_name(ladder, r), (unsigned long long)t[C_CALLS], (unsigned long long)t[C_IN],
            (unsigned long long)t[C_WIRE], (double)most[r] * 1e-7,
            t[C_MEASURED] ? (double)t[C_ERR_SUM] * 1e-7 / (double)t[C_MEASURED] : 0.0,
            (unsigned long long)t[C_MEASURED], (unsigned long long)t[C_EXCEEDED], (unsigned long long)t[C_RAISED],
            (unsigned long long)t[C_LOWERED]);
        if (used >= sizeof line)
            used = sizeof line - 1;
    }
    fprintf(stderr,
            "apsmpi stats: auto (budget %g of non-zero values flushed): summed over %d ranks: %s; widths the "
            "same on every rank: %s\n",
            budget, size, line, same ? "yes" : "no");
}
