/* compressed_call.c: the steps every compressed reduction shares: agreeing on scales, encoding, decoding, counting. */
#include "call/compressed_call.h"

#include <stdio.h>
#include <string.h>

#include "call/device_steps.h"
#include "feedback/encodings.h"
#include "core/aps.h"
#include "core/codec_parallel.h"
#include "core/log.h"
#include "core/own_scales.h"
#include "core/packed_layout.h"
#include "state/auto_width.h"
#include "state/end_job.h"
#include "state/stats.h"

void apsmpi_call_begin(apsmpi_call *c, const apsmpi_runtime *rt, const apsmpi_memory *mem, const float *in, size_t n,
                       const void *out, MPI_Comm comm)
{
    *c = (apsmpi_call){.rt = rt,
                       .mem = mem,
                       .in = in,
                       .n = n,
                       .comm = comm,
                       .coll = comm,
                       .f = &rt->cfg.format,
                       .codec = rt->codec,
                       .rung = -1};
    /* an MX format scales each block of 32 itself, so the agreement is over one exponent for
     * the whole call, which only says whether any rank holds inf or NaN */
    c->block_len = rt->cfg.scaling == APSMPI_SCALING_BLOCK && !rt->cfg.format.mx ? rt->cfg.block_size : n;
    c->origin = (apsmpi_call_origin){.comm = comm, .count = n, .buf = in, .offset = 0};
    c->nblocks = apsmpi_block_count(n, c->block_len);
    PMPI_Comm_size(comm, &c->nranks);
    c->agree.addends = c->nranks;
    PMPI_Comm_rank(comm, &c->rank);
    c->rounding.stochastic = rt->cfg.stochastic;
    /* each rank draws its own stream, so that rounding errors of the ranks are independent */
    c->rounding.seed = rt->cfg.seed ^ ((uint64_t)(c->rank + 1) * 0x9e3779b97f4a7c15ull);
    c->rounding.call = rt->cfg.stochastic ? apsmpi_next_call_number() : 0;
    apsmpi_device_begin(c, out);
}

/* This rank's block exponents and working buffers; returns MPI_SUCCESS, or an MPI error
 * code if it lacks either (the agreement then goes without its exponents). */
static int prepare(apsmpi_call *c, int16_t *exps, size_t packed_size, size_t result_size)
{
    apsmpi_feedback_contribution_begin(c); /* a host input: c->in is input plus residual from here on */
    if (apsmpi_device_on_gpu(c)) {         /* page-locked host buffers, with their twins on the GPU */
        if (apsmpi_device_prepare(c, exps, packed_size, result_size) == MPI_SUCCESS)
            return MPI_SUCCESS;
    } else {
        apsmpi_block_exponents(c->in, c->n, c->block_len, exps);
        c->packed = apsmpi_memory_get(c->mem, APSMPI_SCRATCH_PACKED, packed_size);
        c->result = result_size ? apsmpi_memory_get(c->mem, APSMPI_SCRATCH_RESULT, result_size) : NULL;
        if (c->packed != NULL && (result_size == 0 || c->result != NULL))
            return MPI_SUCCESS;
    }
    for (size_t b = 0; b < c->nblocks; b++)
        exps[b] = APSMPI_EXP_ZERO;
    return MPI_ERR_NO_MEM;
}

/* auto's key of the call's bucket: error feedback's (without the role). */
static apsmpi_width_key width_key(const apsmpi_call *c)
{
    apsmpi_width_key k = {(uint64_t)(uintptr_t)c->origin.comm, c->origin.count, (uint64_t)(uintptr_t)c->origin.buf,
                          c->origin.offset};
    return k;
}

/* 1 when the call's width is auto's to choose. */
static int ladder(const apsmpi_call *c) { return c->rt->cfg.format.ladder && apsmpi_auto_store() != NULL; }

