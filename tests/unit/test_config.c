/* test_config.c: unit tests of the APSMPI_* variables: defaults, every valid value, and the error lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/codec.h"
#include "core/config.h"
#include "core/fault.h"
#include "core/node_map.h"

/* The fake environment: pairs of name and value, ended by NULL. */
static const char **fake_env;

static const char *fake_getenv(const char *name)
{
    for (const char **p = fake_env; p && *p; p += 2)
        if (strcmp(p[0], name) == 0)
            return p[1];
    return NULL;
}

static int load(apsmpi_config *cfg, char *err, const char **env)
{
    fake_env = env;
    err[0] = '\0';
    return apsmpi_config_load(cfg, fake_getenv, err, 256);
}

/* The settings that differ between two ranks with configurations a and b, as the check at
 * MPI_Init names them ("APSMPI_FORMAT APSMPI_STATS"; "" when they agree): the largest and
 * the smallest of each digest over the two, as its one reduction gives them. */
static const char *differing(const apsmpi_config *a, const apsmpi_config *b)
{
    static char names[512];
    uint64_t da[APSMPI_CONFIG_MAX_ROWS + 1], db[APSMPI_CONFIG_MAX_ROWS + 1];
    uint64_t most[APSMPI_CONFIG_MAX_ROWS + 1], least[APSMPI_CONFIG_MAX_ROWS + 1];
    size_t rows[APSMPI_CONFIG_MAX_ROWS], count;

    apsmpi_config_digests(a, da);
    apsmpi_config_digests(b, db);
    for (size_t i = 0; i <= apsmpi_config_nrows; i++) {
        most[i] = da[i] > db[i] ? da[i] : db[i];
        least[i] = da[i] < db[i] ? da[i] : db[i];
    }
    count = apsmpi_config_differing(most, least, rows);
    names[0] = '\0';
    for (size_t k = 0; k < count; k++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? " " : "",
                 apsmpi_config_rows[rows[k]].name);
    return names;
}

static void test_defaults(void **state)
{
    apsmpi_config cfg;
    char err[256];

    assert_int_equal(load(&cfg, err, NULL), 0);
    assert_true(cfg.enabled);
    assert_true(cfg.compress);
    assert_string_equal(cfg.format.name, "e4m3");
    assert_int_equal(cfg.scaling, APSMPI_SCALING_BLOCK);
    assert_int_equal(cfg.block_size, 4096);
    assert_false(cfg.stochastic);
    assert_int_equal(cfg.seed, 0);
    assert_int_equal(cfg.min_bytes, 65536);
    assert_int_equal(cfg.chunk_size, 1 << 18);
    assert_false(cfg.stats);
    assert_int_equal(cfg.log_level, 1);
    assert_int_equal(cfg.algorithm, APSMPI_ALGORITHM_RSAG);
    assert_int_equal(cfg.intranode, APSMPI_INTRANODE_PASS);
    assert_null(cfg.test_node_of_rank);
    assert_null(cfg.device_plugin);
    assert_int_equal(cfg.codec_isa, APSMPI_ISA_AUTO);
    assert_int_equal(cfg.codec_threads, 0);
}

/* APSMPI_CODEC_THREADS: auto (0) or 1 to 64, described as given; not in the digest (every
 * count sends the same bits); anything else an error line naming it. */
