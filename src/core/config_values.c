/* config_values.c: the kinds of value of the APSMPI_* variables: each one's parser, describer and digest. */
#include "core/config_values.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/codec.h"
#include "core/config.h"
#include "core/fault.h"
#include "core/node_map.h"

static int bad_value(char *err, size_t errlen, const apsmpi_config_row *row, const char *value, const char *valid)
{
    snprintf(err, errlen, "%s='%s' is not valid; valid values: %s", row->name, value, valid);
    return -1;
}

/* ---- one of a few words ---- */

static const struct apsmpi_config_choice on_off_words[] = {{"1", 1},  {"0", 0},    {"on", 1},    {"off", 0}, {"yes", 1},
                                                           {"no", 0}, {"true", 1}, {"false", 0}, {NULL, 0}};
static const struct apsmpi_config_choice scaling_words[] = {
    {"block", APSMPI_SCALING_BLOCK}, {"aps", APSMPI_SCALING_APS}, {"none", APSMPI_SCALING_NONE}, {NULL, 0}};
static const struct apsmpi_config_choice rounding_words[] = {{"nearest", 0}, {"stochastic", 1}, {NULL, 0}};
static const struct apsmpi_config_choice log_level_words[] = {
    {"error", 0}, {"warn", 1}, {"info", 2}, {"debug", 3}, {NULL, 0}};
static const struct apsmpi_config_choice algorithm_words[] = {
    {"rsag", APSMPI_ALGORITHM_RSAG}, {"ring", APSMPI_ALGORITHM_RING}, {NULL, 0}};
static const struct apsmpi_config_choice intranode_words[] = {
    {"pass", APSMPI_INTRANODE_PASS}, {"compress", APSMPI_INTRANODE_COMPRESS}, {NULL, 0}};
static const struct apsmpi_config_choice codec_isa_words[] = {{"auto", APSMPI_ISA_AUTO},
                                                              {"scalar", APSMPI_ISA_SCALAR},
                                                              {"avx2", APSMPI_ISA_AVX2},
                                                              {"avx512", APSMPI_ISA_AVX512},
                                                              {NULL, 0}};

/* The value of a word among words (any case), into *out; 0, or -1 if it is none of them. */
static int find_word(const struct apsmpi_config_choice *words, const char *value, int *out)
{
    for (const struct apsmpi_config_choice *c = words; c->word; c++) {
        if (strcasecmp(value, c->word) == 0) {
            *out = c->value;
            return 0;
        }
    }
    return -1;
}

static int parse_word(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    return find_word(row->kind->choices, value, field) == 0 ? 0 : bad_value(err, errlen, row, value, row->valid);
}

static void describe_word(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    const struct apsmpi_config_choice *c = row->kind->choices;
    while (c->word && c->value != *(const int *)field)
        c++;
    snprintf(buf, len, "%s", c->word ? c->word : "?");
}

static uint64_t digest_int(const void *field) { return (uint64_t) * (const int *)field; }

const apsmpi_config_kind apsmpi_config_switch = {sizeof(int), parse_word, describe_word, digest_int, on_off_words};
const apsmpi_config_kind apsmpi_config_scaling = {sizeof(int), parse_word, describe_word, digest_int, scaling_words};
const apsmpi_config_kind apsmpi_config_rounding = {sizeof(int), parse_word, describe_word, digest_int, rounding_words};
const apsmpi_config_kind apsmpi_config_log_level = {sizeof(int), parse_word, describe_word, digest_int,
                                                    log_level_words};
const apsmpi_config_kind apsmpi_config_algorithm = {sizeof(int), parse_word, describe_word, digest_int,
                                                    algorithm_words};
const apsmpi_config_kind apsmpi_config_intranode = {sizeof(int), parse_word, describe_word, digest_int,
                                                    intranode_words};

/* The codec's instruction-set level: one of the words, and one that this CPU has (the error
 * line lists those). */
