/* config.c: parses, validates, digests and describes the APSMPI_* variables, row by row of config_table.h. */
#include "core/config.h"
#include "core/fault.h"

#include <ctype.h>
#include <fnmatch.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/codec.h"
#include "core/config_table.h"
#include "core/node_map.h"

/* A named choice of a variable that takes one of a few words. */
struct choice {
    const char *word;
    int value;
};

static const struct choice on_off[] = {{"1", 1},  {"0", 0},    {"on", 1},    {"off", 0}, {"yes", 1},
                                       {"no", 0}, {"true", 1}, {"false", 0}, {NULL, 0}};
static const struct choice scalings[] = {
    {"block", APSMPI_SCALING_BLOCK}, {"aps", APSMPI_SCALING_APS}, {"none", APSMPI_SCALING_NONE}, {NULL, 0}};
static const struct choice roundings[] = {{"nearest", 0}, {"stochastic", 1}, {NULL, 0}};
static const struct choice algorithms[] = {{"rsag", APSMPI_ALGORITHM_RSAG}, {"ring", APSMPI_ALGORITHM_RING}, {NULL, 0}};
static const struct choice intranodes[] = {
    {"pass", APSMPI_INTRANODE_PASS}, {"compress", APSMPI_INTRANODE_COMPRESS}, {NULL, 0}};
static const struct choice levels[] = {{"error", 0}, {"warn", 1}, {"info", 2}, {"debug", 3}, {NULL, 0}};

static int bad_value(char *err, size_t errlen, const char *var, const char *value, const char *valid)
{
    snprintf(err, errlen, "%s='%s' is not valid; valid values: %s", var, value, valid);
    return -1;
}

static int parse_choice(const char *var, const char *value, const struct choice *choices, const char *valid, int *out,
                        char *err, size_t errlen)
{
    for (const struct choice *c = choices; c->word; c++) {
        if (strcasecmp(value, c->word) == 0) {
            *out = c->value;
            return 0;
        }
    }
    return bad_value(err, errlen, var, value, valid);
}

static void describe_choice(char *buf, size_t len, const struct choice *choices, int value)
{
    const struct choice *c = choices;
    while (c->word && c->value != value)
        c++;
    snprintf(buf, len, "%s", c->word ? c->word : "?");
}

/* parse_<parser>, describe_<parser> and digest_<parser> of a row whose value is one of a few words. */
#define CHOICE_PARSER(parser, choices)                                                                             \
    static int parse_##parser(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid,     \
                              int *out, char *err, size_t errlen)                                                  \
    {                                                                                                              \
        return parse_choice(var, value, choices, valid, out, err, errlen);                                         \
    }                                                                                                              \
    static void describe_##parser(char *buf, size_t len, const int *v) { describe_choice(buf, len, choices, *v); } \
    static uint64_t digest_##parser(const int *v) { return (uint64_t)*v; }
CHOICE_PARSER(on_off, on_off)
CHOICE_PARSER(scaling, scalings)
CHOICE_PARSER(rounding, roundings)
CHOICE_PARSER(level, levels)
CHOICE_PARSER(algorithm, algorithms)
CHOICE_PARSER(intranode, intranodes)

/* The codec's instruction-set level: one of the names, and one that this CPU has (the
 * error line lists those). */
static const struct choice codec_isas[] = {{"auto", APSMPI_ISA_AUTO},
                                           {"scalar", APSMPI_ISA_SCALAR},
                                           {"avx2", APSMPI_ISA_AVX2},
                                           {"avx512", APSMPI_ISA_AVX512},
                                           {NULL, 0}};

static int parse_codec_isa(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid, int *out,
                           char *err, size_t errlen)
{
    char here[64] = "";
    for (const struct choice *c = codec_isas; c->word; c++)
        if (apsmpi_codec_isa_supported(c->value))
            snprintf(here + strlen(here), sizeof here - strlen(here), "%s%s", here[0] ? ", " : "", c->word);
    if (parse_choice(var, value, codec_isas, here, out, err, errlen))
        return -1;
    return apsmpi_codec_isa_supported(*out) ? 0 : bad_value(err, errlen, var, value, here);
}

static void describe_codec_isa(char *buf, size_t len, const int *v) { describe_choice(buf, len, codec_isas, *v); }

static uint64_t digest_codec_isa(const int *v) { return (uint64_t)*v; }

