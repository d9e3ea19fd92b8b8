/* device_call.c: a compressed call on GPU buffers: exponents and encoding on the GPU, chunked copies, decoding on the GPU. */
#include "call/device_steps.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "core/log.h"
#include "entry/runtime.h"
#include "state/stats.h"

/* Elements per encoding chunk: 4 MiB of floats, a multiple of every packing group. */
enum { DEVICE_CHUNK = 1 << 20 };

struct dev_buf {
    void *p;
    size_t cap;
};

struct chunk {
    size_t first, n; /* elements [first, first+n) of the buffer */
    void *done;      /* event: encoded and copied to the host */
};

/* One thread's resources on one device, kept from call to call. */
struct apsmpi_device_state {
    const apsmpi_device_ops *ops;
    int device;                /* the device they live on */
    void *encode_stream, *decode_stream;
    void *all_encoded;         /* event after the last chunk's copy */
    struct chunk *chunks;
    size_t nchunks, chunk_cap; /* chunks in use by the current call, and events made */
    struct dev_buf packed, result, scales, exps, counters; /* on the device */
    struct dev_buf h_packed, h_result, h_stage, h_small;   /* page-locked host memory */
    int saved_device;          /* the job's current device during a call */
};

static pthread_key_t state_key;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

static void release(struct apsmpi_device_state *st)
{
    const apsmpi_device_ops *o = st->ops;
    struct dev_buf *dbufs[] = {&st->packed, &st->result, &st->scales, &st->exps, &st->counters};
    struct dev_buf *hbufs[] = {&st->h_packed, &st->h_result, &st->h_stage, &st->h_small};

    for (size_t i = 0; i < sizeof dbufs / sizeof dbufs[0]; i++)
        if (dbufs[i]->p)
            o->device_free(dbufs[i]->p);
    for (size_t i = 0; i < sizeof hbufs / sizeof hbufs[0]; i++)
        if (hbufs[i]->p)
            o->host_free(hbufs[i]->p);
    for (size_t i = 0; i < st->chunk_cap; i++)
        o->event_destroy(st->chunks[i].done);
    free(st->chunks);
    if (st->all_encoded)
        o->event_destroy(st->all_encoded);
    if (st->encode_stream)
        o->stream_destroy(st->encode_stream);
    if (st->decode_stream)
        o->stream_destroy(st->decode_stream);
    memset(st, 0, sizeof *st);
}

static void state_free(void *p)
{
    struct apsmpi_device_state *st = p;
    if (st->ops) {
        int prev;
        if (st->ops->set_device(st->device, &prev) == 0) {
            release(st);
            st->ops->set_device(prev, &prev);
        }
    }
    free(st);
}

static void state_key_create(void) { pthread_key_create(&state_key, state_free); }

/* Records a GPU error of the call, said on stderr the first time. */
static void fail(apsmpi_call *c, const char *what, int err)
{
    if (c->dev_err == 0)
        APSMPI_ERROR("GPU %s failed: %s", what, err ? c->dev->ops->error_string(err) : "out of memory");
    c->dev_err = err ? err : -1;
}

/* 1 if a GPU operation returned success, else records the error and gives 0. */
static int ok(apsmpi_call *c, const char *what, int rc)
{
    if (rc != 0)
        fail(c, what, rc);
    return rc == 0;
}

/* Makes b hold at least bytes bytes from the given allocator (half as much again, so that a
 * slowly growing size does not reallocate every call). */
static int grow(struct dev_buf *b, size_t bytes, void *(*alloc)(size_t), void (*release_fn)(void *))
{
    if (b->cap >= bytes && b->p)
        return 0;
    if (b->p)
        release_fn(b->p);
    b->cap = bytes + bytes / 2 + 256;
    b->p = alloc(b->cap);
    if (b->p == NULL)
        b->cap = 0;
    return b->p ? 0 : -1;
}

static int grow_device(const apsmpi_device_ops *o, struct dev_buf *b, size_t bytes)
{
    return grow(b, bytes, o->device_alloc, o->device_free);
}