int apsmpi_call_agree_start(apsmpi_call *c, size_t packed_size, size_t result_size, int local_failed, MPI_Request *req)
{
    uint64_t t0 = apsmpi_now_ns();
    int16_t *exps;

    /* with auto, one entry more: the rung this rank proposes, the largest wins */
    c->agree.count = apsmpi_agreement_count(c->nblocks + (ladder(c) ? 1 : 0));
    if (c->agree.count < 0) /* every rank sees the same count: no reduction, fp32 (finish) */
        return MPI_SUCCESS;
    exps = c->agree.exps =
        apsmpi_fault(APSMPI_FAULT_AGREE_ALLOC)
            ? NULL
            : apsmpi_memory_get(c->mem, APSMPI_SCRATCH_EXPONENTS, (size_t)c->agree.count * sizeof *exps);
    if (exps == NULL) /* without them this rank cannot join the agreement the others wait in */
        apsmpi_end_job(APSMPI_END_THIS_RANK, c->comm, 1,
                       "out of memory for the %zu block exponents of a %zu-element call", c->nblocks, c->n);
    exps[c->nblocks] = prepare(c, exps, packed_size, result_size) != MPI_SUCCESS || local_failed;
    exps[c->nblocks + 1] = apsmpi_device_on_gpu(c);
    if (ladder(c)) {
        apsmpi_width_key k = width_key(c);
        exps[c->nblocks + 2] = (int16_t)apsmpi_width_proposal(apsmpi_auto_store(), &k);
    }
    c->codec_ns += apsmpi_now_ns() - t0;
    if (req == NULL)
        return PMPI_Allreduce(MPI_IN_PLACE, exps, c->agree.count, MPI_INT16_T, MPI_MAX, c->coll);
    return PMPI_Iallreduce(MPI_IN_PLACE, exps, c->agree.count, MPI_INT16_T, MPI_MAX, c->coll, req);
}

/* auto: adds elements [first, first + n) of the call's input `in` (c->in, or the host copy of a
 * GPU input), as its rung encodes them, to the measure of this rank's contribution: on an MX
 * ladder its blocks of 32; on an APS ladder against the agreed scales (the call's, or for an
 * FP32 call, the exponents the widest format would have been scaled by). */
static void measure_input(apsmpi_call *c, const float *in, const int16_t *scales, size_t first, size_t n,
                          const apsmpi_config *cfg)
{
    const apsmpi_ladder *l = apsmpi_auto_ladder();
    if (l->mx) {
        apsmpi_flush_depths(in + first, n, l, &c->measure[0]);
    } else if (c->rung == apsmpi_ladder_fp32(l)) {
        /* the agreed exponents, not yet scales: as the widest format takes them */
        const apsmpi_format *w = &l->format[apsmpi_ladder_first(l)];
        int16_t *s = c->agree.exps;
        if (cfg->scaling == APSMPI_SCALING_NONE) {
            apsmpi_flush_depths_scaled(in + first, n, first, NULL, c->block_len, w->emax, l, &c->measure[0]);
        } else {
            apsmpi_exponents_to_scales(s, c->nblocks, w, c->agree.addends);
            apsmpi_flush_depths_scaled(in + first, n, first, s, c->block_len, w->emax, l, &c->measure[0]);
        }
    } else {
        apsmpi_flush_depths_scaled(in + first, n, first, scales, c->block_len, c->f->emax, l, &c->measure[0]);
    }
    c->measured = 1;
}

