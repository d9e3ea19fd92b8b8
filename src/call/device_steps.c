/* device_steps.c: a compressed call on GPU buffers: exponents and encoding on the GPU in stages, copies, decoding on the GPU. */
#include "call/device_steps.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "core/aps.h"
#include "core/fault.h"
#include "core/flush_depth.h"
#include "core/log.h"
#include "core/packed_layout.h"
#include "core/width_controller.h"
#include "state/auto_width.h"
#include "state/scratch.h"
#include "state/stats.h"

/* Elements per encoding stage: 4 MiB of floats, a multiple of every packing group. */
enum { STAGE_ELEMS = 1 << 20 };

/* The encode's counters on the device: a measuring encode's (core/flush_depth.h), of which a
 * plain one uses the first two (non-zero inputs, flushed). */
#define COUNTER_BYTES (APSMPI_MEASURE_COUNTERS * sizeof(unsigned long long))

_Static_assert(APSMPI_MAX_RUNGS - 1 <= APSMPI_DEPTH_BINS, "a measuring encode counts a depth bin per rung below FP32");

/* A buffer that grows and is kept, in device memory or in page-locked host memory. */
struct mem_buf {
    void *p;
    size_t cap;
};

/* A stage: a run of encoding on the GPU, with the event the host waits for before sending it. */
struct stage {
    size_t first, n; /* elements [first, first+n) of the buffer */
    void *done;      /* event: encoded and copied to the host */
};

/* One thread's resources on one device, kept from call to call. */
struct apsmpi_device_state {
    const apsmpi_device_ops *ops;
    int device; /* the device they live on */
    void *encode_stream, *decode_stream;
    void *all_encoded; /* event after the last stage's copy */
    struct stage *stages;
    size_t nstages, stage_cap;                             /* stages in use by the current call, and events made */
    size_t encoded;                                        /* elements the current call's stages encode */
    struct mem_buf packed, result, scales, exps, counters; /* on the device */
    struct mem_buf h_packed, h_result, h_fp32, h_small;    /* page-locked host memory */
    struct mem_buf h_counters; /* page-locked: the counters, copied there after the last stage */
    int saved_device;          /* the job's current device during a call */
};

static pthread_key_t state_key;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

static void release(struct apsmpi_device_state *st)
{
    const apsmpi_device_ops *o = st->ops;
    struct mem_buf *dbufs[] = {&st->packed, &st->result, &st->scales, &st->exps, &st->counters};
    struct mem_buf *hbufs[] = {&st->h_packed, &st->h_result, &st->h_fp32, &st->h_small, &st->h_counters};

    for (size_t i = 0; i < sizeof dbufs / sizeof dbufs[0]; i++)
        if (dbufs[i]->p)
            o->device_free(dbufs[i]->p);
    for (size_t i = 0; i < sizeof hbufs / sizeof hbufs[0]; i++)
        if (hbufs[i]->p)
            o->host_free(hbufs[i]->p);
    for (size_t i = 0; i < st->stage_cap; i++)
        o->event_destroy(st->stages[i].done);
    free(st->stages);
    if (st->all_encoded)
        o->event_destroy(st->all_encoded);
    if (st->encode_stream)
        o->stream_destroy(st->encode_stream);
    if (st->decode_stream)
        o->stream_destroy(st->decode_stream);
    memset(st, 0, sizeof *st);
}

/* The thread's state at its exit (the key's destructor). After MPI_Finalize nothing is asked of
 * the GPU: a thread that exits then may be one that the process's own teardown stops (PyTorch's
 * autograd threads are joined by a static destructor at exit), when the CUDA runtime may be gone
 * already, and the process's end frees the GPU's memory anyway. Seen on an H200: every rank of a
 * DDP job through apsmpi_ddp crashed here after MPI_Finalize, in cudaFree/cudaEventDestroy or in
 * the call that restores the device through st->ops, which release() had cleared (a crash at any
 * thread's end: tests/mpi/thread_exit_check.c --exit-before). */
