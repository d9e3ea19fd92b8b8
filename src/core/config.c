/* config.c: loads, compares across ranks and describes the APSMPI_* variables, row by row of the table (config_table.h). */
#include "core/config.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "core/config_table.h" /* config_table_rows: included here alone */

const apsmpi_config_row *const apsmpi_config_rows = config_table_rows;
const size_t apsmpi_config_nrows = sizeof config_table_rows / sizeof config_table_rows[0];

/* The field of cfg that row sets. */
static void *field_of(apsmpi_config *cfg, const apsmpi_config_row *row) { return (char *)cfg + row->field.offset; }

static const void *const_field_of(const apsmpi_config *cfg, const apsmpi_config_row *row)
{
    return (const char *)cfg + row->field.offset;
}

/* An MX format scales each block of 32 elements by itself: a scaling set explicitly to
 * anything else stops the job rather than being ignored (APSMPI_BLOCK_SIZE, often set for a
 * whole study, only does not apply). */
static int check_mx_scaling(const apsmpi_config *cfg, apsmpi_getenv_fn getenv_fn, char *err, size_t errlen)
{
    const char *scaling = getenv_fn("APSMPI_SCALING");

    if (cfg->format.mx && scaling != NULL && cfg->scaling != APSMPI_SCALING_BLOCK) {
        snprintf(err, errlen,
                 "APSMPI_SCALING='%s' does not apply to the MX format %s, whose blocks of 32 elements carry their own "
                 "scales; valid values with it: block (the default)",
                 scaling, cfg->format.name);
        return -1;
    }
    return 0;
}

int apsmpi_config_load(apsmpi_config *cfg, apsmpi_getenv_fn getenv_fn, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t r = 0; r < apsmpi_config_nrows; r++) {
        const apsmpi_config_row *row = &apsmpi_config_rows[r];
        const char *value = getenv_fn(row->name);
        if (value == NULL)
            value = row->default_value;
        if (value != NULL && row->kind->parse(row, value, field_of(cfg, row), err, errlen) != 0)
            return -1;
    }
    cfg->compress = cfg->enabled && strcmp(cfg->format.name, "fp32") != 0;
    if (cfg->format.ladder) {
        /* auto is described by its ladder's widest format: the codec, plan and memory of a
         * call before its rung is agreed */
        cfg->format = cfg->ladder.format[apsmpi_ladder_first(&cfg->ladder)];
        snprintf(cfg->format.name, sizeof cfg->format.name, "auto");
        cfg->format.ladder = 1;
    }
    if (cfg->format.ladder && cfg->scaling == APSMPI_SCALING_NONE) {
        /* the measure predicts every rung from one histogram only where each rung's scale puts
         * the same top at its largest binade */
        snprintf(err, errlen, "APSMPI_FORMAT=auto does not go with APSMPI_SCALING=none; valid with it: block, aps");
        return -1;
    }
    if (cfg->format.ladder && cfg->algorithm != APSMPI_ALGORITHM_RSAG) {
        /* the ring sums in the wire format at every hop, with one sum op made for one format */
        snprintf(err, errlen, "APSMPI_FORMAT=auto goes with APSMPI_ALGORITHM=rsag (the default) only");
        return -1;
    }
    return check_mx_scaling(cfg, getenv_fn, err, errlen);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* 1 if the setting of row must be equal on all ranks, given whether this rank compresses. */
static int compared(const apsmpi_config_row *row, int compress)
{
    return row->scope == APSMPI_SCOPE_JOB || (row->scope == APSMPI_SCOPE_WIRE && compress);
}

void apsmpi_config_digests(const apsmpi_config *cfg, uint64_t digests[APSMPI_CONFIG_MAX_ROWS + 1])
{
    size_t r;

    /* a compared row's digest is never 0, the digest of a row not compared */
    for (r = 0; r < apsmpi_config_nrows; r++) {
        const apsmpi_config_row *row = &apsmpi_config_rows[r];
        digests[r] = compared(row, cfg->compress) ? mix(0, row->kind->digest(const_field_of(cfg, row))) | 1 : 0;
    }
    digests[r] = (uint64_t)cfg->compress;
}

size_t apsmpi_config_differing(const uint64_t *most, const uint64_t *least, size_t rows[APSMPI_CONFIG_MAX_ROWS])
{
    size_t count = 0, enable = 0, nrows = apsmpi_config_nrows;
    int compress_differs = most[nrows] != least[nrows];

    while (apsmpi_config_rows[enable].field.offset != offsetof(apsmpi_config, enabled))
        enable++;
    for (size_t r = 0; r < nrows; r++) {
        const apsmpi_config_row *row = &apsmpi_config_rows[r];
        if (most[r] == least[r])
            continue;
        /* the wire rows of ranks that compress against the 0 of those that do not: only the
         * cause, APSMPI_ENABLE (a JOB row) or else the format */
        if (compress_differs && row->scope == APSMPI_SCOPE_WIRE &&
            !(row->field.offset == offsetof(apsmpi_config, format) && most[enable] == least[enable]))
            continue;
        rows[count++] = r;
    }
    return count;
}

void apsmpi_config_describe_row(const apsmpi_config *cfg, size_t row, char *buf, size_t len)
{
    const apsmpi_config_row *r = &apsmpi_config_rows[row];
    r->kind->describe(r, const_field_of(cfg, r), buf, len);
}

/* Appends " key=value" to buf (no space first), the key being the variable's name without
 * APSMPI_ in lower case. */
static void append_setting(char *buf, size_t len, size_t *used, const char *name, const char *value)
{
    char key[64];
    size_t i;

    for (i = 0; name[i] && i + 1 < sizeof key; i++)
        key[i] = (char)tolower((unsigned char)name[i]);
    key[i] = '\0';
    if (*used < len)
        *used += (size_t)snprintf(buf + *used, len - *used, "%s%s=%s", *used ? " " : "", key, value);
}

void apsmpi_config_describe(const apsmpi_config *cfg, char *buf, size_t len)
{
    char value[512];
    size_t used = 0;

    buf[0] = '\0';
    for (size_t r = 0; r < apsmpi_config_nrows; r++) {
        apsmpi_config_describe_row(cfg, r, value, sizeof value);
        append_setting(buf, len, &used, apsmpi_config_rows[r].name + sizeof "APSMPI_" - 1, value);
    }
}

int apsmpi_config_names_match(const char *list, const char *name)
{
    char pattern[256];

    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len < sizeof pattern) {
            memcpy(pattern, p, len);
            pattern[len] = '\0';
            if (fnmatch(pattern, name, 0) == 0)
                return 1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}