int apsmpi_call_agree_finish(apsmpi_call *c, enum apsmpi_path *path)
{
    const apsmpi_config *cfg = &c->rt->cfg;
    int16_t *exps = c->agree.exps;
    int rc;

    *path = APSMPI_PATH_FP32;
    if (c->agree.count < 0) {
        APSMPI_WARN("a %zu-element call has %zu blocks, too many to agree on in one reduction: sent in fp32", c->n,
                    c->nblocks);
        apsmpi_stats_add(APSMPI_STAT_FP32_BLOCKS, 1);
        return MPI_SUCCESS;
    }
    rc = apsmpi_call_injected_error(c, APSMPI_FAULT_AGREE);
    if (rc != MPI_SUCCESS)
        return rc;
    apsmpi_device_agreed(c, exps[c->nblocks + 1] != 0);
    if (exps[c->nblocks] != 0) {
        APSMPI_WARN("a rank lacks memory or its GPU for a %zu-element call: sent in fp32", c->n);
        apsmpi_stats_add(APSMPI_STAT_FP32_LACKING, 1);
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
    if (ladder(c)) {
        /* the agreed rung: any rank's raise is every rank's, GPU buffers' alike on an MX ladder
         * (their kernels measure as they encode: device_steps.c); on an APS ladder GPU buffers
         * go on the widest format or FP32 (the kernels measure no APS encoding) */
        const apsmpi_ladder *l = apsmpi_auto_ladder();
        int rung = exps[c->nblocks + 2], fp32 = apsmpi_ladder_fp32(l);
        rung = rung < 0 ? 0 : rung >= fp32 ? fp32 : rung;
        if (exps[c->nblocks + 1] != 0 && !l->mx && rung < apsmpi_ladder_first(l))
            rung = apsmpi_ladder_first(l);
        c->rung = rung;
        if (rung == fp32) {
            /* sent as it is: its measure is its histogram, against the scales the widest format
             * would have taken on an APS ladder (a GPU input's is taken from the host copy that
             * the fp32 path sends: apsmpi_call_measure_fp32) */
            if (!apsmpi_device_input(c))
                apsmpi_call_measure_fp32(c, c->in);
            return MPI_SUCCESS;
        }
        c->codec = apsmpi_auto_codec(rung);
        c->f = apsmpi_codec_format(c->codec);
    }
    if (cfg->scaling == APSMPI_SCALING_NONE)
        exps[0] = 0;
    else
        apsmpi_exponents_to_scales(exps, c->nblocks, c->f, c->agree.addends);
    c->agree.scales = exps;
    *path = APSMPI_PATH_COMPRESS;
    return MPI_SUCCESS;
}

void apsmpi_call_measure_fp32(apsmpi_call *c, const float *in)
{
    if (c->rung < 0 || c->rung != apsmpi_ladder_fp32(apsmpi_auto_ladder()) || c->measured)
        return;
    measure_input(c, in, c->agree.exps, 0, c->n, &c->rt->cfg);
}

static apsmpi_scales call_scales(const apsmpi_call *c)
{
    apsmpi_scales sc = {c->agree.scales, c->block_len};
    return sc;
}

void apsmpi_call_start(apsmpi_call *c, const apsmpi_segments *segs)
{
    if (apsmpi_device_input(c))
        apsmpi_device_start_encode(c, segs);
}

/* Whether auto's measure of this call's encodings is the MX encoder's own (a call on an MX
 * ladder's MX rung; apsmpi_encode_measured, exact over every block), not a separate pass. */
static int measured_in_encode(const apsmpi_call *c) { return c->rung >= 0 && c->f->mx && apsmpi_auto_ladder()->mx; }

/* Encodes x[0..n) (first: its index, for the random streams) measuring it into m; returns the
 * flushed values. */
static uint64_t encode_measured(apsmpi_call *c, const float *x, size_t n, size_t first, apsmpi_rounding r, void *out,
                                apsmpi_flush_measure *m)
{
    apsmpi_mx_measure mm;
    apsmpi_mx_measure_start(&mm, apsmpi_auto_ladder());
    apsmpi_encode_threads_measured(c->codec, c->rt->codec_threads, x, n, first, r, out, &mm);
    apsmpi_flush_measure_add_mx(m, n, &mm);
    c->measured = 1;
    return mm.count[APSMPI_COUNT_FLUSHED];
}

void apsmpi_call_encode(apsmpi_call *c, size_t first, size_t n, void *out)
{
    uint64_t t0 = apsmpi_now_ns(), flushed = 0;
    int stats = c->rt->cfg.stats;

    if (apsmpi_device_input(c)) {
        apsmpi_device_wait_encoded(c, first, n);
        c->codec_ns += apsmpi_now_ns() - t0;
        return;
    }
    if (measured_in_encode(c)) {
        flushed = encode_measured(c, c->in + first, n, first, c->rounding, out, &c->measure[0]);
    } else {
        apsmpi_encode_threads(c->codec, c->rt->codec_threads, c->in + first, n, first, call_scales(c), c->rounding, out,
                              stats || c->rung >= 0 ? &flushed : NULL);
        if (c->rung >= 0) {
            measure_input(c, c->in, c->agree.scales, first, n, &c->rt->cfg);
            c->measure[0].flushed += flushed;
        }
    }
    apsmpi_feedback_contribution_taken(c, first, n, out, call_scales(c));
    if (stats) {
        apsmpi_stats_add(APSMPI_STAT_VALUES_NONZERO, apsmpi_count_nonzero(c->in + first, n));
        apsmpi_stats_add(APSMPI_STAT_VALUES_FLUSHED, flushed);
    }
    c->codec_ns += apsmpi_now_ns() - t0;
}

void apsmpi_call_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out)
{
    uint64_t t0 = apsmpi_now_ns();
    if (apsmpi_device_output(c))
        apsmpi_device_decode(c, in, first, n, out);
    else
        apsmpi_decode_threads(c->codec, c->rt->codec_threads, in, n, first, call_scales(c), out);
    c->codec_ns += apsmpi_now_ns() - t0;
}

/* Encodes the fp32 sum[0..n), elements [first, first+n) of the buffer, as a result message at
 * msg: per-block scales from the values themselves, then the codes, with a random stream of
 * the piece's own keyed by `stream`; with error feedback, the residual of `role` added first
 * (whose scales are then the sum's own) and replaced by what the encoding took. */
