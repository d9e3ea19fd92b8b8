/* config.h: apsmpi's settings, read once from the APSMPI_* environment variables (the table: config_table.h). */
#ifndef APSMPI_CONFIG_H
#define APSMPI_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "core/config_values.h" /* apsmpi_config_row */
#include "core/format.h"
#include "core/width_controller.h" /* apsmpi_ladder */

enum apsmpi_scaling {
    APSMPI_SCALING_BLOCK = 0, /* APS with one agreed exponent per block of the buffer */
    APSMPI_SCALING_APS = 1,   /* APS with one agreed exponent per call (per layer) */
    APSMPI_SCALING_NONE = 2   /* no scaling: values are cast as they are */
};

enum apsmpi_algorithm {
    APSMPI_ALGORITHM_RSAG = 0, /* encode once, sum in fp32 where owned, encoded result gathered */
    APSMPI_ALGORITHM_RING = 1  /* the ring that sums in the wire format at every hop (for comparison) */
};

enum apsmpi_intranode {
    APSMPI_INTRANODE_PASS = 0,    /* a communicator within one node goes to MPI untouched */
    APSMPI_INTRANODE_COMPRESS = 1 /* compressed even there (tests, single-machine demos) */
};

/* One field per row of the table (config_table.h), plus compress. */
typedef struct apsmpi_config {
    int enabled;                   /* APSMPI_ENABLE: 0 passes every call through */
    int compress;                  /* enabled and the format is not fp32 */
    apsmpi_format format;          /* APSMPI_FORMAT; meaningful when compress (auto: format.ladder) */
    double error_budget;           /* APSMPI_ERROR_BUDGET: auto's largest share of non-zero values flushed */
    apsmpi_ladder ladder;          /* APSMPI_AUTO_LADDER: auto's formats, narrowest first (FP32 above them) */
    int scaling;                   /* APSMPI_SCALING */
    size_t block_size;             /* APSMPI_BLOCK_SIZE, elements */
    int stochastic;                /* APSMPI_ROUNDING=stochastic */
    uint64_t seed;                 /* APSMPI_SEED */
    size_t min_bytes;              /* APSMPI_MIN_BYTES: smaller calls pass through */
    size_t max_bytes;              /* APSMPI_MAX_BYTES: larger calls pass through; 0: no limit */
    const char *comm_include;      /* APSMPI_COMM_INCLUDE: glob patterns of communicator names, NULL: all */
    const char *comm_exclude;      /* APSMPI_COMM_EXCLUDE: glob patterns of communicator names, NULL: none */
    size_t rsag_window;            /* APSMPI_RSAG_WINDOW: rsag's messages in flight per rank; 0: all at once */
    size_t chunk_size;             /* APSMPI_CHUNK_SIZE, elements per piece of a pipelined call; 0: never pipelined */
    int error_feedback;            /* APSMPI_ERROR_FEEDBACK */
    size_t feedback_max_bytes;     /* APSMPI_FEEDBACK_MAX_BYTES: bound of a rank's residuals */
    int stats;                     /* APSMPI_STATS */
    int progress_thread;           /* APSMPI_PROGRESS_THREAD */
    int log_level;                 /* APSMPI_LOG_LEVEL */
    int codec_isa;                 /* APSMPI_CODEC_ISA: enum apsmpi_codec_isa */
    int codec_threads;             /* APSMPI_CODEC_THREADS: threads per rank for the host codec; 0: auto */
    const char *device_plugin;     /* APSMPI_DEVICE_PLUGIN, NULL when unset (points into the environment) */
    const char *test_fail;         /* APSMPI_TEST_FAIL, NULL when unset (points into the environment) */
    int algorithm;                 /* APSMPI_ALGORITHM */
    int intranode;                 /* APSMPI_INTRANODE */
    const char *test_node_of_rank; /* APSMPI_TEST_NODE_OF_RANK: node of each world rank; NULL: real nodes */
} apsmpi_config;

/* The rows of the table (config_table.h), in its order, and how many there are. */
extern const apsmpi_config_row *const apsmpi_config_rows;
extern const size_t apsmpi_config_nrows;

typedef const char *(*apsmpi_getenv_fn)(const char *name);

/* Fills *cfg from the variables that getenv_fn returns (NULL: unset, so the default).
 * Returns 0, or -1 with one line in err naming the variable, the value and the valid ones. */
int apsmpi_config_load(apsmpi_config *cfg, apsmpi_getenv_fn getenv_fn, char *err, size_t errlen);

/* Every setting that must be equal on all ranks (the table's JOB rows, and its WIRE rows
 * when calls are compressed; otherwise the ranks would disagree on the path a call takes, or
 * on the collectives at MPI_Finalize) as one digest per row of the table, and a last one of
 * `compress`: digests[0..apsmpi_config_nrows], 0 for a row that need not be equal. The ranks
 * compare them in one reduction (the largest and the smallest of each). */
#define APSMPI_CONFIG_MAX_ROWS 31
void apsmpi_config_digests(const apsmpi_config *cfg, uint64_t digests[APSMPI_CONFIG_MAX_ROWS + 1]);

/* From the largest and the smallest value of each digest over the ranks, the rows whose
 * setting differs between ranks, in table order, into rows[0..count); returns count, 0 when
 * all are equal. Where one rank compresses and another does not, only the rows that decide
 * it are named (APSMPI_ENABLE, else APSMPI_FORMAT), not the wire rows the others compare. */
size_t apsmpi_config_differing(const uint64_t *most, const uint64_t *least, size_t rows[APSMPI_CONFIG_MAX_ROWS]);

/* The value of row `row` as the info line writes it ("e4m3", "4096", "(unset)"). */
void apsmpi_config_describe_row(const apsmpi_config *cfg, size_t row, char *buf, size_t len);

/* One line "enable=1 format=e4m3 ...", every row of the table, for logs and statistics. */
void apsmpi_config_describe(const apsmpi_config *cfg, char *buf, size_t len);

/* 1 if name matches one of the comma-separated glob patterns of list (fnmatch). */
int apsmpi_config_names_match(const char *list, const char *name);

#endif
