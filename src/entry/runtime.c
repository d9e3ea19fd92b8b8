/* runtime.c: MPI_Init and MPI_Finalize: reads and checks the configuration on all ranks, reports statistics. */
#include "entry/runtime.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../wrappers/mpi_signatures.h"
#include "device/device.h"
#include "core/log.h"
#include "algo/ring.h"
#include "core/node_map.h"
#include "state/comm_info.h"
#include "state/stats.h"
#include "state/sumop.h"

apsmpi_runtime apsmpi_rt;
static _Atomic uint64_t call_number;

uint64_t apsmpi_next_call_number(void) { return atomic_fetch_add_explicit(&call_number, 1, memory_order_relaxed); }

static const char *real_getenv(const char *name) { return getenv(name); }

/* Ends the job on every rank, after rank `speaker` printed why: no rank may go on with
 * settings that differ from the others', or run silently in another format than asked for. */
static void stop_job(int rank, int speaker, const char *why)
{
    if (rank == speaker)
        fprintf(stderr, "apsmpi: %s\n", why);
    PMPI_Finalize();
    exit(1);
}

/* Reads APSMPI_* on every rank, agrees that all ranks read valid and equal settings, and
 * prepares the codec and the MPI op. Runs right after the MPI library's own init. */
static void runtime_start(void)
{
    char err[512], line[256];
    int rank, size, bad, first_bad;
    uint64_t digest[2], agreed[2];

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    apsmpi_log_set_rank(rank);
    bad = apsmpi_config_load(&apsmpi_rt.cfg, real_getenv, err, sizeof err) == 0 &&
                  apsmpi_device_init(err, sizeof err) == 0
              ? INT_MAX
              : rank;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (bad == INT_MAX && apsmpi_rt.cfg.test_node_of_rank &&
        apsmpi_node_map_length(apsmpi_rt.cfg.test_node_of_rank) < size) {
        snprintf(err, sizeof err, "APSMPI_TEST_NODE_OF_RANK='%s' names fewer than the %d ranks of MPI_COMM_WORLD",
                 apsmpi_rt.cfg.test_node_of_rank, size);
        bad = rank;
    }
    PMPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad != INT_MAX)
        stop_job(rank, first_bad, err);

    digest[0] = apsmpi_config_digest(&apsmpi_rt.cfg);
    digest[1] = ~digest[0];
    PMPI_Allreduce(digest, agreed, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (agreed[0] != digest[0] || agreed[1] != digest[1])
        stop_job(rank, 0, "the APSMPI_* settings differ between ranks; set them alike on every rank (mpirun -x)");

    apsmpi_log_set_level(apsmpi_rt.cfg.log_level);
    apsmpi_config_describe(&apsmpi_rt.cfg, line, sizeof line);
    if (apsmpi_rt.cfg.compress) {
        apsmpi_codec *codec = apsmpi_codec_create(&apsmpi_rt.cfg.format);
        if (codec == NULL || apsmpi_sumop_get(codec, &apsmpi_rt.sum_op, &apsmpi_rt.group_type) != MPI_SUCCESS) {
            APSMPI_ERROR("cannot set up the %s codec; every call passes through uncompressed", apsmpi_rt.cfg.format.name);
            apsmpi_codec_free(codec);
            return;
        }
        if (apsmpi_ring_init() != MPI_SUCCESS || apsmpi_comm_info_init() != MPI_SUCCESS) {
            APSMPI_ERROR("cannot set up the ring; every call passes through uncompressed");
            apsmpi_codec_free(codec);
            return;
        }
        apsmpi_rt.codec = codec;
        /* whole slices of 64 elements: every packing group then lies inside one chunk */
        apsmpi_rt.chunk_elems = (apsmpi_rt.cfg.chunk_size + 63) / 64 * 64;
    }
    if (rank == 0)
        APSMPI_INFO("loaded: %s", line);
}

APSMPI_IMPL(Init)
{
    int rc = APSMPI_PASS(Init);
    if (rc == MPI_SUCCESS)
        runtime_start();
    return rc;
}

APSMPI_IMPL(Init_thread)
{
    int rc = APSMPI_PASS(Init_thread);
    if (rc == MPI_SUCCESS)
        runtime_start();
    return rc;
}

APSMPI_IMPL(Finalize)
{
    if (apsmpi_rt.cfg.stats) {
        char line[256];
        apsmpi_config_describe(&apsmpi_rt.cfg, line, sizeof line);
        apsmpi_stats_report(MPI_COMM_WORLD, line);
    }
    apsmpi_sumop_free_all();
    apsmpi_ring_finalize();
    apsmpi_comm_info_finalize();
    apsmpi_codec_free(apsmpi_rt.codec);
    apsmpi_rt.codec = NULL;
    return APSMPI_PASS(Finalize);
}