static int grow_host(const apsmpi_device_ops *o, struct dev_buf *b, size_t bytes)
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
            grow_device(o, &st->counters, 2 * sizeof(unsigned long long)) ||
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

    c->in_dev = in_dev >= 0;
    c->out_dev = out_dev >= 0;
    if (!c->in_dev && !c->out_dev)
        return;
    if ((o = apsmpi_device_ops_get()) == NULL) {
        c->dev_failed = 1;
        return;
    }
    if (c->in_dev && c->out_dev && in_dev != out_dev) {
        APSMPI_WARN("input and output of a call are on different GPUs (%d, %d): sent in fp32", in_dev, out_dev);
        c->dev_failed = 1;
        return;
    }
    c->dev = state_on(o, c->in_dev ? in_dev : out_dev);
    if (c->dev == NULL) {
        APSMPI_ERROR("cannot set up GPU %d for apsmpi (streams, events, memory): sent in fp32",
                     c->in_dev ? in_dev : out_dev);
        c->dev_failed = 1;
    }
}

int apsmpi_device_exponents(apsmpi_call *c, int16_t *exps)
{
    struct apsmpi_device_state *st = c->dev;
    const apsmpi_device_ops *o = st->ops;
    size_t bytes = c->nblocks * sizeof *exps;

    if (grow_device(o, &st->exps, bytes) || grow_host(o, &st->h_small, bytes))
        return -1;
    if (ok(c, "block exponents", o->block_exponents(c->in, c->n, c->block_len, st->exps.p, st->encode_stream)) &&
        ok(c, "copy to host", o->copy(st->h_small.p, st->exps.p, bytes, st->encode_stream)) &&
        ok(c, "synchronise", o->stream_sync(st->encode_stream))) {
        memcpy(exps, st->h_small.p, bytes);
        return 0;
    }
    return -1;
}

int apsmpi_device_buffers(apsmpi_call *c, size_t packed_size, size_t result_size)
{
    struct apsmpi_device_state *st = c->dev;
    const apsmpi_device_ops *o = st->ops;

    if (grow_host(o, &st->h_packed, packed_size) || grow_device(o, &st->packed, packed_size))
        return -1;
    if (result_size && (grow_host(o, &st->h_result, result_size) || grow_device(o, &st->result, result_size)))
        return -1;
    c->packed = st->h_packed.p;
    c->result = result_size ? st->h_result.p : NULL;
    return 0;
}

/* Makes room for nchunks chunks, each with its event. */
static int reserve_chunks(struct apsmpi_device_state *st, size_t nchunks)
{
    struct chunk *more;

    if (nchunks <= st->chunk_cap)
        return 0;
    more = realloc(st->chunks, nchunks * sizeof *more);
    if (more == NULL)
        return -1;
    st->chunks = more;
    for (; st->chunk_cap < nchunks; st->chunk_cap++)
        if ((more[st->chunk_cap].done = st->ops->event_create()) == NULL)
            return -1;
    return 0;
}

/* Uploads the agreed scales (and zeroes the counters) on the encode stream. */
static int upload_scales(apsmpi_call *c)
{
    struct apsmpi_device_state *st = c->dev;
    const apsmpi_device_ops *o = st->ops;
    size_t bytes = c->nblocks * sizeof *c->scales;

    if (grow_device(o, &st->scales, bytes) || grow_host(o, &st->h_small, bytes + 16)) {
        fail(c, "memory for the scales", 0);
        return -1;
    }
    memcpy(st->h_small.p, c->scales, bytes);
    memset((char *)st->h_small.p + bytes, 0, 16);
    return ok(c, "copy of the scales", o->copy(st->scales.p, st->h_small.p, bytes, st->encode_stream)) &&
                   ok(c, "reset of the counters",
                          o->copy(st->counters.p, (char *)st->h_small.p + bytes, 16, st->encode_stream)) &&
                   /* h_small is reused by the next call: the copies must have read it by then */
                   ok(c, "synchronise", o->stream_sync(st->encode_stream))
               ? 0
               : -1;
}

