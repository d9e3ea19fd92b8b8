/* init_finalize.c: MPI_Init and MPI_Finalize: reads and checks the configuration on all ranks, sets up the runtime state, reports statistics. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/ring_sumop.h"
#include "core/fault.h"
#include "core/log.h"
#include "device/device.h"
#include "entry/entry_points.h"
#include "entry/next_calls.h"
#include "entry/requests.h"
#include "core/node_map.h"
#include "core/thread_pool.h"
#include "core/units.h"
#include "state/comm_info.h"
#include "state/comm_prepare.h"
#include "state/end_job.h"
#include "feedback/job_store.h"
#include "state/private_comm.h"
#include "state/runtime_state.h"
#include "state/auto_width.h"
#include "state/stats.h"

/* The process environment, as the configuration loader reads it. */
static const char *process_getenv(const char *name) { return getenv(name); }

/* Appends what printf makes of fmt to line[0..len), from *used on. */
static void append(char *line, size_t len, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *line, size_t len, size_t *used, const char *fmt, ...)
{
    va_list ap;

    if (*used >= len)
        return;
    va_start(ap, fmt);
    *used += (size_t)vsnprintf(line + *used, len - *used, fmt, ap);
    va_end(ap);
}

enum { VALUE_LEN = 64 };

/* Appends "NAME is V1 on rank R, V2 on rank S and 3 others" for the setting of row `row`,
 * from every rank's value of it: values + rank * stride, VALUE_LEN bytes each. */
static void append_values(char *line, size_t len, size_t *used, size_t row, const char *values, size_t stride, int size)
{
    int shown = 0;

    append(line, len, used, "%s is", apsmpi_config_rows[row].name);
    for (int r = 0; r < size; r++) {
        const char *v = values + (size_t)r * stride;
        int seen = 0, others = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(values + (size_t)q * stride, v) == 0;
        if (seen)
            continue;
        if (shown++ == 3) {
            append(line, len, used, ", ...");
            break;
        }
        for (int q = r + 1; q < size; q++)
            others += strcmp(values + (size_t)q * stride, v) == 0;
        append(line, len, used, "%s %s on rank %d", shown > 1 ? "," : "", v, r);
        if (others > 0)
            append(line, len, used, " and %d other%s", others, others > 1 ? "s" : "");
    }
}

/* Settings that must be equal on all ranks (config.h) are compared in one reduction; where
 * they differ every rank stops, and rank 0 names each setting that differs with its value on
 * the ranks (gathered only then). Collective over MPI_COMM_WORLD. */
static void agree_on_settings(const apsmpi_config *cfg, int rank, int size)
{
    uint64_t mine[2 * (APSMPI_CONFIG_MAX_ROWS + 1)], agreed[2 * (APSMPI_CONFIG_MAX_ROWS + 1)];
    uint64_t least[APSMPI_CONFIG_MAX_ROWS + 1];
    size_t n = apsmpi_config_nrows + 1, rows[APSMPI_CONFIG_MAX_ROWS], ndiff, stride, used = 0;
    char local[APSMPI_CONFIG_MAX_ROWS * VALUE_LEN], line[1024], *all = NULL;

    apsmpi_config_digests(cfg, mine);
    for (size_t i = 0; i < n; i++)
        mine[n + i] = ~mine[i];
    PMPI_Allreduce(mine, agreed, (int)(2 * n), MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; i++)
        least[i] = ~agreed[n + i];
    ndiff = apsmpi_config_differing(agreed, least, rows);
    if (ndiff == 0)
        return;

    append(line, sizeof line, &used, "the APSMPI_* settings differ between ranks: ");
    stride = ndiff * VALUE_LEN;
    if (rank == 0 && (all = malloc((size_t)size * stride)) == NULL) { /* (the others wait in the gather) */
        for (size_t k = 0; k < ndiff; k++)
            append(line, sizeof line, &used, "%s%s", k ? ", " : "", apsmpi_config_rows[rows[k]].name);
        apsmpi_end_job(APSMPI_END_THIS_RANK, MPI_COMM_WORLD, 1, "%s; set them alike on every rank (mpirun -x)", line);
    }
    for (size_t k = 0; k < ndiff; k++)
        apsmpi_config_describe_row(cfg, rows[k], local + k * VALUE_LEN, VALUE_LEN);
    PMPI_Gather(local, (int)stride, MPI_CHAR, all, (int)stride, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (size_t k = 0; rank == 0 && k < ndiff; k++) {
        if (k > 0)
            append(line, sizeof line, &used, "; ");
        append_values(line, sizeof line, &used, rows[k], all + k * VALUE_LEN, stride, size);
    }
    append(line, sizeof line, &used, "; set them alike on every rank (mpirun -x)");
    apsmpi_end_job(APSMPI_END_EVERY_RANK, MPI_COMM_WORLD, rank == 0, "%s", line);
}

/* The ranks of the job on this rank's node, as the launcher says (Open MPI's mpirun, MPICH's
 * Hydra); 0 when it does not. */
static int local_ranks(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        int n = v != NULL ? atoi(v) : 0;
        if (n > 0)
            return n;
    }
    return 0;
}