/* An unsigned integer within [lo, hi], with an optional binary suffix k, m or g when suffixes. */
static int parse_number(const char *var, const char *value, uint64_t lo, uint64_t hi, int suffixes, const char *valid,
                        uint64_t *out, char *err, size_t errlen)
{
    char *end;
    unsigned long long v;
    unsigned shift = 0;

    if (!isdigit((unsigned char)value[0]))
        return bad_value(err, errlen, var, value, valid);
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
            return bad_value(err, errlen, var, value, valid);
        }
        end++;
    }
    if (errno || *end || (shift && v > (hi >> shift)) || (v << shift) < lo || (v << shift) > hi)
        return bad_value(err, errlen, var, value, valid);
    *out = (uint64_t)v << shift;
    return 0;
}

/* A count of elements or bytes, suffixes allowed. */
static int parse_size(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid, size_t *out,
                      char *err, size_t errlen)
{
    uint64_t v;
    if (parse_number(var, value, lo, hi, 1, valid, &v, err, errlen))
        return -1;
    *out = (size_t)v;
    return 0;
}
static void describe_size(char *buf, size_t len, const size_t *v) { snprintf(buf, len, "%zu", *v); }
static uint64_t digest_size(const size_t *v) { return (uint64_t)*v; }

/* A plain unsigned 64-bit number. */
static int parse_u64(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid, uint64_t *out,
                     char *err, size_t errlen)
{
    return parse_number(var, value, lo, hi, 0, valid, out, err, errlen);
}
static void describe_u64(char *buf, size_t len, const uint64_t *v)
{
    snprintf(buf, len, "%llu", (unsigned long long)*v);
}
static uint64_t digest_u64(const uint64_t *v) { return *v; }

/* A format name, or fp32 (no compression: a format named "fp32" of width 32). */
static int parse_format(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid,
                        apsmpi_format *out, char *err, size_t errlen)
{
    if (strcasecmp(value, "fp32") == 0) {
        memset(out, 0, sizeof *out);
        snprintf(out->name, sizeof out->name, "fp32");
        out->width = 32;
        return 0;
    }
    if (apsmpi_format_parse(value, out) != 0)
        return bad_value(err, errlen, var, value, valid);
    return 0;
}
static void describe_format(char *buf, size_t len, const apsmpi_format *f) { snprintf(buf, len, "%s", f->name); }
static uint64_t digest_format(const apsmpi_format *f)
{
    return (uint64_t)f->ebits | (uint64_t)f->mbits << 8 | (uint64_t)f->kind << 16 | (uint64_t)f->width << 24;
}

/* A path, taken as it is (checked where it is used). */
static int parse_path(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid, const char **out,
                      char *err, size_t errlen)
{
    *out = value;
    return 0;
}
static void describe_path(char *buf, size_t len, const char *const *v)
{
    snprintf(buf, len, "%s", *v ? *v : "(unset)");
}
static uint64_t digest_path(const char *const *v)
{
    uint64_t h = 0;
    for (const char *p = *v ? *v : ""; *p; p++)
        h = h * 131 + (unsigned char)*p;
    return h;
}

/* A fault to inject in a test (core/fault.h), checked for its syntax here. */
static int parse_fault(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid,
                       const char **out, char *err, size_t errlen)
{
    int site;
    long rank, call;

    if (apsmpi_fault_parse(value, &site, &rank, &call) != 0)
        return bad_value(err, errlen, var, value, valid);
    *out = value;
    return 0;
}

/* The test node map, "0,0,1,1" (core/node_map.h), kept as it is. */
static int parse_node_map(const char *var, const char *value, uint64_t lo, uint64_t hi, const char *valid,
                          const char **out, char *err, size_t errlen)
{
    if (apsmpi_node_map_length(value) < 0)
        return bad_value(err, errlen, var, value, valid);
    *out = value;
    return 0;
}
#define describe_fault describe_path
#define digest_fault digest_path

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

static void describe_node_map(char *buf, size_t len, const char *const *v) { describe_path(buf, len, v); }
static uint64_t digest_node_map(const char *const *v) { return digest_path(v); }