static void encode_own_scaled(apsmpi_call *c, const float *sum, size_t n, size_t first, enum apsmpi_residual_role role,
                              uint64_t stream, void *msg)
{
    const apsmpi_format *f = c->f;
    size_t offset = first % c->block_len, scale_bytes = apsmpi_result_scale_bytes(f, n, c->block_len);
    int16_t *scales = msg;
    apsmpi_rounding rounding = c->rounding;
    apsmpi_scales sc = {scales, c->block_len};
    apsmpi_sum_feedback fb;
    uint64_t t0 = apsmpi_now_ns(), flushed = 0;
    const float *x = apsmpi_feedback_sum_begin(c, sum, n, first, role, &fb);

    memset(scales, 0, scale_bytes);
    /* (an MX format's codes carry scales of their own blocks: none in front) */
    if (c->rt->cfg.scaling != APSMPI_SCALING_NONE && !f->mx)
        apsmpi_own_scales(x, n, offset, c->block_len, f, scales);
    /* the codec keys random streams by element index, here counted from the piece's block:
     * a seed of the piece's own keeps pieces independent */
    rounding.seed ^= ((uint64_t)first + 1) * stream;
    if (measured_in_encode(c)) {
        encode_measured(c, x, n, offset, rounding, (char *)msg + scale_bytes, &c->measure[1]);
    } else {
        apsmpi_encode_threads(c->codec, c->rt->codec_threads, x, n, offset, sc, rounding, (char *)msg + scale_bytes,
                              c->rung >= 0 ? &flushed : NULL);
        if (c->rung >= 0) { /* an APS ladder's rung: a separate pass against the sum's own scales */
            apsmpi_flush_depths_scaled(x, n, offset, c->rt->cfg.scaling != APSMPI_SCALING_NONE ? scales : NULL,
                                       c->block_len, f->emax, apsmpi_auto_ladder(), &c->measure[1]);
            c->measure[1].flushed += flushed;
            c->measured = 1;
        }
    }
    apsmpi_feedback_sum_taken(c, &fb, (char *)msg + scale_bytes, n, offset, sc);
    c->codec_ns += apsmpi_now_ns() - t0;
}

void apsmpi_call_encode_sum(apsmpi_call *c, const float *sum, size_t n, size_t first, void *msg)
{
    encode_own_scaled(c, sum, n, first, APSMPI_RESIDUAL_SUM, 0xbf58476d1ce4e5b9ull, msg);
}

void apsmpi_call_encode_partial(apsmpi_call *c, const float *sum, size_t n, size_t first, void *msg)
{
    encode_own_scaled(c, sum, n, first, APSMPI_RESIDUAL_PARTIAL, 0xd6e8feb86659fd93ull, msg);
}

void apsmpi_call_add_contribution(apsmpi_call *c, const void *in, size_t first, size_t n, float *dst, int set,
                                  float *tmp)
{
    uint64_t t0 = apsmpi_now_ns();

    apsmpi_decode_add_threads(c->codec, c->rt->codec_threads, in, n, first, call_scales(c), dst, set, tmp);
    c->codec_ns += apsmpi_now_ns() - t0;
}

void apsmpi_call_add_result(apsmpi_call *c, const void *msg, size_t first, size_t n, float *dst, int set, float *tmp)
{
    const void *codes = (const char *)msg + apsmpi_result_scale_bytes(c->f, n, c->block_len);
    uint64_t t0 = apsmpi_now_ns();

    c->scale_bytes += (uint64_t)((const char *)codes - (const char *)msg);
    apsmpi_decode_add_threads(c->codec, c->rt->codec_threads, codes, n, first % c->block_len,
                              (apsmpi_scales){msg, c->block_len}, dst, set, tmp);
    c->codec_ns += apsmpi_now_ns() - t0;
}

void apsmpi_call_decode_result(apsmpi_call *c, const void *msg, size_t msg_bytes, size_t first, size_t n, float *out)
{
    const void *codes = (const char *)msg + apsmpi_result_scale_bytes(c->f, n, c->block_len);
    apsmpi_scales sc = {msg, c->block_len};
    uint64_t t0 = apsmpi_now_ns();

    c->scale_bytes += (uint64_t)((const char *)codes - (const char *)msg);
    if (apsmpi_device_output(c))
        apsmpi_device_decode_slot(c, msg, msg_bytes, codes, first % c->block_len, n, out);
    else
        apsmpi_decode_threads(c->codec, c->rt->codec_threads, codes, n, first % c->block_len, sc, out);
    c->codec_ns += apsmpi_now_ns() - t0;
}