/* APSMPI_CODEC_THREADS: a number as it is; auto: the CPUs this rank may use over the ranks on
 * its node, at most 8, and 1 when the launcher does not say how many ranks share the node. */
static int codec_threads(const apsmpi_config *cfg)
{
    int local;
    if (cfg->codec_threads > 0)
        return cfg->codec_threads;
    local = local_ranks();
    return local > 0 ? apsmpi_pool_auto_threads(local, 8) : 1;
}

/* The codec and the communicator caches, and, only when APSMPI_ALGORITHM=ring is chosen, the
 * ring's sum op (algo/ring_sumop.h: the default makes none, so its failure cannot touch
 * rsag): on every rank or on none. If one rank cannot set them up, every rank passes every
 * call through (a rank passing through while the others compress would hang or truncate).
 * Collective. */
static void runtime_prepare_codec(apsmpi_runtime *rt, int rank)
{
    apsmpi_codec *codec =
        apsmpi_fault(APSMPI_FAULT_CODEC) ? NULL : apsmpi_codec_create_isa(&rt->cfg.format, rt->cfg.codec_isa);
    const char *failed = NULL;
    int ok, all_ok = 0, keyval = 0, ring = rt->cfg.algorithm == APSMPI_ALGORITHM_RING;

    if (codec == NULL)
        failed = "the codec";
    else if (ring && (apsmpi_fault(APSMPI_FAULT_SUMOP) || apsmpi_ring_sumop_create(codec) != MPI_SUCCESS))
        failed = "the ring's MPI reduction op";
    else if (rt->cfg.format.ladder && apsmpi_auto_init(&rt->cfg) != 0)
        failed = "the codecs of the rungs of auto";
    else if (apsmpi_fault(APSMPI_FAULT_KEYVAL) || apsmpi_private_comm_init() != MPI_SUCCESS)
        failed = "the attribute key of the private communicators";
    else if (apsmpi_comm_info_init() != MPI_SUCCESS) {
        failed = "the attribute key of the communicators' node layout";
        apsmpi_private_comm_finalize();
    } else {
        keyval = 1;
    }
    ok = failed == NULL;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok) {
        rt->codec = codec;
        /* whole slices: every packing group then lies inside one piece */
        rt->piece_elems = apsmpi_whole_slices(rt->cfg.chunk_size);
        rt->codec_threads = codec_threads(&rt->cfg);
        APSMPI_DEBUG("host codec on %d thread(s) per call piece", rt->codec_threads);
        /* a rank without it only goes without error feedback: nothing on the wire changes */
        if (rt->cfg.error_feedback && apsmpi_feedback_store_init(rt->cfg.feedback_max_bytes) != 0)
            APSMPI_ERROR("no memory for error feedback's residuals: this rank's calls go without it");
        return;
    }
    if (failed != NULL)
        APSMPI_ERROR("cannot set up %s for %s; every call of every rank passes through uncompressed", failed,
                     rt->cfg.format.name);
    else if (rank == 0)
        APSMPI_ERROR("a rank cannot set up the %s codec; every call of every rank passes through uncompressed",
                     rt->cfg.format.name);
    if (keyval) {
        apsmpi_private_comm_finalize();
        apsmpi_comm_info_finalize();
    }
    apsmpi_ring_sumop_free();
    apsmpi_auto_free();
    apsmpi_codec_free(codec);
}

/* apsmpi_runtime_after_init ran: MPI_Init reached apsmpi. */
static int started;

/* Where another PMPI tool hides apsmpi's entry points (preloaded before it: its MPI_<name>
 * is the process's, and it hands the call to PMPI_<name>, past apsmpi), the job is told in
 * one line: at MPI_Finalize where MPI_Init reached apsmpi but another call may not, and at
 * exit where MPI_Init did not (then nothing was compressed). */
static void say_if_hidden(int rank)
{
    char where[512];

    if (rank == 0 && apsmpi_next_calls_hidden(where, sizeof where))
        APSMPI_WARN("%s comes before libapsmpi.so's in this process: the calls that reach it first never reach "
                    "apsmpi (a tool preloaded before it); preload libapsmpi.so first",
                    where);
}

/* The rank the launcher gave this process (Open MPI, MPICH's Hydra, PMIx), or -1. */
static int launcher_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v != NULL)
            return atoi(v);
    }
    return -1;
}

__attribute__((destructor)) static void said_at_exit_if_not_started(void)
{
    char where[512];
    int initialized = 0, rank = launcher_rank();

    if (started || rank > 0 || PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized)
        return;
    if (!apsmpi_next_calls_hidden(where, sizeof where))
        snprintf(where, sizeof where, "another library's MPI_Init");
    fprintf(stderr,
            "apsmpi: MPI_Init never reached libapsmpi.so (%s comes before it: a tool preloaded before it); nothing "
            "was compressed: preload libapsmpi.so first\n",
            where);
}

