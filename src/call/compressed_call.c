/* compressed_call.c: the steps every compressed reduction shares: agreeing on scales, encoding, decoding, counting. */
#include "call/compressed_call.h"

#include "core/aps.h"
#include "call/device_steps.h"
#include "core/log.h"
#include "core/packed_layout.h"
#include "state/end_job.h"
#include "state/scratch.h"
#include "state/stats.h"

void apsmpi_call_begin(apsmpi_call *c, const apsmpi_runtime *rt, const float *in, size_t n, const void *out,
                       MPI_Comm comm)
{
    *c = (apsmpi_call){.rt = rt, .in = in, .n = n, .comm = comm};
    c->block_len = rt->cfg.scaling == APSMPI_SCALING_BLOCK ? rt->cfg.block_size : n;
    c->nblocks = apsmpi_block_count(n, c->block_len);
    PMPI_Comm_size(comm, &c->nranks);
    c->addends = c->nranks;
    PMPI_Comm_rank(comm, &c->rank);
    c->rounding.stochastic = rt->cfg.stochastic;
    /* each rank draws its own stream, so that rounding errors of the ranks are independent */
    c->rounding.seed = rt->cfg.seed ^ ((uint64_t)(c->rank + 1) * 0x9e3779b97f4a7c15ull);
    c->rounding.call = rt->cfg.stochastic ? apsmpi_next_call_number() : 0;
    apsmpi_device_begin(c, out);
}

/* This rank's block exponents and working buffers; returns MPI_SUCCESS, or an MPI error
 * code if it lacks either (the exponents then take no part in the agreement). */
static int prepare(apsmpi_call *c, int16_t *exps, size_t packed_size, size_t result_size)
{
    if (c->dev_failed)
        goto failed;
    if (c->in_dev) {
        if (apsmpi_device_exponents(c, exps) != MPI_SUCCESS)
            goto failed;
    } else {
        apsmpi_block_exponents(c->in, c->n, c->block_len, exps);
    }
    if (c->dev) { /* page-locked host buffers, with their twins on the GPU */
        if (apsmpi_device_buffers(c, packed_size, result_size) != MPI_SUCCESS)
            goto failed;
        return MPI_SUCCESS;
    }
    c->packed = apsmpi_scratch(APSMPI_SCRATCH_PACKED, packed_size);
    c->result = result_size ? apsmpi_scratch(APSMPI_SCRATCH_RESULT, result_size) : NULL;
    if (c->packed != NULL && (result_size == 0 || c->result != NULL))
        return MPI_SUCCESS;
failed:
    for (size_t b = 0; b < c->nblocks; b++)
        exps[b] = APSMPI_EXP_ZERO;
    return MPI_ERR_NO_MEM;
}

int apsmpi_call_agree(apsmpi_call *c, size_t packed_size, size_t result_size, int local_failed, enum apsmpi_path *path)
{
    const apsmpi_config *cfg = &c->rt->cfg;
    uint64_t t0 = apsmpi_now_ns();
    int16_t *exps;
    int rc, count;

    count = apsmpi_agreement_count(c->nblocks);
    if (count < 0) {
        APSMPI_WARN("a %zu-element call has %zu blocks, too many to agree on in one reduction: sent in fp32", c->n,
                    c->nblocks);
        *path = APSMPI_PATH_FP32;
        return MPI_SUCCESS;
    }
    exps = apsmpi_fault(APSMPI_FAULT_AGREE_ALLOC)
               ? NULL
               : apsmpi_scratch(APSMPI_SCRATCH_EXPONENTS, (size_t)count * sizeof *exps);
    if (exps == NULL) /* without them this rank cannot take part in the agreement the others wait in */
        apsmpi_end_job(APSMPI_END_THIS_RANK, c->comm, 1,
                       "out of memory for the %zu block exponents of a %zu-element call", c->nblocks, c->n);
    exps[c->nblocks] = prepare(c, exps, packed_size, result_size) != MPI_SUCCESS || local_failed;
    exps[c->nblocks + 1] = c->dev != NULL || c->dev_failed;
    c->codec_ns += apsmpi_now_ns() - t0;

    rc = PMPI_Allreduce(MPI_IN_PLACE, exps, count, MPI_INT16_T, MPI_MAX, c->comm);
    if (rc == MPI_SUCCESS)
        rc = apsmpi_call_injected_error(c, APSMPI_FAULT_AGREE);
    if (rc != MPI_SUCCESS)
        return rc;
    c->any_dev = exps[c->nblocks + 1] != 0;
    *path = APSMPI_PATH_FP32;
    if (exps[c->nblocks] != 0) {
        APSMPI_WARN("a rank lacks memory or its GPU for a %zu-element call: sent in fp32", c->n);
        return MPI_SUCCESS;
    }
    switch (apsmpi_fp32_reason(exps, c->nblocks, c->nranks)) {
    case APSMPI_FP32_NONFINITE:
        apsmpi_stats_add(APSMPI_STAT_CALLS_NONFINITE, 1);
        return MPI_SUCCESS;
    case APSMPI_FP32_NEAR_FLT_MAX:
        apsmpi_stats_add(APSMPI_STAT_CALLS_NEAR_FLT_MAX, 1);
        return MPI_SUCCESS;
    case APSMPI_FP32_NO:
        break;
    }
    if (cfg->scaling == APSMPI_SCALING_NONE)
        exps[0] = 0;
    else
        apsmpi_exponents_to_scales(exps, c->nblocks, &cfg->format, c->addends);
    c->scales = exps;
    *path = APSMPI_PATH_COMPRESS;
    return MPI_SUCCESS;
}