static void test_codec_threads(void **state)
{
    static const struct {
        const char *value;
        int want;
        const char *described;
    } good[] = {{"auto", 0, "auto"}, {"AUTO", 0, "auto"}, {"1", 1, "1"}, {"3", 3, "3"}, {"64", 64, "64"}};
    static const char *const bad[] = {"0", "65", "-1", "two", "4k", "", "3 "};
    apsmpi_config cfg, auto_cfg;
    char err[256], line[1024];
    const char *env[] = {"APSMPI_CODEC_THREADS", NULL, NULL};

    assert_int_equal(load(&auto_cfg, err, NULL), 0); /* the default, auto */
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        env[1] = good[i].value;
        assert_int_equal(load(&cfg, err, env), 0);
        assert_int_equal(cfg.codec_threads, good[i].want);
        assert_string_equal(differing(&cfg, &auto_cfg), "");
        apsmpi_config_describe(&cfg, line, sizeof line);
        snprintf(err, sizeof err, " codec_threads=%s ", good[i].described);
        assert_non_null(strstr(line, err));
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[128];
        env[1] = bad[i];
        assert_int_equal(load(&cfg, err, env), -1);
        snprintf(want, sizeof want, "APSMPI_CODEC_THREADS='%s' is not valid; valid values: auto, 1 to 64", bad[i]);
        assert_non_null(strstr(err, want));
        assert_null(strchr(err, '\n'));
    }
}

/* APSMPI_CODEC_ISA: every level this CPU has; a level it lacks or a wrong word is an error
 * line that lists the ones it has; not in the digest (every level sends the same bits). */
static void test_codec_isa(void **state)
{
    apsmpi_config cfg, auto_cfg;
    char err[256];
    const char *env[] = {"APSMPI_CODEC_ISA", NULL, NULL};

    assert_int_equal(load(&auto_cfg, err, NULL), 0);
    for (int isa = APSMPI_ISA_AUTO; isa < APSMPI_ISA_COUNT; isa++) {
        env[1] = apsmpi_codec_isa_name(isa);
        if (apsmpi_codec_isa_supported(isa)) {
            assert_int_equal(load(&cfg, err, env), 0);
            assert_int_equal(cfg.codec_isa, isa);
            assert_string_equal(differing(&cfg, &auto_cfg), "");
        } else {
            assert_int_equal(load(&cfg, err, env), -1);
            assert_non_null(strstr(err, "APSMPI_CODEC_ISA"));
        }
    }
    env[1] = "sse";
    assert_int_equal(load(&cfg, err, env), -1);
    assert_non_null(strstr(err, "APSMPI_CODEC_ISA='sse' is not valid; valid values: auto, scalar"));
    assert_null(strchr(err, '\n'));
}

/* APSMPI_AUTO_LADDER: auto takes its widest format's fields; an APS ladder; bad lists, and
 * auto without scaling, stop the job with one line naming the variable; ranks that differ */
static void test_auto_ladder(void **state)
{
    apsmpi_config cfg, other;
    char err[512];
    const char *mx[] = {"APSMPI_FORMAT", "auto", NULL};
    const char *aps[] = {"APSMPI_FORMAT", "auto", "APSMPI_AUTO_LADDER", "e2m1,e3m2,e4m3", NULL};

    (void)state;
    assert_int_equal(load(&cfg, err, mx), 0);
    assert_int_equal(cfg.format.ladder, 1);
    assert_int_equal(cfg.format.mx, 1);
    assert_int_equal(cfg.format.width, 8);
    assert_string_equal(cfg.format.name, "auto");
    assert_int_equal(cfg.ladder.rungs, 5);
    assert_int_equal(load(&other, err, aps), 0);
    assert_int_equal(other.format.ladder, 1);
    assert_int_equal(other.format.mx, 0);
    assert_int_equal(other.format.emax, 8);
    assert_int_equal(other.ladder.rungs, 4);
    assert_string_equal(differing(&cfg, &other), "APSMPI_FORMAT APSMPI_AUTO_LADDER");
    static const char *const bad[] = {"mxfp4,e4m3", "mxfp8,mxfp4", "fp32", "mxfp4,mxfp5,mxfp6,mxfp8,mxfp8e5m2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aps[3] = bad[i];
        assert_int_equal(load(&cfg, err, aps), -1);
        assert_non_null(strstr(err, "APSMPI_AUTO_LADDER='"));
        assert_null(strchr(err, '\n'));
    }
    const char *none[] = {"APSMPI_FORMAT", "auto", "APSMPI_AUTO_LADDER", "e2m1,e4m3", "APSMPI_SCALING", "none", NULL};
    assert_int_equal(load(&cfg, err, none), -1);
    assert_non_null(strstr(err, "APSMPI_SCALING=none"));
}

