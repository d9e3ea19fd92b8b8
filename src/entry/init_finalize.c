/* init_finalize.c: MPI_Init and MPI_Finalize: reads and checks the configuration on all ranks, sets up the runtime state, reports statistics. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "algo/ring_sumop.h"
#include "core/fault.h"
#include "core/log.h"
#include "device/device.h"
#include "entry/entry_points.h"
#include "core/node_map.h"
#include "state/comm_info.h"
#include "state/private_comm.h"
#include "state/runtime_state.h"
#include "state/stats.h"

/* The process environment, as the configuration loader reads it. */
static const char *process_getenv(const char *name) { return getenv(name); }

/* Ends the job on every rank, after rank `speaker` printed why: no rank may go on with
 * settings that differ from the others', or run silently in another format than asked for. */
static void stop_job(int rank, int speaker, const char *why)
{
    if (rank == speaker)
        fprintf(stderr, "apsmpi: %s\n", why);
    PMPI_Finalize();
    exit(1);
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
        /* whole slices of 64 elements: every packing group then lies inside one piece */
        rt->piece_elems = (rt->cfg.chunk_size + 63) / 64 * 64;
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
    apsmpi_codec_free(codec);
}

void apsmpi_runtime_after_init(void)
{
    static int started;
    apsmpi_runtime *rt = &apsmpi_rt;
    char err[512], line[1024];
    int rank, size, bad, first_bad;
    uint64_t digest[2], agreed[2];

    if (started++) /* an MPI whose init entry calls another one that apsmpi intercepts */
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    apsmpi_log_set_rank(rank);
    bad = apsmpi_config_load(&rt->cfg, process_getenv, err, sizeof err) == 0 &&
                  apsmpi_device_init(rt->cfg.device_plugin, err, sizeof err) == MPI_SUCCESS
              ? INT_MAX
              : rank;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (bad == INT_MAX && rt->cfg.test_node_of_rank && apsmpi_node_map_length(rt->cfg.test_node_of_rank) != size) {
        snprintf(err, sizeof err, "APSMPI_TEST_NODE_OF_RANK='%s' names %d ranks, not the %d of MPI_COMM_WORLD",
                 rt->cfg.test_node_of_rank, apsmpi_node_map_length(rt->cfg.test_node_of_rank), size);
        bad = rank;
    }
    PMPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad != INT_MAX)
        stop_job(rank, first_bad, err);

    digest[0] = apsmpi_config_digest(&rt->cfg);
    digest[1] = ~digest[0];
    PMPI_Allreduce(digest, agreed, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (agreed[0] != digest[0] || agreed[1] != digest[1])
        stop_job(rank, 0, "the APSMPI_* settings differ between ranks; set them alike on every rank (mpirun -x)");

    apsmpi_log_set_level(rt->cfg.log_level);
    apsmpi_fault_arm(rt->cfg.test_fail, rank);
    apsmpi_config_describe(&rt->cfg, line, sizeof line);
    if (rt->cfg.compress)
        runtime_prepare_codec(rt, rank);
    if (rank == 0)
        APSMPI_INFO("loaded: %s", line);
}

int apsmpi_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        apsmpi_runtime_after_init();
    return rc;
}

int apsmpi_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        apsmpi_runtime_after_init();
    return rc;
}

void apsmpi_runtime_before_finalize(void)
{
    if (apsmpi_rt.cfg.stats) {
        char line[1024];
        apsmpi_config_describe(&apsmpi_rt.cfg, line, sizeof line);
        apsmpi_stats_report(MPI_COMM_WORLD, line);
    }
    apsmpi_ring_sumop_free();
    apsmpi_private_comm_finalize();
    apsmpi_comm_info_finalize();
    apsmpi_codec_free(apsmpi_rt.codec);
    apsmpi_rt.codec = NULL;
}

int apsmpi_Finalize(void)
{
    apsmpi_runtime_before_finalize();
    return PMPI_Finalize();
}
