/* config_values.h: the shape of a row of the configuration table (config_table.h) and the kinds of value an APSMPI_* variable holds (a switch, one of a few words, a count, a format, a path, ...): how each is parsed, described and compared (config_values.c). */
#ifndef APSMPI_CONFIG_VALUES_H
#define APSMPI_CONFIG_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* Whether a variable must be equal on all ranks (a row's scope). */
#define APSMPI_SCOPE_RANK 0 /* it may differ between ranks */
#define APSMPI_SCOPE_JOB 1  /* equal on all ranks: it changes a collective behaviour (the statistics at MPI_Finalize) */
#define APSMPI_SCOPE_WIRE 2 /* equal on all ranks when calls are compressed: it changes what goes on the wire */

typedef struct apsmpi_config_kind apsmpi_config_kind;

/* One variable. */
typedef struct apsmpi_config_row {
    const char *name; /* APSMPI_... */
    struct {
        size_t offset, size;
    } field;                        /* the field of apsmpi_config it sets: FIELD(member) in config_table.h */
    const apsmpi_config_kind *kind; /* how its value is parsed, described and compared (below) */
    uint64_t lo, hi;                /* the bounds of a number */
    const char *default_value;      /* the value when the variable is unset; NULL: none */
    int scope;                      /* APSMPI_SCOPE_* */
    const char *valid;              /* the valid values, as the error line names them */
    const char *doc;                /* its meaning, README's configuration table */
} apsmpi_config_row;

/* A kind of value: the size of the field it fills, and its parser (0, or -1 with one line in
 * err naming the variable, the value and the valid ones), describer and digest. */
struct apsmpi_config_kind {
    size_t size;
    int (*parse)(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen);
    void (*describe)(const apsmpi_config_row *row, const void *field, char *buf, size_t len);
    uint64_t (*digest)(const void *field);
    const struct apsmpi_config_choice *choices; /* a word kind's words, NULL-ended; NULL for the others */
};

/* A word a variable of a word kind accepts, and the value it stands for. */
struct apsmpi_config_choice {
    const char *word;
    int value;
};

/* Each kind names the type of the field it fills. */
extern const apsmpi_config_kind apsmpi_config_switch;    /* int: 1, 0 and synonyms */
extern const apsmpi_config_kind apsmpi_config_scaling;   /* int: enum apsmpi_scaling */
extern const apsmpi_config_kind apsmpi_config_rounding;  /* int: 1 for stochastic */
extern const apsmpi_config_kind apsmpi_config_log_level; /* int: enum apsmpi_log_level */
extern const apsmpi_config_kind apsmpi_config_algorithm; /* int: enum apsmpi_algorithm */
extern const apsmpi_config_kind apsmpi_config_intranode; /* int: enum apsmpi_intranode */
extern const apsmpi_config_kind apsmpi_config_codec_isa; /* int: enum apsmpi_codec_isa, one this CPU has */
extern const apsmpi_config_kind apsmpi_config_count;     /* size_t: lo..hi, suffix k, m or g */
extern const apsmpi_config_kind apsmpi_config_u64;       /* uint64_t: lo..hi */
extern const apsmpi_config_kind apsmpi_config_threads;   /* int: 0 for auto, else lo..hi */
extern const apsmpi_config_kind apsmpi_config_format;    /* apsmpi_format; fp32: width 32, no compression */
extern const apsmpi_config_kind apsmpi_config_fraction;  /* double: lo/1e6..hi/1e6 */
extern const apsmpi_config_kind apsmpi_config_ladder;    /* apsmpi_ladder: a list of formats (width_controller.h) */
extern const apsmpi_config_kind apsmpi_config_path;      /* const char *: as it is (checked where it is used) */
extern const apsmpi_config_kind apsmpi_config_fault;     /* const char *: SITE:RANK:CALL (core/fault.h) */
extern const apsmpi_config_kind apsmpi_config_node_map;  /* const char *: "0,0,1,1" (core/node_map.h) */

/* What a switch accepts, said in its error. */
#define APSMPI_ON_OFF_VALID "1, 0 (also on/off, yes/no, true/false)"

#endif