static apsmpi_scales call_scales(const apsmpi_call *c)
{
    apsmpi_scales sc = {c->scales, c->block_len};
    return sc;
}

void apsmpi_call_start(apsmpi_call *c, const apsmpi_segments *segs)
{
    if (c->in_dev)
        apsmpi_device_start_encode(c, segs);
}

void apsmpi_call_encode(apsmpi_call *c, size_t first, size_t n, void *out)
{
    uint64_t t0 = apsmpi_now_ns(), flushed = 0;
    int stats = c->rt->cfg.stats;

    if (c->in_dev) {
        apsmpi_device_wait_encoded(c, first, n);
        c->codec_ns += apsmpi_now_ns() - t0;
        return;
    }
    apsmpi_encode(c->rt->codec, c->in + first, n, first, call_scales(c), c->rounding, out, stats ? &flushed : NULL);
    if (stats) {
        apsmpi_stats_add(APSMPI_STAT_VALUES_NONZERO, apsmpi_count_nonzero(c->in + first, n));
        apsmpi_stats_add(APSMPI_STAT_VALUES_FLUSHED, flushed);
    }
    c->codec_ns += apsmpi_now_ns() - t0;
}

void apsmpi_call_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out)
{
    uint64_t t0 = apsmpi_now_ns();
    if (c->out_dev)
        apsmpi_device_decode(c, in, first, n, out);
    else
        apsmpi_decode(c->rt->codec, in, n, first, call_scales(c), out);
    c->codec_ns += apsmpi_now_ns() - t0;
}

int apsmpi_call_injected_error(apsmpi_call *c, enum apsmpi_fault_site site)
{
    if (!apsmpi_fault(site))
        return MPI_SUCCESS;
    PMPI_Comm_call_errhandler(c->comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}

/* Finishes the GPU part of a call. A GPU error on any rank (agreed when any rank's buffers
 * are on a GPU, since the others have summed that rank's bad data) overrides rc and goes to
 * comm's error handler (by default fatal) on every rank. */
static int end_device(apsmpi_call *c, int rc)
{
    uint64_t t0 = apsmpi_now_ns();
    int drc = apsmpi_device_end(c), local_bad = drc != MPI_SUCCESS, any_bad = local_bad, arc;

    c->codec_ns += apsmpi_now_ns() - t0;
    if (c->any_dev && (arc = PMPI_Allreduce(&local_bad, &any_bad, 1, MPI_INT, MPI_MAX, c->comm)) != MPI_SUCCESS)
        return arc; /* MPI's own error, already through the handler */
    if (!any_bad)
        return rc;
    if (!local_bad) {
        APSMPI_ERROR("a GPU operation of another rank failed in this %zu-element call: its result is not valid", c->n);
        drc = MPI_ERR_OTHER;
    }
    PMPI_Comm_call_errhandler(c->comm, drc);
    return drc;
}

int apsmpi_call_end_fp32(apsmpi_call *c, int rc) { return end_device(c, rc); }

int apsmpi_call_end(apsmpi_call *c, int rc)
{
    rc = end_device(c, rc);
    if (rc == MPI_SUCCESS) {
        apsmpi_stats_add(APSMPI_STAT_CALLS_COMPRESSED, 1);
        apsmpi_stats_add(APSMPI_STAT_BYTES_IN, c->n * sizeof(float));
        apsmpi_stats_add(APSMPI_STAT_BYTES_WIRE, apsmpi_packed_bytes(&c->rt->cfg.format, c->n));
    }
    apsmpi_stats_add(APSMPI_STAT_CODEC_NS, c->codec_ns);
    return rc;
}
