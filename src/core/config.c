/* config.c: parses and validates the APSMPI_* environment variables, with their defaults. */
#include "core/config.h"
#include "core/node_map.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_FORMAT "e4m3"
#define DEFAULT_BLOCK_SIZE 4096
#define DEFAULT_MIN_BYTES 65536
#define DEFAULT_CHUNK_SIZE (1u << 18)
#define MAX_BLOCK_SIZE (1u << 30)

/* A named choice of a variable that takes one of a few words. */
struct choice {
    const char *word;
    int value;
};

static const struct choice on_off[] = {{"1", 1}, {"0", 0}, {"on", 1}, {"off", 0}, {"yes", 1},
                                       {"no", 0}, {"true", 1}, {"false", 0}, {NULL, 0}};
static const struct choice scalings[] = {{"block", APSMPI_SCALING_BLOCK}, {"aps", APSMPI_SCALING_CALL},
                                         {"none", APSMPI_SCALING_NONE}, {NULL, 0}};
static const struct choice roundings[] = {{"nearest", 0}, {"stochastic", 1}, {NULL, 0}};
static const struct choice algorithms[] = {{"rsag", APSMPI_ALGORITHM_RSAG}, {"ring", APSMPI_ALGORITHM_RING},
                                           {NULL, 0}};
static const struct choice intranodes[] = {{"pass", APSMPI_INTRANODE_PASS}, {"compress", APSMPI_INTRANODE_COMPRESS},
                                           {NULL, 0}};
static const struct choice levels[] = {{"error", 0}, {"warn", 1}, {"info", 2}, {"debug", 3}, {NULL, 0}};

static int bad_value(char *err, size_t errlen, const char *var, const char *value, const char *valid)
{
    snprintf(err, errlen, "%s='%s' is not valid; valid values: %s", var, value, valid);
    return -1;
}

static int parse_choice(const char *var, const char *value, const struct choice *choices,
                        const char *valid, int *out, char *err, size_t errlen)
{
    if (value == NULL)
        return 0;
    for (const struct choice *c = choices; c->word; c++) {
        if (strcasecmp(value, c->word) == 0) {
            *out = c->value;
            return 0;
        }
    }
    return bad_value(err, errlen, var, value, valid);
}

/* An unsigned integer with an optional binary suffix k, m or g, within [lo, hi]. */
static int parse_size(const char *var, const char *value, uint64_t lo, uint64_t hi, int suffixes,
                      const char *valid, uint64_t *out, char *err, size_t errlen)
{
    char *end;
    unsigned long long v;
    unsigned shift = 0;

    if (value == NULL)
        return 0;
    if (!isdigit((unsigned char)value[0]))
        return bad_value(err, errlen, var, value, valid);
    errno = 0;
    v = strtoull(value, &end, 10);
    if (suffixes && *end) {
        switch (tolower((unsigned char)*end)) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        default: return bad_value(err, errlen, var, value, valid);
        }
        end++;
    }
    if (errno || *end || (shift && v > (hi >> shift)) || (v << shift) < lo || (v << shift) > hi)
        return bad_value(err, errlen, var, value, valid);
    *out = (uint64_t)v << shift;
    return 0;
}

static int parse_format(const char *value, apsmpi_config *cfg, char *err, size_t errlen)
{
    const char *name = value ? value : DEFAULT_FORMAT;

    if (strcasecmp(name, "fp32") == 0) {
        cfg->compress = 0;
        return 0;
    }
    if (apsmpi_format_parse(name, &cfg->format) != 0)
        return bad_value(err, errlen, "APSMPI_FORMAT", name,
                         "fp32, fp16, bf16, e5m2, e4m3, e4m3ieee, eXmY (2<=X<=8, 0<=Y<=23, X+Y<=15)");
    return 0;
}