int apsmpi_call_injected_error(apsmpi_call *c, enum apsmpi_fault_site site)
{
    if (!apsmpi_fault(site))
        return MPI_SUCCESS;
    PMPI_Comm_call_errhandler(c->comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}

/* Finishes the GPU state of a call. A GPU error on any rank (agreed when any rank's buffers
 * are on a GPU, since the others have summed that rank's bad data) overrides rc and goes to
 * comm's error handler (by default fatal) on every rank. */
static int end_device(apsmpi_call *c, int rc)
{
    uint64_t t0 = apsmpi_now_ns();
    int drc = apsmpi_device_end(c), local_bad = drc != MPI_SUCCESS, any_bad = local_bad, arc;

    c->codec_ns += apsmpi_now_ns() - t0;
    if (apsmpi_device_any(c) &&
        (arc = PMPI_Allreduce(&local_bad, &any_bad, 1, MPI_INT, MPI_MAX, c->coll)) != MPI_SUCCESS)
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

/* The integer counts of measure m as a debug line shows them (tests compare GPU and host
 * buckets by them): elements, counted, non-zero, flushed, deep[r] for each rung below FP32. */
static void measure_text(const apsmpi_flush_measure *m, char *text, size_t len)
{
    int at = snprintf(text, len, "%llu %llu %llu %llu deep", (unsigned long long)m->elems,
                      (unsigned long long)m->counted, (unsigned long long)m->nonzero, (unsigned long long)m->flushed);
    for (int r = 0; r < apsmpi_ladder_fp32(apsmpi_auto_ladder()) && at > 0 && (size_t)at < len; r++)
        at += snprintf(text + at, len - (size_t)at, " %llu", (unsigned long long)m->deep[r]);
}

/* auto, after a call that went on its agreed rung with result rc: the bucket's next width
 * decided from this rank's measures (their histogram predicts every rung), the call counted. */
static void auto_end(apsmpi_call *c, int rc)
{
    double error = 0, budget = c->rt->cfg.error_budget;
    int move = APSMPI_WIDTH_HELD, measured = rc == MPI_SUCCESS && c->measured;
    uint64_t in = c->n * sizeof(float);

    if (c->rung < 0 || rc != MPI_SUCCESS)
        return;
    if (measured) {
        apsmpi_width_key k = width_key(c);
        move =
            apsmpi_width_after_call(apsmpi_auto_store(), &k, c->rung, c->measure, 2, budget, APSMPI_WIDTH_HOLD, &error);
    }
    apsmpi_auto_count(c->rung, in,
                      c->rung == apsmpi_ladder_fp32(apsmpi_auto_ladder()) ? in : apsmpi_packed_bytes(c->f, c->n),
                      measured, error, error > budget, move);
    APSMPI_DEBUG("auto: a %zu-element call on %s, flushed %.4f%%: this rank's proposal %s", c->n,
                 apsmpi_ladder_name(apsmpi_auto_ladder(), c->rung), 100 * error,
                 move == APSMPI_WIDTH_RAISED    ? "raised"
                 : move == APSMPI_WIDTH_LOWERED ? "lowered"
                                                : "kept");
    if (measured) {
        char mine[160], sums[160];
        measure_text(&c->measure[0], mine, sizeof mine);
        measure_text(&c->measure[1], sums, sizeof sums);
        APSMPI_DEBUG("auto: measured (elements counted non-zero flushed, deep per rung): contribution %s; sums %s",
                     mine, sums);
    }
}

int apsmpi_call_end_fp32(apsmpi_call *c, int rc)
{
    apsmpi_feedback_contribution_end(c, 0); /* nothing encoded was sent: the residual is dropped */
    rc = end_device(c, rc);
    auto_end(c, rc);
    return rc;
}

int apsmpi_call_end(apsmpi_call *c, int rc)
{
    rc = end_device(c, rc);
    apsmpi_feedback_contribution_end(c, rc == MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        apsmpi_stats_add(APSMPI_STAT_CALLS_COMPRESSED, 1);
        apsmpi_stats_add(APSMPI_STAT_BYTES_IN, c->n * sizeof(float));
        apsmpi_stats_add(APSMPI_STAT_BYTES_WIRE, apsmpi_packed_bytes(c->f, c->n));
        apsmpi_stats_add(APSMPI_STAT_BYTES_SCALES, c->scale_bytes);
        apsmpi_stats_add(APSMPI_STAT_BYTES_AGREEMENT, (uint64_t)c->agree.count * sizeof *c->agree.exps);
        if (c->request)
            apsmpi_stats_add(APSMPI_STAT_CALLS_REQUESTS, 1);
    }
    auto_end(c, rc);
    apsmpi_stats_add(APSMPI_STAT_CODEC_NS, c->codec_ns);
    return rc;
}