void apsmpi_device_start_encode(apsmpi_call *c, const int *counts, int nsegs, int first_seg)
{
    struct apsmpi_device_state *st = c->dev;
    const apsmpi_device_ops *o;
    const apsmpi_format *f = &apsmpi_rt.cfg.format;
    size_t nchunks = 0, k = 0, gelems = apsmpi_group_elems(f), gbytes = apsmpi_group_bytes(f);
    size_t first = 0, offset = 0, total = 0, total_bytes = 0; /* element and byte starts */

    if (st == NULL || !c->in_dev || c->dev_err)
        return;
    o = st->ops;
    st->nchunks = 0;
    for (int s = 0; s < nsegs; s++) {
        if (s == first_seg) {
            first = total;
            offset = total_bytes;
        }
        total += (size_t)counts[s];
        total_bytes += apsmpi_packed_bytes((size_t)counts[s]);
        nchunks += ((size_t)counts[s] + DEVICE_CHUNK - 1) / DEVICE_CHUNK;
    }
    if (reserve_chunks(st, nchunks)) {
        fail(c, "memory for the chunk events", 0);
        return;
    }
    if (upload_scales(c))
        return;
    /* segment first_seg, then downwards, wrapping from segment 0 to the last */
    for (int i = 0, s = first_seg; i < nsegs; i++, s = s == 0 ? nsegs - 1 : s - 1) {
        if (i > 0) { /* segment s ends where segment s+1 starts, the last one at the end */
            first = (s == nsegs - 1 ? total : first) - (size_t)counts[s];
            offset = (s == nsegs - 1 ? total_bytes : offset) - apsmpi_packed_bytes((size_t)counts[s]);
        }
        for (size_t at = 0; at < (size_t)counts[s]; at += DEVICE_CHUNK, k++) {
            size_t len = (size_t)counts[s] - at < DEVICE_CHUNK ? (size_t)counts[s] - at : DEVICE_CHUNK;
            size_t off = offset + at / gelems * gbytes, bytes = apsmpi_packed_bytes(len);
            struct chunk *ch = &st->chunks[k];
            ch->first = first + at;
            ch->n = len;
            if (!ok(c, "encode",
                        o->encode(f, c->in + ch->first, len, ch->first, st->scales.p, c->block_len, c->rounding,
                                  (char *)st->packed.p + off, apsmpi_rt.cfg.stats ? st->counters.p : NULL,
                                  st->encode_stream)) ||
                !ok(c, "copy to host", o->copy((char *)c->packed + off, (char *)st->packed.p + off, bytes,
                                                   st->encode_stream)) ||
                !ok(c, "event", o->event_record(ch->done, st->encode_stream)))
                return;
            st->nchunks = k + 1;
        }
    }
    if (ok(c, "event", o->event_record(st->all_encoded, st->encode_stream)))
        c->dev_encoding = 1;
}

void apsmpi_device_wait_encoded(apsmpi_call *c, size_t first, size_t n)
{
    struct apsmpi_device_state *st = c->dev;

    if (!c->dev_encoding)
        return;
    for (size_t k = 0; k < st->nchunks; k++) {
        const struct chunk *ch = &st->chunks[k];
        if (ch->first < first + n && first < ch->first + ch->n &&
            !ok(c, "wait for encode", st->ops->event_sync(ch->done)))
            return;
    }
}

/* The device buffer behind the host address p, which lies inside c->packed or c->result. */
static void *device_twin(apsmpi_call *c, const void *p)
{
    struct apsmpi_device_state *st = c->dev;
    const char *q = p;

    if (q >= (const char *)st->h_packed.p && q < (const char *)st->h_packed.p + st->h_packed.cap)
        return (char *)st->packed.p + (q - (const char *)st->h_packed.p);
    if (q >= (const char *)st->h_result.p && q < (const char *)st->h_result.p + st->h_result.cap)
        return (char *)st->result.p + (q - (const char *)st->h_result.p);
    return NULL;
}

