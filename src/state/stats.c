/* stats.c: thread-safe counters of compressed and passed-through calls, and the report at finalize. */
#include "state/stats.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static _Atomic uint64_t counters[APSMPI_STAT_COUNT];

void apsmpi_stats_add(int stat, uint64_t value)
{
    atomic_fetch_add_explicit(&counters[stat], value, memory_order_relaxed);
}

uint64_t apsmpi_stats_get(int stat) { return atomic_load_explicit(&counters[stat], memory_order_relaxed); }

uint64_t apsmpi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t apsmpi_count_nonzero(const float *x, size_t n)
{
    const uint32_t *bits = (const uint32_t *)(const void *)x;
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += (bits[i] & 0x7fffffffu) != 0;
    return count;
}

void apsmpi_stats_report(MPI_Comm comm, const char *config_line)
{
    uint64_t local[APSMPI_STAT_COUNT], total[APSMPI_STAT_COUNT], codec_max = 0;
    int rank, size;

    for (int i = 0; i < APSMPI_STAT_COUNT; i++)
        local[i] = apsmpi_stats_get(i);
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    PMPI_Reduce(local, total, APSMPI_STAT_COUNT, MPI_UINT64_T, MPI_SUM, 0, comm);
    PMPI_Reduce(&local[APSMPI_STAT_CODEC_NS], &codec_max, 1, MPI_UINT64_T, MPI_MAX, 0, comm);
    if (rank != 0)
        return;
    fprintf(
        stderr,
        "apsmpi stats: %s; summed over %d ranks: calls compressed %llu, passed through %llu, sent in fp32 for inf/NaN "
        "%llu, for sums that may pass FLT_MAX %llu; "
        "bytes %llu -> %llu (%.2fx); non-zero inputs flushed to zero %llu of %llu (%.6f%%); "
        "codec time %.3f s summed over ranks, %.3f s on the busiest; "
        "calls within one node handed to MPI uncompressed %llu%s\n",
        config_line, size, (unsigned long long)total[APSMPI_STAT_CALLS_COMPRESSED],
        (unsigned long long)total[APSMPI_STAT_CALLS_PASSED], (unsigned long long)total[APSMPI_STAT_CALLS_NONFINITE],
        (unsigned long long)total[APSMPI_STAT_CALLS_NEAR_FLT_MAX], (unsigned long long)total[APSMPI_STAT_BYTES_IN],
        (unsigned long long)total[APSMPI_STAT_BYTES_WIRE],
        total[APSMPI_STAT_BYTES_WIRE] ? (double)total[APSMPI_STAT_BYTES_IN] / (double)total[APSMPI_STAT_BYTES_WIRE]
                                      : 0.0,
        (unsigned long long)total[APSMPI_STAT_VALUES_FLUSHED], (unsigned long long)total[APSMPI_STAT_VALUES_NONZERO],
        total[APSMPI_STAT_VALUES_NONZERO]
            ? 100.0 * (double)total[APSMPI_STAT_VALUES_FLUSHED] / (double)total[APSMPI_STAT_VALUES_NONZERO]
            : 0.0,
        (double)total[APSMPI_STAT_CODEC_NS] * 1e-9, (double)codec_max * 1e-9,
        (unsigned long long)total[APSMPI_STAT_CALLS_ONE_NODE],
        total[APSMPI_STAT_CALLS_ONE_NODE] ? " (no network to save; APSMPI_INTRANODE=compress compresses them)" : "");
}