static void state_free(void *p)
{
    struct apsmpi_device_state *st = p;
    const apsmpi_device_ops *o = st->ops; /* release() clears st */
    int finalized = 0;
    if (PMPI_Finalized(&finalized) != MPI_SUCCESS)
        finalized = 1;
    if (o && !finalized) {
        int prev;
        if (o->set_device(st->device, &prev) == 0) {
            release(st);
            o->set_device(prev, &prev);
        }
    }
    free(st);
}

static void state_key_create(void) { pthread_key_create(&state_key, state_free); }

/* The GPU operations of call c: its thread's state's, or the plugin's where that state could
 * not be set up. */
static const apsmpi_device_ops *ops_of(const apsmpi_call *c)
{
    return c->gpu.state ? c->gpu.state->ops : apsmpi_device_ops_get();
}

/* Records a GPU error of the call (err: the plugin's code, or 0 for a lack of memory), said
 * on stderr the first time with why (NULL: the plugin's text for err). */
static void fail_because(apsmpi_call *c, const char *what, int err, const char *why)
{
    if (c->gpu.err == 0)
        APSMPI_ERROR("GPU %s failed: %s", what, why ? why : err ? ops_of(c)->error_string(err) : "out of memory");
    c->gpu.err = err ? err : -1;
}

static void fail(apsmpi_call *c, const char *what, int err) { fail_because(c, what, err, NULL); }

/* 1 if a GPU operation returned success, else records the error and gives 0. */
static int ok(apsmpi_call *c, const char *what, int rc)
{
    if (rc == 0 && apsmpi_fault(APSMPI_FAULT_DEVICE_OP)) { /* injected (tests) */
        fail_because(c, what, 0, "injected by APSMPI_TEST_FAIL");
        return 0;
    }
    if (rc != 0)
        fail(c, what, rc);
    return rc == 0;
}

/* Makes b hold at least bytes bytes from the given allocator (half as much again, so that a
 * slowly growing size does not reallocate every call). */
