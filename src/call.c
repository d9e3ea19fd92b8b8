/* call.c: the steps every compressed reduction shares: agreeing on scales, encoding, decoding, counting. */
#include "call.h"

#include "aps.h"
#include "log.h"
#include "runtime.h"
#include "scratch.h"
#include "stats.h"

size_t apsmpi_packed_bytes(size_t n)
{
    const apsmpi_format *f = &apsmpi_rt.cfg.format;
    return apsmpi_groups_for(f, n) * apsmpi_group_bytes(f);
}

void apsmpi_call_begin(apsmpi_call *c, const float *in, size_t n, MPI_Comm comm)
{
    *c = (apsmpi_call){.in = in, .n = n};
    PMPI_Comm_size(comm, &c->nranks);
    PMPI_Comm_rank(comm, &c->rank);
    c->rounding.stochastic = apsmpi_rt.cfg.stochastic;
    /* each rank draws its own stream, so that rounding errors of the ranks are independent */
    c->rounding.seed = apsmpi_rt.cfg.seed ^ ((uint64_t)(c->rank + 1) * 0x9e3779b97f4a7c15ull);
    c->rounding.call = apsmpi_rt.cfg.stochastic ? apsmpi_next_call_number() : 0;
}

int apsmpi_call_agree(apsmpi_call *c, MPI_Comm comm, size_t packed_size, size_t result_size, int local_failed)
{
    const apsmpi_config *cfg = &apsmpi_rt.cfg;
    uint64_t t0 = apsmpi_now_ns();
    int16_t *exps;
    int rc;

    c->block_len = cfg->scaling == APSMPI_SCALING_BLOCK ? cfg->block_size : c->n;
    c->nblocks = apsmpi_block_count(c->n, c->block_len);
    exps = apsmpi_scratch(APSMPI_SCRATCH_EXPONENTS, (c->nblocks + 1) * sizeof *exps);
    if (exps == NULL) {
        APSMPI_ERROR("out of memory for %zu block exponents", c->nblocks);
        PMPI_Abort(comm, MPI_ERR_NO_MEM);
        return -MPI_ERR_NO_MEM;
    }
    apsmpi_block_exponents(c->in, c->n, c->block_len, exps);
    c->packed = apsmpi_scratch(APSMPI_SCRATCH_PACKED, packed_size);
    c->result = result_size ? apsmpi_scratch(APSMPI_SCRATCH_RESULT, result_size) : NULL;
    exps[c->nblocks] = local_failed || c->packed == NULL || (result_size && c->result == NULL);
    c->codec_ns += apsmpi_now_ns() - t0;

    rc = PMPI_Allreduce(MPI_IN_PLACE, exps, (int)c->nblocks + 1, MPI_INT16_T, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return -rc;
    if (exps[c->nblocks] != 0) {
        APSMPI_WARN("a rank is out of memory for a %zu-element call: sent in fp32", c->n);
        return APSMPI_PATH_FP32;
    }
    if (apsmpi_any_nonfinite(exps, c->nblocks)) {
        apsmpi_stats_add(APSMPI_STAT_CALLS_NONFINITE, 1);
        return APSMPI_PATH_FP32;
    }
    if (cfg->scaling == APSMPI_SCALING_NONE)
        exps[0] = 0;
    else
        apsmpi_exponents_to_scales(exps, c->nblocks, &cfg->format, c->nranks);
    c->scales = exps;
    return APSMPI_PATH_COMPRESS;
}

static apsmpi_scales call_scales(const apsmpi_call *c)
{
    apsmpi_scales sc = {c->scales, c->block_len};
    return sc;
}

void apsmpi_call_encode(apsmpi_call *c, size_t first, size_t n, void *out)
{
    uint64_t t0 = apsmpi_now_ns(), flushed = 0;
    int stats = apsmpi_rt.cfg.stats;

    apsmpi_encode(apsmpi_rt.codec, c->in + first, n, first, call_scales(c), c->rounding, out,
                  stats ? &flushed : NULL);
    if (stats) {
        apsmpi_stats_add(APSMPI_STAT_VALUES_NONZERO, apsmpi_count_nonzero(c->in + first, n));
        apsmpi_stats_add(APSMPI_STAT_VALUES_FLUSHED, flushed);
    }
    c->codec_ns += apsmpi_now_ns() - t0;
}

void apsmpi_call_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out)
{
    uint64_t t0 = apsmpi_now_ns();
    apsmpi_decode(apsmpi_rt.codec, in, n, first, call_scales(c), out);
    c->codec_ns += apsmpi_now_ns() - t0;
}

int apsmpi_call_end(apsmpi_call *c, int rc)
{
    if (rc == MPI_SUCCESS) {
        apsmpi_stats_add(APSMPI_STAT_CALLS_COMPRESSED, 1);
        apsmpi_stats_add(APSMPI_STAT_BYTES_IN, c->n * sizeof(float));
        apsmpi_stats_add(APSMPI_STAT_BYTES_WIRE, apsmpi_packed_bytes(c->n));
    }
    apsmpi_stats_add(APSMPI_STAT_CODEC_NS, c->codec_ns);
    return rc;
}