static int parse_codec_isa(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    char here[64] = "";
    int *isa = field;

    for (const struct apsmpi_config_choice *c = codec_isa_words; c->word; c++)
        if (apsmpi_codec_isa_supported(c->value))
            snprintf(here + strlen(here), sizeof here - strlen(here), "%s%s", here[0] ? ", " : "", c->word);
    if (find_word(codec_isa_words, value, isa) != 0 || !apsmpi_codec_isa_supported(*isa))
        return bad_value(err, errlen, row, value, here);
    return 0;
}

const apsmpi_config_kind apsmpi_config_codec_isa = {sizeof(int), parse_codec_isa, describe_word, digest_int,
                                                    codec_isa_words};

/* ---- numbers ---- */

/* An unsigned integer within [row->lo, row->hi], with an optional binary suffix k, m or g when
 * suffixes. */
static int parse_number(const apsmpi_config_row *row, const char *value, int suffixes, uint64_t *out, char *err,
                        size_t errlen)
{
    char *end;
    unsigned long long v;
    unsigned shift = 0;

    if (!isdigit((unsigned char)value[0]))
        return bad_value(err, errlen, row, value, row->valid);
    errno = 0;
    v = strtoull(value, &end, 10);
    if (suffixes && *end) {
        switch (tolower((unsigned char)*end)) {
        case 'k':
            shift = 10;
            break;
        case 'm':
            shift = 20;
            break;
        case 'g':
            shift = 30;
            break;
        default:
            return bad_value(err, errlen, row, value, row->valid);
        }
        end++;
    }
    if (errno || *end || (shift && v > (row->hi >> shift)) || (v << shift) < row->lo || (v << shift) > row->hi)
        return bad_value(err, errlen, row, value, row->valid);
    *out = (uint64_t)v << shift;
    return 0;
}

/* A count of elements or bytes, suffixes allowed. */
static int parse_count(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    uint64_t v;
    if (parse_number(row, value, 1, &v, err, errlen))
        return -1;
    *(size_t *)field = (size_t)v;
    return 0;
}

static void describe_count(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%zu", *(const size_t *)field);
}

static uint64_t digest_count(const void *field) { return (uint64_t) * (const size_t *)field; }

const apsmpi_config_kind apsmpi_config_count = {sizeof(size_t), parse_count, describe_count, digest_count, NULL};

/* A plain unsigned 64-bit number. */
static int parse_u64(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    return parse_number(row, value, 0, field, err, errlen);
}

static void describe_u64(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
}

static uint64_t digest_u64(const void *field) { return *(const uint64_t *)field; }

const apsmpi_config_kind apsmpi_config_u64 = {sizeof(uint64_t), parse_u64, describe_u64, digest_u64, NULL};

/* A number of threads: `auto` (0) or lo..hi. */
static int parse_threads(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    uint64_t v;
    if (strcasecmp(value, "auto") == 0) {
        *(int *)field = 0;
        return 0;
    }
    if (parse_number(row, value, 0, &v, err, errlen))
        return -1;
    *(int *)field = (int)v;
    return 0;
}

static void describe_threads(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    int v = *(const int *)field;
    (void)row;
    if (v == 0)
        snprintf(buf, len, "auto");
    else
        snprintf(buf, len, "%d", v);
}

const apsmpi_config_kind apsmpi_config_threads = {sizeof(int), parse_threads, describe_threads, digest_int, NULL};

/* ---- a format ---- */

/* A format name, fp32 (no compression: a format named "fp32" of width 32), or auto (the ladder
 * of core/width_controller.h: described by its widest MX rung, mxfp8, with ladder 1). */
static int parse_format(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    apsmpi_format *f = field;

    if (strcasecmp(value, "auto") == 0) {
        if (apsmpi_format_parse("mxfp8", f) != 0)
            return bad_value(err, errlen, row, value, row->valid);
        snprintf(f->name, sizeof f->name, "auto");
        f->ladder = 1;
        return 0;
    }

    if (strcasecmp(value, "fp32") == 0) {
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "fp32");
        f->width = 32;
        return 0;
    }
    if (apsmpi_format_parse(value, f) != 0)
        return bad_value(err, errlen, row, value, row->valid);
    return 0;
}

static void describe_format(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%s", ((const apsmpi_format *)field)->name);
}