static int grow(struct mem_buf *b, size_t bytes, void *(*alloc)(size_t), void (*release_fn)(void *))
{
    if (b->cap >= bytes && b->p)
        return MPI_SUCCESS;
    if (b->p)
        release_fn(b->p);
    b->cap = bytes + bytes / 2 + 256;
    b->p = apsmpi_fault(APSMPI_FAULT_DEVICE_ALLOC) ? NULL : alloc(b->cap);
    if (b->p == NULL)
        b->cap = 0;
    return b->p ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int grow_device(const apsmpi_device_ops *o, struct mem_buf *b, size_t bytes)
{
    return grow(b, bytes, o->device_alloc, o->device_free);
}

static int grow_host(const apsmpi_device_ops *o, struct mem_buf *b, size_t bytes)
{
    return grow(b, bytes, o->host_alloc, o->host_free);
}

/* The thread's state on device dev, made current; NULL if it cannot be had. */
static struct apsmpi_device_state *state_on(const apsmpi_device_ops *o, int dev)
{
    struct apsmpi_device_state *st;
    int prev;

    pthread_once(&state_once, state_key_create);
    st = pthread_getspecific(state_key);
    if (st == NULL) {
        st = calloc(1, sizeof *st);
        if (st == NULL || pthread_setspecific(state_key, st) != 0) {
            free(st);
            return NULL;
        }
    }
    if (st->ops && st->device != dev) { /* the job moved to another GPU: start over there */
        if (o->set_device(st->device, &prev) == 0)
            release(st);
        else
            memset(st, 0, sizeof *st);
    }
    if (o->set_device(dev, &st->saved_device) != 0)
        return NULL;
    if (st->ops == NULL) {
        st->ops = o;
        st->device = dev;
        st->encode_stream = o->stream_create();
        st->decode_stream = o->stream_create();
        st->all_encoded = o->event_create();
        if (!st->encode_stream || !st->decode_stream || !st->all_encoded ||
            grow_device(o, &st->counters, COUNTER_BYTES) || grow_host(o, &st->h_counters, COUNTER_BYTES) ||
            grow_host(o, &st->h_small, 4096)) {
            release(st);
            o->set_device(st->saved_device, &prev);
            return NULL;
        }
    }
    return st;
}

void apsmpi_device_begin(apsmpi_call *c, const void *out)
{
    int in_dev = apsmpi_device_of(c->in), out_dev = out == c->in ? in_dev : apsmpi_device_of(out);
    const apsmpi_device_ops *o;

    c->gpu.in = in_dev >= 0;
    c->gpu.out = out_dev >= 0;
    if (!c->gpu.in && !c->gpu.out)
        return;
    if ((o = apsmpi_device_ops_get()) == NULL) {
        c->gpu.failed = 1;
        return;
    }
    if (c->gpu.in && c->gpu.out && in_dev != out_dev) {
        APSMPI_WARN("input and output of a call are on different GPUs (%d, %d): sent in fp32", in_dev, out_dev);
        c->gpu.failed = 1;
        return;
    }
    c->gpu.state = apsmpi_fault(APSMPI_FAULT_DEVICE_SETUP) ? NULL : state_on(o, c->gpu.in ? in_dev : out_dev);
    if (c->gpu.state == NULL) {
        APSMPI_ERROR("cannot set up GPU %d for apsmpi (streams, events, memory): sent in fp32",
                     c->gpu.in ? in_dev : out_dev);
        c->gpu.failed = 1;
    }
}

int apsmpi_device_on_gpu(const apsmpi_call *c) { return c->gpu.in || c->gpu.out; }

int apsmpi_device_input(const apsmpi_call *c) { return c->gpu.in; }

int apsmpi_device_output(const apsmpi_call *c) { return c->gpu.out; }

void apsmpi_device_agreed(apsmpi_call *c, int any_on_gpu) { c->gpu.any = any_on_gpu; }

int apsmpi_device_any(const apsmpi_call *c) { return c->gpu.any; }

/* The block exponents of the device input into host array exps (c->nblocks entries).
 * MPI_SUCCESS, or MPI_ERR_OTHER / MPI_ERR_NO_MEM. */
static int device_exponents(apsmpi_call *c, int16_t *exps)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_device_ops *o = st->ops;
    size_t bytes = c->nblocks * sizeof *exps;

    if (grow_device(o, &st->exps, bytes) || grow_host(o, &st->h_small, bytes))
        return MPI_ERR_NO_MEM;
    if (ok(c, "block exponents", o->block_exponents(c->in, c->n, c->block_len, st->exps.p, st->encode_stream)) &&
        ok(c, "copy to host", o->copy(st->h_small.p, st->exps.p, bytes, st->encode_stream)) &&
        ok(c, "synchronise", o->stream_sync(st->encode_stream))) {
        memcpy(exps, st->h_small.p, bytes);
        return MPI_SUCCESS;
    }
    return MPI_ERR_OTHER;
}