int apsmpi_config_load(apsmpi_config *cfg, apsmpi_getenv_fn getenv_fn, char *err, size_t errlen)
{
    uint64_t block = DEFAULT_BLOCK_SIZE, min_bytes = DEFAULT_MIN_BYTES, chunk = DEFAULT_CHUNK_SIZE, seed = 0;

    memset(cfg, 0, sizeof *cfg);
    cfg->enabled = 1;
    cfg->compress = 1;
    cfg->scaling = APSMPI_SCALING_BLOCK;
    cfg->log_level = 1;

    if (parse_choice("APSMPI_ENABLE", getenv_fn("APSMPI_ENABLE"), on_off, "1, 0", &cfg->enabled, err, errlen) ||
        parse_format(getenv_fn("APSMPI_FORMAT"), cfg, err, errlen) ||
        parse_choice("APSMPI_SCALING", getenv_fn("APSMPI_SCALING"), scalings, "block, aps, none",
                     &cfg->scaling, err, errlen) ||
        parse_size("APSMPI_BLOCK_SIZE", getenv_fn("APSMPI_BLOCK_SIZE"), 1, MAX_BLOCK_SIZE, 1,
                   "an element count from 1 to 1073741824 (suffix k, m or g allowed)", &block, err, errlen) ||
        parse_choice("APSMPI_ROUNDING", getenv_fn("APSMPI_ROUNDING"), roundings, "nearest, stochastic",
                     &cfg->stochastic, err, errlen) ||
        parse_size("APSMPI_SEED", getenv_fn("APSMPI_SEED"), 0, UINT64_MAX, 0,
                   "an unsigned 64-bit integer", &seed, err, errlen) ||
        parse_size("APSMPI_MIN_BYTES", getenv_fn("APSMPI_MIN_BYTES"), 0, UINT64_MAX >> 1, 1,
                   "a byte count (suffix k, m or g allowed)", &min_bytes, err, errlen) ||
        parse_size("APSMPI_CHUNK_SIZE", getenv_fn("APSMPI_CHUNK_SIZE"), 0, MAX_BLOCK_SIZE, 1,
                   "an element count from 0 (no pipeline) to 1073741824 (suffix k, m or g allowed)", &chunk, err,
                   errlen) ||
        parse_choice("APSMPI_STATS", getenv_fn("APSMPI_STATS"), on_off, "1, 0", &cfg->stats, err, errlen) ||
        parse_choice("APSMPI_LOG_LEVEL", getenv_fn("APSMPI_LOG_LEVEL"), levels, "error, warn, info, debug",
                     &cfg->log_level, err, errlen) ||
        parse_choice("APSMPI_ALGORITHM", getenv_fn("APSMPI_ALGORITHM"), algorithms, "rsag, ring", &cfg->algorithm,
                     err, errlen) ||
        parse_choice("APSMPI_INTRANODE", getenv_fn("APSMPI_INTRANODE"), intranodes, "pass, compress",
                     &cfg->intranode, err, errlen))
        return -1;
    cfg->test_node_of_rank = getenv_fn("APSMPI_TEST_NODE_OF_RANK");
    if (cfg->test_node_of_rank && apsmpi_node_map_length(cfg->test_node_of_rank) < 0)
        return bad_value(err, errlen, "APSMPI_TEST_NODE_OF_RANK", cfg->test_node_of_rank,
                         "node numbers (0 to 65535) of world ranks 0, 1, ..., separated by commas");

    cfg->block_size = (size_t)block;
    cfg->seed = seed;
    cfg->min_bytes = (size_t)min_bytes;
    cfg->chunk_size = (size_t)chunk;
    cfg->compress = cfg->compress && cfg->enabled;
    return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

uint64_t apsmpi_config_digest(const apsmpi_config *cfg)
{
    uint64_t h = mix(0, (uint64_t)cfg->compress);

    if (!cfg->compress)
        return h;
    h = mix(h, (uint64_t)cfg->format.ebits);
    h = mix(h, (uint64_t)cfg->format.mbits);
    h = mix(h, (uint64_t)cfg->format.kind);
    h = mix(h, (uint64_t)cfg->scaling);
    h = mix(h, (uint64_t)cfg->block_size);
    h = mix(h, (uint64_t)cfg->stochastic);
    h = mix(h, cfg->seed);
    h = mix(h, (uint64_t)cfg->chunk_size);
    h = mix(h, (uint64_t)cfg->algorithm);
    h = mix(h, (uint64_t)cfg->intranode);
    for (const char *p = cfg->test_node_of_rank; p && *p; p++)
        h = mix(h, (uint64_t)(unsigned char)*p);
    return mix(h, (uint64_t)cfg->min_bytes);
}

void apsmpi_config_describe(const apsmpi_config *cfg, char *buf, size_t len)
{
    static const char *scaling_names[] = {"block", "aps", "none"};
    static const char *algorithm_names[] = {"rsag", "ring"};
    static const char *intranode_names[] = {"pass", "compress"};

    if (!cfg->compress) {
        snprintf(buf, len, "%s", cfg->enabled ? "format=fp32 (pass-through)" : "disabled (pass-through)");
        return;
    }
    snprintf(buf, len, "format=%s scaling=%s block=%zu rounding=%s min_bytes=%zu chunk=%zu algorithm=%s intranode=%s%s",
             cfg->format.name, scaling_names[cfg->scaling], cfg->block_size, cfg->stochastic ? "stochastic" : "nearest",
             cfg->min_bytes, cfg->chunk_size, algorithm_names[cfg->algorithm], intranode_names[cfg->intranode],
             cfg->test_node_of_rank ? " test_nodes" : "");
}