/* The device twin of the encoded data at `in`, after the first decode of the call waited for
 * every chunk's encoding: the output may overlap the input (MPI_IN_PLACE), and the device
 * copy of the encoded data is reused. NULL after an error. */
static void *start_decode(apsmpi_call *c, const void *in)
{
    struct apsmpi_device_state *st = c->dev;
    void *twin = device_twin(c, in);

    if (c->dev_err)
        return NULL;
    if (twin == NULL) {
        fail(c, "decode (encoded data outside the call's buffers)", 0);
        return NULL;
    }
    if (!c->dev_decoding) {
        if (c->dev_encoding && !ok(c, "stream wait", st->ops->stream_wait_event(st->decode_stream, st->all_encoded)))
            return NULL;
        if (!c->dev_encoding && upload_scales(c) != 0) /* encoded on the host: no scales on the GPU yet */
            return NULL;
        c->dev_decoding = 1;
    }
    return twin;
}

void apsmpi_device_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out)
{
    struct apsmpi_device_state *st = c->dev;
    const apsmpi_device_ops *o = st->ops;
    void *twin = start_decode(c, in);

    if (twin && ok(c, "copy to the GPU", o->copy(twin, in, apsmpi_packed_bytes(n), st->decode_stream)))
        ok(c, "decode", o->decode(&apsmpi_rt.cfg.format, twin, n, first, st->scales.p, c->block_len, out,
                                      st->decode_stream));
}

void apsmpi_device_decode_slot(apsmpi_call *c, const void *slot, size_t slot_bytes, const void *codes, size_t first,
                               size_t n, float *out)
{
    struct apsmpi_device_state *st = c->dev;
    const apsmpi_device_ops *o = st->ops;
    char *twin = start_decode(c, slot);

    if (twin && ok(c, "copy to the GPU", o->copy(twin, slot, slot_bytes, st->decode_stream)))
        ok(c, "decode", o->decode(&apsmpi_rt.cfg.format, twin + ((const char *)codes - (const char *)slot), n, first,
                                      (const int16_t *)(void *)twin, c->block_len, out, st->decode_stream));
}

int apsmpi_device_end(apsmpi_call *c)
{
    struct apsmpi_device_state *st = c->dev;
    const apsmpi_device_ops *o;
    unsigned long long counts[2];
    int prev;

    if (st == NULL)
        return MPI_SUCCESS;
    o = st->ops;
    /* both streams end idle, whatever happened before: the buffers are reused by the next call */
    ok(c, "synchronise", o->stream_sync(st->decode_stream));
    ok(c, "synchronise", o->stream_sync(st->encode_stream));
    if (c->dev_encoding && apsmpi_rt.cfg.stats &&
        ok(c, "copy of the counters", o->copy(st->h_small.p, st->counters.p, sizeof counts, st->encode_stream)) &&
        ok(c, "synchronise", o->stream_sync(st->encode_stream))) {
        memcpy(counts, st->h_small.p, sizeof counts);
        apsmpi_stats_add(APSMPI_STAT_VALUES_NONZERO, counts[0]);
        apsmpi_stats_add(APSMPI_STAT_VALUES_FLUSHED, counts[1]);
    }
    o->set_device(st->saved_device, &prev);
    return c->dev_err ? MPI_ERR_OTHER : MPI_SUCCESS;
}

void *apsmpi_device_stage(apsmpi_call *c, size_t bytes)
{
    struct apsmpi_device_state *st = c->dev;
    return grow_host(st->ops, &st->h_stage, bytes) ? NULL : st->h_stage.p;
}

int apsmpi_device_copy(apsmpi_call *c, void *dst, const void *src, size_t bytes)
{
    struct apsmpi_device_state *st = c->dev;

    return ok(c, "copy", st->ops->copy(dst, src, bytes, st->encode_stream)) &&
                   ok(c, "synchronise", st->ops->stream_sync(st->encode_stream))
               ? 0
               : -1;
}