/* Points c->packed and c->result (when result_size > 0) at page-locked host buffers of the
 * given sizes, with device buffers of the same sizes behind them. MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int device_buffers(apsmpi_call *c, size_t packed_size, size_t result_size)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_device_ops *o = st->ops;

    if (grow_host(o, &st->h_packed, packed_size) || grow_device(o, &st->packed, packed_size))
        return MPI_ERR_NO_MEM;
    if (result_size && (grow_host(o, &st->h_result, result_size) || grow_device(o, &st->result, result_size)))
        return MPI_ERR_NO_MEM;
    c->packed = st->h_packed.p;
    c->result = result_size ? st->h_result.p : NULL;
    return MPI_SUCCESS;
}

int apsmpi_device_prepare(apsmpi_call *c, int16_t *exps, size_t packed_size, size_t result_size)
{
    int rc;

    if (c->gpu.failed)
        return MPI_ERR_OTHER;
    if (c->gpu.in)
        rc = device_exponents(c, exps);
    else
        rc = (apsmpi_block_exponents(c->in, c->n, c->block_len, exps), MPI_SUCCESS);
    return rc != MPI_SUCCESS ? rc : device_buffers(c, packed_size, result_size);
}

/* Makes room for nstages stages, each with its event. */
static int reserve_stages(struct apsmpi_device_state *st, size_t nstages)
{
    struct stage *more;

    if (nstages <= st->stage_cap)
        return MPI_SUCCESS;
    more = realloc(st->stages, nstages * sizeof *more);
    if (more == NULL)
        return MPI_ERR_NO_MEM;
    st->stages = more;
    for (; st->stage_cap < nstages; st->stage_cap++)
        if ((more[st->stage_cap].done = st->ops->event_create()) == NULL)
            return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

/* Uploads the agreed scales (and zeroes the counters) on the encode stream. MPI_SUCCESS or an MPI error code. */
static int upload_scales(apsmpi_call *c)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_device_ops *o = st->ops;
    size_t bytes = c->nblocks * sizeof *c->agree.scales;

    if (grow_device(o, &st->scales, bytes) || grow_host(o, &st->h_small, bytes + COUNTER_BYTES)) {
        fail(c, "memory for the scales", 0);
        return MPI_ERR_NO_MEM;
    }
    memcpy(st->h_small.p, c->agree.scales, bytes);
    memset((char *)st->h_small.p + bytes, 0, COUNTER_BYTES);
    return ok(c, "copy of the scales", o->copy(st->scales.p, st->h_small.p, bytes, st->encode_stream)) &&
                   ok(c, "reset of the counters",
                      o->copy(st->counters.p, (char *)st->h_small.p + bytes, COUNTER_BYTES, st->encode_stream)) &&
                   /* h_small is reused by the next call: the copies must have read it by then */
                   ok(c, "synchronise", o->stream_sync(st->encode_stream))
               ? MPI_SUCCESS
               : MPI_ERR_OTHER;
}

/* 1 when the call's encodings on the GPU measure what APSMPI_FORMAT=auto reads: a call on a rung
 * of an MX ladder (an APS ladder's GPU calls stay on its widest format or FP32, unmeasured). */
static int measuring(const apsmpi_call *c) { return c->rung >= 0 && c->f->mx; }

/* The bins of a measuring encode: the ladder's flush depths, a bin per rung below FP32
 * (core/width_controller.h), the others unused. */
static apsmpi_depth_bins ladder_bins(void)
{
    const apsmpi_ladder *l = apsmpi_auto_ladder();
    apsmpi_depth_bins b;
    for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
        b.depth[k] = k < apsmpi_ladder_fp32(l) ? l->depth[k] : APSMPI_DEPTH_NONE;
    return b;
}

/* Queues the encoding of elements [first, first+len) of segment bytes at byte `offset` as
 * stage k (measuring it for auto, counting it for the statistics), its copy to the host and its
 * event; 0 if a GPU operation failed. */
static int queue_stage(apsmpi_call *c, size_t k, size_t first, size_t len, size_t offset)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_device_ops *o = st->ops;
    const apsmpi_format *f = c->f;
    size_t bytes = apsmpi_packed_bytes(f, len);
    struct stage *sg = &st->stages[k];
    void *out = (char *)st->packed.p + offset;
    int rc;

    sg->first = first;
    sg->n = len;
    st->encoded += len;
    if (measuring(c)) {
        apsmpi_depth_bins bins = ladder_bins();
        rc = o->encode_measured(f, c->in + first, len, first, c->rounding, &bins, out, st->counters.p,
                                st->encode_stream);
    } else {
        rc = o->encode(f, c->in + first, len, first, st->scales.p, c->block_len, c->rounding, out,
                       c->gpu.counting ? st->counters.p : NULL, st->encode_stream);
    }
    return ok(c, "encode", rc) &&
           ok(c, "copy to host",
              o->copy((char *)c->packed + offset, (char *)st->packed.p + offset, bytes, st->encode_stream)) &&
           ok(c, "event", o->event_record(sg->done, st->encode_stream));
}