static uint64_t digest_format(const void *field)
{
    const apsmpi_format *f = field;
    return (uint64_t)f->ebits | (uint64_t)f->mbits << 8 | (uint64_t)f->kind << 16 | (uint64_t)f->width << 24 |
           (uint64_t)f->mx << 32 | (uint64_t)f->ladder << 33;
}

const apsmpi_config_kind apsmpi_config_format = {sizeof(apsmpi_format), parse_format, describe_format, digest_format,
                                                 NULL};

/* ---- auto's ladder ---- */

/* A list of formats (core/width_controller.h's apsmpi_ladder_parse), kept as its ladder. */
static int parse_ladder(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    char why[160], valid[320];

    if (apsmpi_ladder_parse(value, field, why, sizeof why) == 0)
        return 0;
    snprintf(valid, sizeof valid, "%s (here: %s)", row->valid, why);
    return bad_value(err, errlen, row, value, valid);
}

static void describe_ladder(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    const apsmpi_ladder *l = field;
    size_t used = 0;
    (void)row;
    buf[0] = '\0';
    for (int r = 0; r + 1 < l->rungs && used < len; r++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", r ? "," : "", l->format[r].name);
}

static uint64_t digest_ladder(const void *field)
{
    const apsmpi_ladder *l = field;
    uint64_t h = (uint64_t)l->rungs;
    for (int r = 0; r + 1 < l->rungs; r++)
        h = h * 1000003u + digest_format(&l->format[r]);
    return h;
}

const apsmpi_config_kind apsmpi_config_ladder = {sizeof(apsmpi_ladder), parse_ladder, describe_ladder, digest_ladder,
                                                 NULL};

/* ---- a fraction ---- */

/* A number in [lo/1e6, hi/1e6] (the row's bounds in millionths), as strtod reads it. */
static int parse_fraction(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(value, &end);
    if (errno != 0 || end == value || *end != '\0' || !(v >= (double)row->lo / 1e6 && v <= (double)row->hi / 1e6))
        return bad_value(err, errlen, row, value, row->valid);
    *(double *)field = v;
    return 0;
}

static void describe_fraction(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%g", *(const double *)field);
}

static uint64_t digest_fraction(const void *field)
{
    uint64_t bits;
    memcpy(&bits, field, sizeof bits);
    return bits;
}

const apsmpi_config_kind apsmpi_config_fraction = {sizeof(double), parse_fraction, describe_fraction, digest_fraction,
                                                   NULL};

/* ---- text kept as it is ---- */

/* A path or a list of patterns, taken as it is (checked where it is used). */
static int parse_path(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    *(const char **)field = value;
    return 0;
}

static void describe_path(const apsmpi_config_row *row, const void *field, char *buf, size_t len)
{
    const char *v = *(const char *const *)field;
    snprintf(buf, len, "%s", v ? v : "(unset)");
}

static uint64_t digest_path(const void *field)
{
    const char *v = *(const char *const *)field;
    uint64_t h = 0;
    for (const char *p = v ? v : ""; *p; p++)
        h = h * 131 + (unsigned char)*p;
    return h;
}

const apsmpi_config_kind apsmpi_config_path = {sizeof(const char *), parse_path, describe_path, digest_path, NULL};

/* A fault to inject in a test (core/fault.h), checked for its syntax here. */
static int parse_fault(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    int site;
    long rank, call;

    if (apsmpi_fault_parse(value, &site, &rank, &call) != 0)
        return bad_value(err, errlen, row, value, row->valid);
    *(const char **)field = value;
    return 0;
}

const apsmpi_config_kind apsmpi_config_fault = {sizeof(const char *), parse_fault, describe_path, digest_path, NULL};

/* The test node map, "0,0,1,1" (core/node_map.h), kept as it is. */
static int parse_node_map(const apsmpi_config_row *row, const char *value, void *field, char *err, size_t errlen)
{
    if (apsmpi_node_map_length(value) < 0)
        return bad_value(err, errlen, row, value, row->valid);
    *(const char **)field = value;
    return 0;
}

const apsmpi_config_kind apsmpi_config_node_map = {sizeof(const char *), parse_node_map, describe_path, digest_path,
                                                   NULL};
