/* stats.h: counters of what apsmpi compressed, reported over all ranks at MPI_Finalize (APSMPI_STATS). */
#ifndef APSMPI_STATS_H
#define APSMPI_STATS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum apsmpi_stat {
    APSMPI_STAT_CALLS_COMPRESSED,
    APSMPI_STAT_CALLS_PASSED,       /* not eligible: handed to MPI unchanged */
    APSMPI_STAT_CALLS_NONFINITE,    /* eligible, but a rank held inf/NaN: sent in fp32 */
    APSMPI_STAT_CALLS_NEAR_FLT_MAX, /* eligible, but values so large that the sum may overflow: sent in fp32 */
    APSMPI_STAT_BYTES_IN,           /* fp32 bytes of the compressed calls */
    APSMPI_STAT_BYTES_WIRE,         /* bytes of their encoded form */
    APSMPI_STAT_VALUES_NONZERO,     /* non-zero inputs of the compressed calls */
    APSMPI_STAT_VALUES_FLUSHED,     /* of those, encoded as zero */
    APSMPI_STAT_CODEC_NS,           /* time in exponents, encode, decode and the packed sum */
    APSMPI_STAT_CALLS_ONE_NODE,     /* eligible, on a communicator within one node: handed to MPI */
    APSMPI_STAT_COUNT
};

void apsmpi_stats_add(int stat, uint64_t value);
uint64_t apsmpi_stats_get(int stat);

/* Nanoseconds of a monotonic clock, for the codec timer. */
uint64_t apsmpi_now_ns(void);

/* Non-zero elements of x[0..n), counted only when statistics are on. */
uint64_t apsmpi_count_nonzero(const float *x, size_t n);

/* Sums the counters over comm and prints one line on its rank 0. Collective. */
void apsmpi_stats_report(MPI_Comm comm, const char *config_line);

#endif
