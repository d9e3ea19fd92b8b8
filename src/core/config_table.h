/* config_table.h: the table of every APSMPI_* variable (config_table.c): the shape of a row and of the kinds of value a row holds. */
#ifndef APSMPI_CONFIG_TABLE_H
#define APSMPI_CONFIG_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* Loading (config.c), the cross-rank comparison, the line of the info log and of the
 * statistics, and README's configuration table (tests/unit/print_config_table.c, checked by
 * tests/readme_config.sh) all come from the one table apsmpi_config_rows (config_table.c). A
 * new variable is one row there, one field in apsmpi_config (config.h), and its line in
 * README. */

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
    } field;                        /* the field of apsmpi_config it sets: FIELD(member) in config_table.c */
    const apsmpi_config_kind *kind; /* how its value is parsed, described and compared (config_values.h) */
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

/* The table, in the order of the info line and of README. */
extern const apsmpi_config_row apsmpi_config_rows[];
extern const size_t apsmpi_config_nrows;

#endif