void apsmpi_device_start_encode(apsmpi_call *c, const apsmpi_segments *segs)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_format *f = c->f;
    size_t nstages = 0, k = 0, gelems = apsmpi_group_elems(f), gbytes = apsmpi_group_bytes(f);
    size_t first = 0, offset = 0; /* element and byte start of the segment, in natural order */

    if (st == NULL || !c->gpu.in || c->gpu.err)
        return;
    st->nstages = 0;
    st->encoded = 0;
    c->gpu.counting = c->rt->cfg.stats || measuring(c);
    for (int s = 0; s < segs->nsegs; s++)
        nstages += ((size_t)segs->counts[s] + STAGE_ELEMS - 1) / STAGE_ELEMS;
    if (reserve_stages(st, nstages) != MPI_SUCCESS) {
        fail(c, "memory for the stage events", 0);
        return;
    }
    if (upload_scales(c) != MPI_SUCCESS)
        return;
    for (int i = 0; i < segs->nsegs; i++) {
        int s = segs->order ? segs->order[i] : i;
        size_t count = (size_t)segs->counts[s];
        if (segs->order) {
            first = segs->first[s];
            offset = segs->offset[s];
        }
        for (size_t at = 0; at < count; at += STAGE_ELEMS, k++) {
            if (!queue_stage(c, k, first + at, count - at < STAGE_ELEMS ? count - at : STAGE_ELEMS,
                             offset + at / gelems * gbytes))
                return;
            st->nstages = k + 1;
        }
        first += count;
        offset += apsmpi_packed_bytes(f, count);
    }
    /* the counts come back behind the last stage, in page-locked memory that the host reads once
     * the call has synchronised the stream at its end (apsmpi_device_end): no wait of their own */
    if (c->gpu.counting && !ok(c, "copy of the counters",
                               st->ops->copy(st->h_counters.p, st->counters.p, COUNTER_BYTES, st->encode_stream)))
        return;
    if (ok(c, "event", st->ops->event_record(st->all_encoded, st->encode_stream)))
        c->gpu.encoding = 1;
}

void apsmpi_device_wait_encoded(apsmpi_call *c, size_t first, size_t n)
{
    struct apsmpi_device_state *st = c->gpu.state;

    if (!c->gpu.encoding)
        return;
    for (size_t k = 0; k < st->nstages; k++) {
        const struct stage *sg = &st->stages[k];
        if (sg->first < first + n && first < sg->first + sg->n &&
            !ok(c, "wait for encode", st->ops->event_sync(sg->done)))
            return;
    }
}

/* The device buffer behind the host address p, which lies inside c->packed or c->result. */
static void *device_twin(apsmpi_call *c, const void *p)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const char *q = p;

    if (q >= (const char *)st->h_packed.p && q < (const char *)st->h_packed.p + st->h_packed.cap)
        return (char *)st->packed.p + (q - (const char *)st->h_packed.p);
    if (q >= (const char *)st->h_result.p && q < (const char *)st->h_result.p + st->h_result.cap)
        return (char *)st->result.p + (q - (const char *)st->h_result.p);
    return NULL;
}

/* The device twin of the encoded data at `in`, after the first decode of the call waited for
 * every stage's encoding: the output may overlap the input (MPI_IN_PLACE), and the device
 * copy of the encoded data is reused. NULL after an error. */
static void *start_decode(apsmpi_call *c, const void *in)
{
    struct apsmpi_device_state *st = c->gpu.state;
    void *twin = device_twin(c, in);

    if (c->gpu.err)
        return NULL;
    if (twin == NULL) {
        fail(c, "decode (encoded data outside the call's buffers)", 0);
        return NULL;
    }
    if (!c->gpu.decoding) {
        if (c->gpu.encoding && !ok(c, "stream wait", st->ops->stream_wait_event(st->decode_stream, st->all_encoded)))
            return NULL;
        if (!c->gpu.encoding && upload_scales(c) != MPI_SUCCESS) /* encoded on the host: no scales on the GPU yet */
            return NULL;
        c->gpu.decoding = 1;
    }
    return twin;
}