static void test_valid_values(void **state)
{
    apsmpi_config cfg;
    char err[256];
    const char *env[] = {"APSMPI_FORMAT",
                         "E3M2",
                         "APSMPI_SCALING",
                         "aps",
                         "APSMPI_BLOCK_SIZE",
                         "64k",
                         "APSMPI_ROUNDING",
                         "stochastic",
                         "APSMPI_SEED",
                         "18446744073709551615",
                         "APSMPI_MIN_BYTES",
                         "0",
                         "APSMPI_STATS",
                         "1",
                         "APSMPI_LOG_LEVEL",
                         "debug",
                         "APSMPI_CHUNK_SIZE",
                         "0",
                         "APSMPI_ALGORITHM",
                         "ring",
                         "APSMPI_RSAG_WINDOW",
                         "64",
                         "APSMPI_INTRANODE",
                         "compress",
                         "APSMPI_TEST_NODE_OF_RANK",
                         "0,0,1",
                         NULL};

    assert_int_equal(load(&cfg, err, env), 0);
    assert_string_equal(cfg.format.name, "e3m2");
    assert_int_equal(cfg.scaling, APSMPI_SCALING_APS);
    assert_int_equal(cfg.block_size, 65536);
    assert_true(cfg.stochastic);
    assert_true(cfg.seed == UINT64_MAX);
    assert_int_equal(cfg.min_bytes, 0);
    assert_true(cfg.stats);
    assert_int_equal(cfg.log_level, 3);
    assert_int_equal(cfg.chunk_size, 0);
    assert_int_equal(cfg.algorithm, APSMPI_ALGORITHM_RING);
    assert_int_equal(cfg.rsag_window, 64);
    assert_int_equal(cfg.intranode, APSMPI_INTRANODE_COMPRESS);
    assert_string_equal(cfg.test_node_of_rank, "0,0,1");
}

static void test_pass_through_settings(void **state)
{
    apsmpi_config cfg;
    char err[256];
    const char *fp32[] = {"APSMPI_FORMAT", "fp32", NULL};
    const char *off[] = {"APSMPI_ENABLE", "0", "APSMPI_FORMAT", "bf16", NULL};
    const char *none[] = {"APSMPI_SCALING", "none", "APSMPI_MIN_BYTES", "2M", NULL};

    assert_int_equal(load(&cfg, err, fp32), 0);
    assert_true(cfg.enabled);
    assert_false(cfg.compress);
    assert_int_equal(load(&cfg, err, off), 0);
    assert_false(cfg.enabled);
    assert_false(cfg.compress);
    assert_int_equal(load(&cfg, err, none), 0);
    assert_int_equal(cfg.scaling, APSMPI_SCALING_NONE);
    assert_int_equal(cfg.min_bytes, 2 << 20);
}

