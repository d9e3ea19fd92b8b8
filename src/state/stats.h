/* stats.h: counters of what apsmpi compressed, and why it did not compress the rest, reported over all ranks at MPI_Finalize (APSMPI_STATS). */
#ifndef APSMPI_STATS_H
#define APSMPI_STATS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum apsmpi_stat {
    APSMPI_STAT_CALLS_COMPRESSED,
    APSMPI_STAT_CALLS_PASSED,       /* not eligible: handed to MPI unchanged (the sum of the reasons below) */
    APSMPI_STAT_CALLS_NONFINITE,    /* eligible, but a rank held inf/NaN: sent in fp32 */
    APSMPI_STAT_CALLS_NEAR_FLT_MAX, /* eligible, but values so large that the sum may overflow: sent in fp32 */
    APSMPI_STAT_BYTES_IN,           /* fp32 bytes of the compressed calls */
    APSMPI_STAT_BYTES_WIRE,         /* bytes of their element codes */
    APSMPI_STAT_VALUES_NONZERO,     /* non-zero inputs of the compressed calls */
    APSMPI_STAT_VALUES_FLUSHED,     /* of those, encoded as zero */
    APSMPI_STAT_CODEC_NS,           /* time in exponents, encode, decode and the packed sum */
    APSMPI_STAT_CALLS_ONE_NODE,     /* eligible, on a communicator within one node: handed to MPI */
    APSMPI_STAT_BYTES_SCALES,       /* the scales sent in front of the compressed calls' result messages */
    APSMPI_STAT_BYTES_AGREEMENT,    /* the block exponents and flags of the compressed calls' agreements */
    APSMPI_STAT_CALLS_REQUESTS,     /* of the compressed calls, those that were requests (MPI_I*, persistent) */
    APSMPI_STAT_CALLS_TWOLEVEL,     /* of the compressed calls (a node path's parts each), those summed two-level */
    /* why a call was passed through (each also counts in APSMPI_STAT_CALLS_PASSED) */
    APSMPI_STAT_PASS_NOT_FLOAT_SUM, /* not MPI_FLOAT/MPI_REAL/MPI_REAL4 with MPI_SUM, or MPI_BOTTOM */
    APSMPI_STAT_PASS_DISABLED,      /* APSMPI_ENABLE=0, APSMPI_FORMAT=fp32, or no codec on some rank */
    APSMPI_STAT_PASS_SMALL,         /* empty, or fewer bytes than APSMPI_MIN_BYTES */
    APSMPI_STAT_PASS_LARGE,         /* more bytes than APSMPI_MAX_BYTES */
    APSMPI_STAT_PASS_COMM,          /* one rank, an intercommunicator, or MPI_COMM_NULL */
    APSMPI_STAT_PASS_SAME_BUFFER,   /* the send buffer is the receive buffer without MPI_IN_PLACE */
    APSMPI_STAT_PASS_NAME,          /* the communicator's name: APSMPI_COMM_INCLUDE/EXCLUDE */
    APSMPI_STAT_PASS_LARGE_COUNT,   /* a large-count call (MPI_*_c) whose counts do not fit an int */
    APSMPI_STAT_PASS_UNPREPARED,    /* a request on a communicator not prepared for requests (state/comm_prepare.h) */
    /* why an eligible call went in fp32 by MPI's own collective (besides one node and inf/NaN) */
    APSMPI_STAT_FP32_LACKING, /* a rank lacked memory, its GPU or its private communicator */
    APSMPI_STAT_FP32_BLOCKS,  /* more blocks than one agreement carries */
    APSMPI_STAT_FP32_ERROR,   /* an MPI error on the way (the call returned it) */
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