int apsmpi_config_load(apsmpi_config *cfg, apsmpi_getenv_fn getenv_fn, char *err, size_t errlen)
{
    const char *value;

    memset(cfg, 0, sizeof *cfg);
#define LOAD_ROW(name, field, parser, lo, hi, dflt, scope, valid, doc)                               \
    value = getenv_fn(#name);                                                                        \
    if (value == NULL)                                                                               \
        value = dflt;                                                                                \
    if (value != NULL && parse_##parser(#name, value, lo, hi, valid, &cfg->field, err, errlen) != 0) \
        return -1;
    APSMPI_CONFIG_TABLE(LOAD_ROW)
#undef LOAD_ROW
    cfg->compress = cfg->enabled && strcmp(cfg->format.name, "fp32") != 0;
    return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

void apsmpi_config_digests(const apsmpi_config *cfg, uint64_t digests[APSMPI_CONFIG_MAX_ROWS + 1])
{
    size_t row = 0;

    /* a compared row's digest is never 0, the digest of a row not compared */
#define DIGEST_ROW(name, field, parser, lo, hi, dflt, scope, valid, doc)                          \
    digests[row] = (scope) == APSMPI_SCOPE_JOB || ((scope) == APSMPI_SCOPE_WIRE && cfg->compress) \
                       ? mix(0, digest_##parser(&cfg->field)) | 1                                 \
                       : 0;                                                                       \
    row++;
    APSMPI_CONFIG_TABLE(DIGEST_ROW)
#undef DIGEST_ROW
    digests[row] = (uint64_t)cfg->compress;
}

static const char *const row_names[] = {
#define NAME_ROW(name, field, parser, lo, hi, dflt, scope, valid, doc) #name,
    APSMPI_CONFIG_TABLE(NAME_ROW)
#undef NAME_ROW
};
#define NROWS (sizeof row_names / sizeof row_names[0])
_Static_assert(NROWS <= APSMPI_CONFIG_MAX_ROWS, "raise APSMPI_CONFIG_MAX_ROWS");

/* The index of the row of variable `name`. */
static size_t row_of(const char *name)
{
    size_t row = 0;
    while (row < NROWS && strcmp(row_names[row], name) != 0)
        row++;
    return row;
}

size_t apsmpi_config_differing(const uint64_t *most, const uint64_t *least, size_t rows[APSMPI_CONFIG_MAX_ROWS])
{
    static const int scopes[] = {
#define SCOPE_ROW(name, field, parser, lo, hi, dflt, scope, valid, doc) scope,
        APSMPI_CONFIG_TABLE(SCOPE_ROW)
#undef SCOPE_ROW
    };
    size_t count = 0, enable = row_of("APSMPI_ENABLE"), format = row_of("APSMPI_FORMAT");
    int compress_differs = most[NROWS] != least[NROWS];

    for (size_t row = 0; row < NROWS; row++) {
        if (most[row] == least[row])
            continue;
        /* the wire rows of ranks that compress against the 0 of those that do not: only the cause */
        if (compress_differs && scopes[row] == APSMPI_SCOPE_WIRE && !(row == format && most[enable] == least[enable]))
            continue;
        rows[count++] = row;
    }
    return count;
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

void apsmpi_config_describe_row(const apsmpi_config *cfg, size_t row, char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
#define DESCRIBE_ONE_ROW(name, field, parser, lo, hi, dflt, scope, valid, doc) \
    if (at++ == row)                                                           \
        describe_##parser(buf, len, &cfg->field);
    APSMPI_CONFIG_TABLE(DESCRIBE_ONE_ROW)
#undef DESCRIBE_ONE_ROW
}

void apsmpi_config_describe(const apsmpi_config *cfg, char *buf, size_t len)
{
    char value[512];
    size_t used = 0;

    buf[0] = '\0';
#define DESCRIBE_ROW(name, field, parser, lo, hi, dflt, scope, valid, doc) \
    describe_##parser(value, sizeof value, &cfg->field);                   \
    append_setting(buf, len, &used, #name + sizeof "APSMPI_" - 1, value);
    APSMPI_CONFIG_TABLE(DESCRIBE_ROW)
#undef DESCRIBE_ROW
}

const apsmpi_config_row apsmpi_config_rows[] = {
#define ROW(name, field, parser, lo, hi, dflt, scope, valid, doc) {#name, dflt, doc, scope},
    APSMPI_CONFIG_TABLE(ROW)
#undef ROW
};
const size_t apsmpi_config_nrows = sizeof apsmpi_config_rows / sizeof apsmpi_config_rows[0];