void apsmpi_device_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_device_ops *o = st->ops;
    void *twin = start_decode(c, in);

    if (twin && ok(c, "copy to the GPU", o->copy(twin, in, apsmpi_packed_bytes(c->f, n), st->decode_stream)))
        ok(c, "decode", o->decode(c->f, twin, n, first, st->scales.p, c->block_len, out, st->decode_stream));
}

void apsmpi_device_decode_slot(apsmpi_call *c, const void *slot, size_t slot_bytes, const void *codes, size_t first,
                               size_t n, float *out)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_device_ops *o = st->ops;
    char *twin = start_decode(c, slot);

    if (twin && ok(c, "copy to the GPU", o->copy(twin, slot, slot_bytes, st->decode_stream)))
        ok(c, "decode",
           o->decode(c->f, twin + ((const char *)codes - (const char *)slot), n, first, (const int16_t *)(void *)twin,
                     c->block_len, out, st->decode_stream));
}

/* The counts of the call's encodings on the GPU (in h_counters once the encode stream is
 * synchronised): to the statistics, and for auto to the measure of the contribution, as the host
 * codec's encodings add theirs (every block counted). */
static void take_counts(apsmpi_call *c)
{
    struct apsmpi_device_state *st = c->gpu.state;
    unsigned long long counts[APSMPI_MEASURE_COUNTERS];
    apsmpi_flush_measure *m = &c->measure[0];

    memcpy(counts, st->h_counters.p, sizeof counts);
    if (c->rt->cfg.stats) {
        apsmpi_stats_add(APSMPI_STAT_VALUES_NONZERO, counts[APSMPI_COUNT_NONZERO]);
        apsmpi_stats_add(APSMPI_STAT_VALUES_FLUSHED, counts[APSMPI_COUNT_FLUSHED]);
    }
    if (!measuring(c))
        return;
    apsmpi_mx_measure mm = {{{0}}, {0}}; /* (the bins past the ladder's count nothing) */
    for (int k = 0; k < APSMPI_MEASURE_COUNTERS; k++)
        mm.count[k] = counts[k];
    apsmpi_flush_measure_add_mx(m, st->encoded, &mm);
    c->measured = 1;
}

int apsmpi_device_end(apsmpi_call *c)
{
    struct apsmpi_device_state *st = c->gpu.state;
    const apsmpi_device_ops *o;
    int prev;

    if (st == NULL) /* only copies of the fp32 path, without streams of the call's own */
        return c->gpu.err ? MPI_ERR_OTHER : MPI_SUCCESS;
    o = st->ops;
    /* both streams end idle, whatever happened before: the buffers are reused by the next call */
    ok(c, "synchronise", o->stream_sync(st->decode_stream));
    if (ok(c, "synchronise", o->stream_sync(st->encode_stream)) && c->gpu.encoding && c->gpu.counting &&
        c->gpu.err == 0)
        take_counts(c);
    o->set_device(st->saved_device, &prev);
    return c->gpu.err ? MPI_ERR_OTHER : MPI_SUCCESS;
}

void *apsmpi_device_fp32_buffer(apsmpi_call *c, size_t bytes)
{
    struct apsmpi_device_state *st = c->gpu.state;

    if (st == NULL) /* this thread's GPU state could not be set up: plain host memory */
        return apsmpi_device_ops_get() ? apsmpi_memory_get(c->mem, APSMPI_SCRATCH_PACKED, bytes) : NULL;
    return grow_host(st->ops, &st->h_fp32, bytes) ? NULL : st->h_fp32.p;
}

int apsmpi_device_copy(apsmpi_call *c, void *dst, const void *src, size_t bytes)
{
    const apsmpi_device_ops *o = ops_of(c);
    void *stream = c->gpu.state ? c->gpu.state->encode_stream : NULL; /* NULL: the default stream */

    return ok(c, "copy", o->copy(dst, src, bytes, stream)) && ok(c, "synchronise", o->stream_sync(stream))
               ? MPI_SUCCESS
               : MPI_ERR_OTHER;
}