/* An MPMD launch (several programs or app contexts on mpirun's line): apsmpi's MPI_Init makes
 * collectives on MPI_COMM_WORLD that ranks without the library do not make, and mpirun's -x
 * (Hydra's -env) applies to one context only. Said before those collectives, on the first
 * rank of each context (Open MPI says which and how many ranks each has; elsewhere, as with
 * MPICH, only MPI_APPNUM tells, and only ranks of a context after the first: each of those
 * says it), so that a job where a context lacks the library shows why MPI_Init fails. */
static void say_if_mpmd(int rank, int size)
{
    const char *procs = getenv("OMPI_APP_CTX_NUM_PROCS"), *firsts = getenv("OMPI_FIRST_RANKS");
    int *appnum = NULL, flag = 0, say;

    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag) != MPI_SUCCESS || !flag || appnum == NULL)
        return;
    if (procs == NULL ? *appnum == 0 : atoi(procs) >= size)
        return;
    say = firsts == NULL ? *appnum > 0 || rank == 0 : 0;
    for (const char *p = firsts; p != NULL && *p != '\0' && !say; p += strcspn(p, ", "), p += strspn(p, ", "))
        say = atoi(p) == rank;
    if (say)
        APSMPI_WARN("an MPMD job (app context %d): every context must preload libapsmpi.so with the same APSMPI_* "
                    "settings, or MPI_Init fails or hangs (mpirun -x and Hydra's -env apply to one context: give them "
                    "in each, or use apsmpirun)",
                    *appnum);
}

void apsmpi_runtime_after_init(void)
{
    apsmpi_runtime *rt = &apsmpi_rt;
    char err[512], line[1024];
    int rank, size, bad, first_bad, level;

    if (started++) /* an MPI whose init entry calls another one that apsmpi intercepts */
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    apsmpi_log_set_rank(rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    say_if_mpmd(rank, size);
    bad = apsmpi_config_load(&rt->cfg, process_getenv, err, sizeof err) == 0 &&
                  apsmpi_device_init(rt->cfg.device_plugin, err, sizeof err) == MPI_SUCCESS
              ? INT_MAX
              : rank;
    if (bad == INT_MAX && rt->cfg.test_node_of_rank && apsmpi_node_map_length(rt->cfg.test_node_of_rank) != size) {
        snprintf(err, sizeof err, "APSMPI_TEST_NODE_OF_RANK='%s' names %d ranks, not the %d of MPI_COMM_WORLD",
                 rt->cfg.test_node_of_rank, apsmpi_node_map_length(rt->cfg.test_node_of_rank), size);
        bad = rank;
    }
    PMPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    /* no rank may go on with a setting that is not valid on one of them, nor run silently in
     * another format than asked for: every rank stops, the first with a bad one says why */
    if (first_bad != INT_MAX)
        apsmpi_end_job(APSMPI_END_EVERY_RANK, MPI_COMM_WORLD, rank == first_bad, "%s", err);

    agree_on_settings(&rt->cfg, rank, size);

    apsmpi_log_set_level(rt->cfg.log_level);
    apsmpi_fault_arm(rt->cfg.test_fail, rank);
    apsmpi_config_describe(&rt->cfg, line, sizeof line);
    if (rt->cfg.compress)
        runtime_prepare_codec(rt, rank);
    /* MPI_COMM_WORLD's layout and duplicates, for its requests (state/comm_prepare.h): every
     * rank is in MPI_Init */
    apsmpi_comm_prepare(MPI_COMM_WORLD);
    if (rank == 0)
        APSMPI_INFO("loaded: %s", line);
    PMPI_Query_thread(&level);
    apsmpi_requests_init(level);
}

int apsmpi_Init(int *argc, char ***argv)
{
    int rc = APSMPI_NEXT(Init)(argc, argv);
    if (rc == MPI_SUCCESS)
        apsmpi_runtime_after_init();
    return rc;
}

int apsmpi_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = APSMPI_NEXT(Init_thread)(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        apsmpi_runtime_after_init();
    return rc;
}

void apsmpi_runtime_before_finalize(void)
{
    int rank;

    apsmpi_requests_finalize(); /* (before the statistics: they count the requests too) */
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    say_if_hidden(rank);
    if (apsmpi_rt.cfg.stats) {
        char line[1024];
        apsmpi_config_describe(&apsmpi_rt.cfg, line, sizeof line);
        apsmpi_stats_report(MPI_COMM_WORLD, line);
        if (apsmpi_rt.cfg.error_feedback)
            apsmpi_feedback_store_report(MPI_COMM_WORLD);
        if (apsmpi_rt.cfg.format.ladder && apsmpi_rt.codec != NULL)
            apsmpi_auto_report(MPI_COMM_WORLD, apsmpi_rt.cfg.error_budget);
    }
    apsmpi_feedback_store_free();
    apsmpi_ring_sumop_free();
    apsmpi_private_comm_finalize();
    apsmpi_comm_info_finalize();
    apsmpi_auto_free();
    apsmpi_pool_stop();
    apsmpi_codec_free(apsmpi_rt.codec);
    apsmpi_rt.codec = NULL;
}

int apsmpi_Finalize(void)
{
    apsmpi_runtime_before_finalize();
    return APSMPI_NEXT(Finalize)();
}