/* Every bad value gives one line that names the variable, the value and the valid ones. */
static void test_invalid_values(void **state)
{
    static const char *cases[][3] = {
        {"APSMPI_FORMAT", "e9m2", "fp32, fp16, bf16"},
        {"APSMPI_FORMAT", "", "eXmY"},
        {"APSMPI_FORMAT", "fp8", "e4m3ieee"},
        {"APSMPI_SCALING", "layer", "block, aps, none"},
        {"APSMPI_BLOCK_SIZE", "0", "element count"},
        {"APSMPI_BLOCK_SIZE", "4096x", "element count"},
        {"APSMPI_BLOCK_SIZE", "-1", "element count"},
        {"APSMPI_BLOCK_SIZE", "2g", "element count"},
        {"APSMPI_ROUNDING", "up", "nearest, stochastic"},
        {"APSMPI_SEED", "18446744073709551616", "64-bit"},
        {"APSMPI_SEED", "12k", "64-bit"},
        {"APSMPI_MIN_BYTES", "lots", "byte count"},
        {"APSMPI_STATS", "2", "1, 0"},
        {"APSMPI_ENABLE", "maybe", "1, 0"},
        {"APSMPI_LOG_LEVEL", "loud", "error, warn, info, debug"},
        {"APSMPI_CHUNK_SIZE", "4x", "0 (no pipeline)"},
        {"APSMPI_ALGORITHM", "tree", "rsag, ring"},
        {"APSMPI_RSAG_WINDOW", "65", "0 to 64"},
        {"APSMPI_RSAG_WINDOW", "two", "0 to 64"},
        {"APSMPI_INTRANODE", "yes", "pass, compress"},
        {"APSMPI_TEST_NODE_OF_RANK", "0,,1", "separated by commas"},
        {"APSMPI_TEST_NODE_OF_RANK", "0,1,", "separated by commas"},
        {"APSMPI_TEST_NODE_OF_RANK", "0,70000", "0 to 65535"},
        {"APSMPI_TEST_NODE_OF_RANK", "", "separated by commas"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        apsmpi_config cfg;
        char err[256], expect[128];
        const char *env[] = {cases[i][0], cases[i][1], NULL};

        assert_int_equal(load(&cfg, err, env), -1);
        snprintf(expect, sizeof expect, "%s='%s' is not valid", cases[i][0], cases[i][1]);
        assert_non_null(strstr(err, expect));
        assert_non_null(strstr(err, cases[i][2]));
        assert_null(strchr(err, '\n'));
    }
}

/* The settings that must be equal on all ranks are compared row by row, and those that
 * differ are named: the wire settings when compressing, the job's always, a rank's own never. */
static void test_differing_settings_named(void **state)
{
    apsmpi_config a, b;
    char err[256], value[64];
    const char *e4m3[] = {"APSMPI_FORMAT", "e4m3", NULL};
    const char *e4m3ieee[] = {"APSMPI_FORMAT", "e4m3ieee", NULL};
    const char *block[] = {"APSMPI_BLOCK_SIZE", "1024", NULL};
    const char *block_stats[] = {"APSMPI_BLOCK_SIZE", "1024", "APSMPI_STATS", "1", NULL};
    const char *local[] = {"APSMPI_LOG_LEVEL", "info", "APSMPI_DEVICE_PLUGIN", "/x/mock.so", NULL};
    const char *stats[] = {"APSMPI_STATS", "1", NULL};
    const char *fp32[] = {"APSMPI_FORMAT", "fp32", "APSMPI_BLOCK_SIZE", "1024", NULL};
    const char *off[] = {"APSMPI_ENABLE", "0", NULL};
    const char *off_stats[] = {"APSMPI_ENABLE", "0", "APSMPI_STATS", "1", NULL};
    const char *off_e5m2[] = {"APSMPI_ENABLE", "0", "APSMPI_FORMAT", "e5m2", NULL};

    assert_int_equal(load(&a, err, e4m3), 0);
    assert_int_equal(load(&b, err, e4m3ieee), 0);
    assert_string_equal(differing(&a, &b), "APSMPI_FORMAT");
    apsmpi_config_describe_row(&b, 1, value, sizeof value);
    assert_string_equal(value, "e4m3ieee");
    assert_int_equal(load(&b, err, block), 0);
    assert_string_equal(differing(&a, &b), "APSMPI_BLOCK_SIZE");
    assert_int_equal(load(&b, err, block_stats), 0);
    assert_string_equal(differing(&a, &b), "APSMPI_BLOCK_SIZE APSMPI_STATS");
    assert_int_equal(load(&b, err, local), 0); /* logging and the plugin path are each rank's own */
    assert_string_equal(differing(&a, &b), "");
    for (int i = 0; i < 3; i++) { /* the algorithm, the node rule and fake nodes change the wire */
        static const char *wire[][2] = {
            {"APSMPI_ALGORITHM", "ring"}, {"APSMPI_INTRANODE", "compress"}, {"APSMPI_TEST_NODE_OF_RANK", "0,1"}};
        const char *env[] = {wire[i][0], wire[i][1], NULL};
        assert_int_equal(load(&b, err, env), 0);
        assert_string_equal(differing(&a, &b), wire[i][0]);
    }
    /* the statistics are collectives at MPI_Finalize: a rank without them would hang the others */
    assert_int_equal(load(&b, err, stats), 0);
    assert_string_equal(differing(&a, &b), "APSMPI_STATS");
    /* one rank compresses, the other not: the setting that decides it, not the wire settings
     * only the first compares */
    assert_int_equal(load(&b, err, fp32), 0);
    assert_string_equal(differing(&a, &b), "APSMPI_FORMAT");
    assert_int_equal(load(&b, err, off_e5m2), 0);
    assert_string_equal(differing(&a, &b), "APSMPI_ENABLE");
    assert_int_equal(load(&a, err, off), 0);
    assert_int_equal(load(&b, err, off_stats), 0);
    assert_string_equal(differing(&a, &b), "APSMPI_STATS");
    /* with compression off, the wire settings do not matter */
    assert_int_equal(load(&b, err, off_e5m2), 0);
    assert_string_equal(differing(&a, &b), "");
}

/* APSMPI_TEST_FAIL: its syntax is checked at load; armed, it fails exactly the CALL-th pass
 * of its site, on its rank only. */
static void test_fault_injection(void **state)
{
    apsmpi_config cfg;
    char err[256];
    const char *good[] = {"APSMPI_TEST_FAIL", "dup_malloc:1:2", NULL};
    const char *bad_site[] = {"APSMPI_TEST_FAIL", "disk:0:1", NULL};
    const char *bad_call[] = {"APSMPI_TEST_FAIL", "codec:0:0", NULL};
    const char *no_rank[] = {"APSMPI_TEST_FAIL", "codec::1", NULL};

    assert_int_equal(load(&cfg, err, good), 0);
    assert_string_equal(cfg.test_fail, "dup_malloc:1:2");
    assert_int_equal(load(&cfg, err, bad_site), -1);
    assert_non_null(strstr(err, "APSMPI_TEST_FAIL='disk:0:1' is not valid; valid values: SITE:RANK:CALL"));
    assert_int_equal(load(&cfg, err, bad_call), -1);
    assert_int_equal(load(&cfg, err, no_rank), -1);

    apsmpi_fault_arm("sumop:3:2", 2); /* another rank */
    assert_int_equal(apsmpi_fault(APSMPI_FAULT_SUMOP), 0);
    assert_int_equal(apsmpi_fault(APSMPI_FAULT_SUMOP), 0);
    apsmpi_fault_arm("codec:3:2", 3);
    assert_int_equal(apsmpi_fault(APSMPI_FAULT_SUMOP), 0);
    assert_int_equal(apsmpi_fault(APSMPI_FAULT_CODEC), 0);
    assert_int_equal(apsmpi_fault(APSMPI_FAULT_CODEC), 1);
    assert_int_equal(apsmpi_fault(APSMPI_FAULT_CODEC), 0);
    apsmpi_fault_arm(NULL, 3);
    assert_int_equal(apsmpi_fault(APSMPI_FAULT_CODEC), 0);
}

/* APSMPI_COMM_INCLUDE/EXCLUDE: comma-separated globs against a communicator's name. */
static void test_names_match(void **state)
{
    assert_true(apsmpi_config_names_match("grad*,bucket?", "gradients"));
    assert_true(apsmpi_config_names_match("grad*,bucket?", "bucket3"));
    assert_false(apsmpi_config_names_match("grad*,bucket?", "bucket12"));
    assert_false(apsmpi_config_names_match("grad*,bucket?", ""));
    assert_true(apsmpi_config_names_match("MPI_COMM_WORLD", "MPI_COMM_WORLD"));
    assert_true(apsmpi_config_names_match("a,,[lm]oss", "loss"));
    assert_false(apsmpi_config_names_match("", "loss"));
}

/* The one-line description names every row of the table once, with its value. */
static void test_describe_names_every_row(void **state)
{
    apsmpi_config cfg;
    char err[256], line[1024];
    const char *env[] = {"APSMPI_FORMAT", "e3m2", "APSMPI_CHUNK_SIZE", "1k", NULL};

    assert_int_equal(load(&cfg, err, env), 0);
    apsmpi_config_describe(&cfg, line, sizeof line);
    assert_string_equal(
        line,
        "enable=1 format=e3m2 scaling=block block_size=4096 rounding=nearest seed=0 "
        "min_bytes=65536 max_bytes=0 comm_include=(unset) comm_exclude=(unset) chunk_size=1024 "
        "error_feedback=0 feedback_max_bytes=1073741824 error_budget=0.3 auto_ladder=mxfp4,mxfp5,mxfp6,mxfp8 stats=0 "
        "log_level=warn codec_isa=auto codec_threads=auto device_plugin=(unset) algorithm=rsag rsag_window=4 "
        "intranode=pass progress_thread=1 "
        "test_node_of_rank=(unset) test_fail=(unset)");
    assert_int_equal(apsmpi_config_nrows, 26);
    for (size_t i = 0; i < apsmpi_config_nrows; i++)
        assert_non_null(apsmpi_config_rows[i].doc);
}

/* An MX format: selectable by name; a scaling other than its own stops the job with one line
 * naming the variable (a block size only does not apply); the digest tells MX from the plain
 * format of its element. */
static void test_mx_formats(void **state)
{
    apsmpi_config cfg, plain;
    char err[256];
    const char *mx[] = {"APSMPI_FORMAT", "mxfp4", NULL};
    const char *mx_block_default[] = {
        "APSMPI_FORMAT", "mxfp8", "APSMPI_SCALING", "block", "APSMPI_BLOCK_SIZE", "32", NULL};
    const char *mx_none[] = {"APSMPI_FORMAT", "mxfp6", "APSMPI_SCALING", "none", NULL};
    const char *mx_aps[] = {"APSMPI_FORMAT", "mxfp6", "APSMPI_SCALING", "aps", NULL};
    const char *mx_block[] = {"APSMPI_FORMAT", "mxfp4", "APSMPI_BLOCK_SIZE", "4096", NULL};
    const char *e4m3[] = {"APSMPI_FORMAT", "e4m3", NULL};
    const char *mxfp8[] = {"APSMPI_FORMAT", "mxfp8", NULL};

    assert_int_equal(load(&cfg, err, mx), 0);
    assert_true(cfg.compress);
    assert_true(cfg.format.mx);
    assert_string_equal(cfg.format.name, "mxfp4");
    assert_int_equal(load(&cfg, err, mx_block_default), 0);
    assert_int_equal(load(&cfg, err, mx_none), -1);
    assert_non_null(strstr(err, "APSMPI_SCALING='none'"));
    assert_non_null(strstr(err, "mxfp6"));
    assert_int_equal(load(&cfg, err, mx_aps), -1);
    assert_non_null(strstr(err, "APSMPI_SCALING='aps'"));
    assert_int_equal(load(&cfg, err, mx_block), 0); /* does not apply, but is no contradiction */
    assert_int_equal(load(&plain, err, e4m3), 0);
    assert_int_equal(load(&cfg, err, mxfp8), 0); /* the same element, E4M3 */
    uint64_t a[APSMPI_CONFIG_MAX_ROWS + 1], b[APSMPI_CONFIG_MAX_ROWS + 1];
    apsmpi_config_digests(&plain, a);
    apsmpi_config_digests(&cfg, b);
    assert_memory_not_equal(a, b, sizeof a);
}

/* Every row of the table: a unique APSMPI_ name, a field of its kind's size (a row that wrote
 * an int into a size_t would pass every other test on a little-endian machine), a default
 * that its own parser takes, valid values and a meaning to print. */
static void test_rows_fit_their_fields(void **state)
{
    for (size_t i = 0; i < apsmpi_config_nrows; i++) {
        const apsmpi_config_row *row = &apsmpi_config_rows[i];
        apsmpi_config cfg;
        char err[256] = "";

        assert_int_equal(strncmp(row->name, "APSMPI_", 7), 0);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(row->name, apsmpi_config_rows[j].name);
        assert_int_equal(row->field.size, row->kind->size);
        assert_true(row->field.offset + row->field.size <= sizeof cfg);
        if (row->default_value != NULL)
            assert_int_equal(
                row->kind->parse(row, row->default_value, (char *)&cfg + row->field.offset, err, sizeof err), 0);
        assert_non_null(row->valid);
        assert_non_null(row->doc);
    }
}

static void test_node_map(void **state)
{
    assert_int_equal(apsmpi_node_map_length("0"), 1);
    assert_int_equal(apsmpi_node_map_length("0,0,1,1,1"), 5);
    assert_int_equal(apsmpi_node_map_get("0,0,1,1,1", 0), 0);
    assert_int_equal(apsmpi_node_map_get("0,0,1,1,12", 4), 12);
    assert_int_equal(apsmpi_node_map_get("0,0,1", 3), -1); /* names too few ranks */
    assert_int_equal(apsmpi_node_map_get("0,0,1", -1), -1);
    assert_int_equal(apsmpi_node_map_length("65535,0"), 2);
    assert_int_equal(apsmpi_node_map_length("65536"), -1);
    assert_int_equal(apsmpi_node_map_length("1 ,2"), -1);
    assert_int_equal(apsmpi_node_map_length("a"), -1);
    assert_int_equal(apsmpi_node_map_length("-1"), -1);
}

/* APSMPI_ERROR_FEEDBACK is off unless asked for; APSMPI_FEEDBACK_MAX_BYTES takes a size with
 * a suffix, and a wrong value of either is refused with its name. */
static void test_error_feedback(void **state)
{
    apsmpi_config cfg;
    char err[256];
    const char *none[] = {NULL};
    const char *on[] = {"APSMPI_ERROR_FEEDBACK", "1", "APSMPI_FEEDBACK_MAX_BYTES", "64k", NULL};
    const char *bad_on[] = {"APSMPI_ERROR_FEEDBACK", "yes please", NULL};
    const char *bad_size[] = {"APSMPI_FEEDBACK_MAX_BYTES", "lots", NULL};

    assert_int_equal(load(&cfg, err, none), 0);
    assert_int_equal(cfg.error_feedback, 0);
    assert_int_equal(cfg.feedback_max_bytes, (size_t)1 << 30);
    assert_int_equal(load(&cfg, err, on), 0);
    assert_int_equal(cfg.error_feedback, 1);
    assert_int_equal(cfg.feedback_max_bytes, 65536);
    assert_int_equal(load(&cfg, err, bad_on), -1);
    assert_non_null(strstr(err, "APSMPI_ERROR_FEEDBACK"));
    assert_int_equal(load(&cfg, err, bad_size), -1);
    assert_non_null(strstr(err, "APSMPI_FEEDBACK_MAX_BYTES"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_valid_values),
        cmocka_unit_test(test_pass_through_settings),
        cmocka_unit_test(test_invalid_values),
        cmocka_unit_test(test_differing_settings_named),
        cmocka_unit_test(test_describe_names_every_row),
        cmocka_unit_test(test_fault_injection),
        cmocka_unit_test(test_names_match),
        cmocka_unit_test(test_codec_isa),
        cmocka_unit_test(test_codec_threads),
        cmocka_unit_test(test_node_map),
        cmocka_unit_test(test_mx_formats),
        cmocka_unit_test(test_auto_ladder),
        cmocka_unit_test(test_error_feedback),
        cmocka_unit_test(test_rows_fit_their_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
