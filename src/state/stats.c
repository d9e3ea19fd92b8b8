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
    unsigned long long after =
        total[APSMPI_STAT_BYTES_WIRE] + total[APSMPI_STAT_BYTES_SCALES] + total[APSMPI_STAT_BYTES_AGREEMENT];
#define T(stat) ((unsigned long long)total[APSMPI_STAT_##stat])
    fprintf(stderr,
            "apsmpi stats: %s; summed over %d ranks: calls compressed %llu, passed through %llu, sent in fp32 for "
            "inf/NaN %llu, for sums that may pass FLT_MAX %llu; bytes %llu -> %llu (%.2fx; codes %llu (%.2fx), result "
            "scales %llu, agreement %llu); "
            "non-zero inputs flushed to zero %llu of %llu (%.6f%%); "
            "codec time %.3f s summed over ranks, %.3f s on the busiest; "
            "compressed calls that were requests (MPI_I*, persistent) %llu; by the two-level schedule %llu; "
            "passed through as not a float sum %llu, disabled %llu, below APSMPI_MIN_BYTES %llu, above "
            "APSMPI_MAX_BYTES %llu, one rank or intercommunicator %llu, send buffer is receive buffer %llu, "
            "communicator name %llu, counts above INT_MAX %llu, a request on a communicator not prepared for "
            "requests %llu; sent in fp32 for a rank lacking memory or its GPU %llu, for too many blocks "
            "%llu, after an error %llu; "
            "calls within one node handed to MPI uncompressed %llu%s\n",
            config_line, size, T(CALLS_COMPRESSED), T(CALLS_PASSED), T(CALLS_NONFINITE), T(CALLS_NEAR_FLT_MAX),
            T(BYTES_IN), after, after ? (double)total[APSMPI_STAT_BYTES_IN] / (double)after : 0.0, T(BYTES_WIRE),
            total[APSMPI_STAT_BYTES_WIRE] ? (double)total[APSMPI_STAT_BYTES_IN] / (double)total[APSMPI_STAT_BYTES_WIRE]
                                          : 0.0,
            T(BYTES_SCALES), T(BYTES_AGREEMENT), T(VALUES_FLUSHED), T(VALUES_NONZERO),
            total[APSMPI_STAT_VALUES_NONZERO]
                ? 100.0 * (double)total[APSMPI_STAT_VALUES_FLUSHED] / (double)total[APSMPI_STAT_VALUES_NONZERO]
                : 0.0,
            (double)total[APSMPI_STAT_CODEC_NS] * 1e-9, (double)codec_max * 1e-9, T(CALLS_REQUESTS), T(CALLS_TWOLEVEL),
            T(PASS_NOT_FLOAT_SUM), T(PASS_DISABLED), T(PASS_SMALL), T(PASS_LARGE), T(PASS_COMM), T(PASS_SAME_BUFFER),
            T(PASS_NAME), T(PASS_LARGE_COUNT), T(PASS_UNPREPARED), T(FP32_LACKING), T(FP32_BLOCKS), T(FP32_ERROR),
            T(CALLS_ONE_NODE),
            total[APSMPI_STAT_CALLS_ONE_NODE] ? " (no network to save; APSMPI_INTRANODE=compress compresses them)"
                                              : "");
#undef T
}
