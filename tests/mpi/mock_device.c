/* mock_device.c: a device plugin without a GPU, for testing the device path on the CPU: strict about memory and ordering. */
/* It behaves as a GPU would where the library could go wrong:
 *  - "device memory" is host memory mapped without access: a host read or write of it by
 *    the library (or by MPI) kills the process with SIGSEGV. Only the plugin's own
 *    operations open it, while they run. (MOCK_DEVICE_OPEN=1 leaves it readable and
 *    writable, as a CUDA-aware MPI would see it, to test calls handed to MPI unchanged.)
 *  - nothing runs when it is enqueued: a stream's work runs only when the host waits for
 *    it (stream_sync, event_sync) or when another stream's work waits on one of its events.
 *    A host read of results before the right wait sees old bytes, and the test's checksum
 *    catches it.
 * The kernels are the CPU codec's functions, so results must equal the host path's bit for
 * bit; the measuring encode counts depths with core/flush_depth.h, the arithmetic the CUDA
 * kernel runs, over every block, in the bins it is given. One device, ordinal 0. Thread-safe: one lock serialises the operations that touch the
 * memory map (each operation's run, allocation, freeing, lookup), as requests on device
 * buffers run on the library's worker threads beside the job's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mpi.h>

#include "core/aps.h"
#include "core/codec.h"
#include "core/flush_depth.h"
#include "device/device_plugin.h"

/* MOCK_DEVICE_NOT_AFTER_FINALIZE=1: an operation asked of the device after MPI_Finalize stops the
 * process, naming it (a real GPU's runtime may be gone by then: tests/mpi/thread_exit_check.c). */
static void not_after_finalize(const char *op)
{
    int finalized = 0;
    if (getenv("MOCK_DEVICE_NOT_AFTER_FINALIZE") && PMPI_Finalized(&finalized) == MPI_SUCCESS && finalized) {
        fprintf(stderr, "mock_device: %s after MPI_Finalize\n", op);
        abort();
    }
}

/* ---- device memory ---- */

struct region {
    char *base;
    size_t size;
};
static struct region regions[256];
static int nregions, opened;
/* Held from open_device to close_device and around the memory map's changes (recursive: an
 * operation's run may run another stream's work first). */
static pthread_mutex_t map_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static void set_access(int prot)
{
    for (int i = 0; i < nregions; i++)
        if (regions[i].base && mprotect(regions[i].base, regions[i].size, prot) != 0) {
            perror("mock_device: mprotect");
            abort();
        }
}

/* Device memory is open only while a plugin operation runs. */
static void open_device(void)
{
    pthread_mutex_lock(&map_lock);
    if (opened++ == 0)
        set_access(PROT_READ | PROT_WRITE);
}

static void close_device(void)
{
    if (--opened == 0 && getenv("MOCK_DEVICE_OPEN") == NULL)
        set_access(PROT_NONE);
    pthread_mutex_unlock(&map_lock);
}

static void *device_alloc(size_t bytes)
{
    size_t size = (bytes + 4095) / 4096 * 4096;
    int slot = -1;
    char *p;

    pthread_mutex_lock(&map_lock);
    for (int i = 0; i < nregions && slot < 0; i++)
        if (regions[i].base == NULL)
            slot = i;
    p = slot < 0 && nregions == (int)(sizeof regions / sizeof regions[0])
            ? MAP_FAILED
            : mmap(NULL, size ? size : 4096, getenv("MOCK_DEVICE_OPEN") ? PROT_READ | PROT_WRITE : PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
        if (slot < 0)
            slot = nregions++;
        regions[slot] = (struct region){p, size ? size : 4096};
        if (opened) /* allocated while another operation has memory open */
            mprotect(p, regions[slot].size, PROT_READ | PROT_WRITE);
    }
    pthread_mutex_unlock(&map_lock);
    return p == MAP_FAILED ? NULL : p;
}

static void device_free(void *p)
{
    not_after_finalize("device_free");
    pthread_mutex_lock(&map_lock);
    for (int i = 0; i < nregions; i++)
        if (regions[i].base == p) {
            munmap(p, regions[i].size);
            regions[i].base = NULL;
            pthread_mutex_unlock(&map_lock);
            return;
        }
    pthread_mutex_unlock(&map_lock);
    fprintf(stderr, "mock_device: device_free of %p, which is not device memory\n", p);
    abort();
}

static int device_of(const void *p)
{
    const char *q = p;
    int dev = -1;

    pthread_mutex_lock(&map_lock);
    for (int i = 0; i < nregions && dev < 0; i++)
        if (regions[i].base && q >= regions[i].base && q < regions[i].base + regions[i].size)
            dev = 0;
    pthread_mutex_unlock(&map_lock);
    return dev;
}

static void *host_alloc(size_t bytes) { return malloc(bytes ? bytes : 1); }
static void host_free(void *p)
{
    not_after_finalize("host_free");
    free(p);
}

/* ---- streams of deferred work ---- */

enum op_kind { OP_COPY, OP_EXPONENTS, OP_ENCODE, OP_ENCODE_MEASURED, OP_DECODE, OP_RECORD, OP_WAIT };

struct event;
struct op {
    enum op_kind kind;
    apsmpi_format f;
    apsmpi_rounding r;
    const void *src;
    void *dst;
    size_t n, first, block_len, bytes;
    const int16_t *scales;
    unsigned long long *counters;
    apsmpi_depth_bins bins;  /* OP_ENCODE_MEASURED */
    struct event *event;     /* OP_RECORD */
    struct stream *wait_for; /* OP_WAIT: until wait_for->done >= wait_seq */
    size_t wait_seq;
};

struct stream {
    struct op *ops;
    size_t len, cap, done; /* ops enqueued, and how many of them ran */
};

struct event {
    struct stream *stream; /* where it was last recorded; NULL: never (complete) */
    size_t seq;            /* complete once stream->done >= seq */
};

static void run_until(struct stream *s, size_t seq);

static const apsmpi_codec *codec_for(const apsmpi_format *f)
{
    static apsmpi_codec *cache[16];
    for (int i = 0; i < 16 && cache[i]; i++)
        if (memcmp(apsmpi_codec_format(cache[i]), f, sizeof *f) == 0)
            return cache[i];
    for (int i = 0; i < 16; i++)
        if (cache[i] == NULL)
            return cache[i] = apsmpi_codec_create(f);
    abort();
}

static void execute(struct op *o)
{
    if (o->kind == OP_WAIT) {
        if (o->wait_for)
            run_until(o->wait_for, o->wait_seq);
        return;
    }
    open_device();
    switch (o->kind) {
    case OP_COPY:
        memcpy(o->dst, o->src, o->bytes);
        break;
    case OP_EXPONENTS:
        apsmpi_block_exponents(o->src, o->n, o->block_len, o->dst);
        break;
    case OP_ENCODE: {
        apsmpi_scales sc = {o->scales, o->block_len};
        uint64_t flushed = 0, nonzero = 0;
        const float *x = o->src;
        apsmpi_encode(codec_for(&o->f), x, o->n, o->first, sc, o->r, o->dst, &flushed);
        for (size_t i = 0; i < o->n; i++)
            nonzero += x[i] != 0.0f;
        if (o->counters) {
            o->counters[0] += nonzero;
            o->counters[1] += flushed;
        }
        break;
    }
    case OP_ENCODE_MEASURED: { /* an MX format: blocks of 32 from element 0 */
        apsmpi_scales none = {NULL, o->n};
        uint64_t counts[APSMPI_MEASURE_COUNTERS] = {0};
        const uint32_t *bits = o->src;
        apsmpi_encode(codec_for(&o->f), o->src, o->n, o->first, none, o->r, o->dst, &counts[APSMPI_COUNT_FLUSHED]);
        for (size_t b = 0; b < o->n; b += 32)
            apsmpi_block_depth_counts(bits + b, o->n - b < 32 ? (int)(o->n - b) : 32, &o->bins, counts);
        for (int k = 0; k < APSMPI_MEASURE_COUNTERS; k++)
            o->counters[k] += counts[k];
        break;
    }
    case OP_DECODE: {
        apsmpi_scales sc = {o->scales, o->block_len};
        apsmpi_decode(codec_for(&o->f), o->src, o->n, o->first, sc, o->dst);
        break;
    }
    default:
        break;
    }
    close_device();
}

static void run_until(struct stream *s, size_t seq)
{
    while (s->done < seq && s->done < s->len) {
        struct op *o = &s->ops[s->done++];
        execute(o);
    }
}

static int enqueue(void *stream, struct op o)
{
    struct stream *s = stream;
    if (s == NULL) {
        execute(&o);
        return 0;
    }
    if (s->len == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        struct op *more = realloc(s->ops, cap * sizeof *more);
        if (more == NULL)
            return 2; /* "out of memory" */
        s->ops = more;
        s->cap = cap;
    }
    s->ops[s->len++] = o;
    if (o.kind == OP_RECORD) {
        o.event->stream = s;
        o.event->seq = s->len;
    }
    return 0;
}

static void *stream_create(void) { return calloc(1, sizeof(struct stream)); }

static void stream_destroy(void *p)
{
    struct stream *s = p;
    not_after_finalize("stream_destroy");
    run_until(s, s->len);
    free(s->ops);
    free(s);
}

static int stream_sync(void *p)
{
    struct stream *s = p;
    if (s)
        run_until(s, s->len);
    return 0;
}

static void *event_create(void) { return calloc(1, sizeof(struct event)); }
static void event_destroy(void *e)
{
    not_after_finalize("event_destroy");
    free(e);
}

static int event_record(void *e, void *s)
{
    if (s == NULL) {
        ((struct event *)e)->stream = NULL;
        return 0;
    }
    return enqueue(s, (struct op){.kind = OP_RECORD, .event = e});
}

static int event_sync(void *p)
{
    struct event *e = p;
    if (e->stream)
        run_until(e->stream, e->seq);
    return 0;
}

static int stream_wait_event(void *s, void *p)
{
    /* waits for the event's current recording, as with CUDA: later records do not matter */
    struct event *e = p;
    return enqueue(s, (struct op){.kind = OP_WAIT, .wait_for = e->stream, .wait_seq = e->seq});
}

static int copy(void *dst, const void *src, size_t bytes, void *s)
{
    return enqueue(s, (struct op){.kind = OP_COPY, .dst = dst, .src = src, .bytes = bytes});
}

static int set_device(int dev, int *previous)
{
    not_after_finalize("set_device");
    *previous = 0;
    return dev == 0 ? 0 : 1;
}

static int device_count(void) { return 1; }

static int block_exponents(const float *x, size_t n, size_t block_len, int16_t *exps, void *s)
{
    return enqueue(s, (struct op){.kind = OP_EXPONENTS, .src = x, .n = n, .block_len = block_len, .dst = exps});
}

static int encode(const apsmpi_format *f, const float *in, size_t n, size_t first_index, const int16_t *scales,
                  size_t block_len, apsmpi_rounding r, void *out, unsigned long long *counters, void *s)
{
    return enqueue(s, (struct op){.kind = OP_ENCODE,
                                  .f = *f,
                                  .r = r,
                                  .src = in,
                                  .n = n,
                                  .first = first_index,
                                  .scales = scales,
                                  .block_len = block_len,
                                  .dst = out,
                                  .counters = counters});
}

static int encode_measured(const apsmpi_format *f, const float *in, size_t n, size_t first_index, apsmpi_rounding r,
                           const apsmpi_depth_bins *bins, void *out, unsigned long long *counters, void *s)
{
    if (n == 0)
        return 0;
    if (!f->mx || bins == NULL || counters == NULL)
        return 1;
    return enqueue(s, (struct op){.kind = OP_ENCODE_MEASURED,
                                  .f = *f,
                                  .r = r,
                                  .src = in,
                                  .n = n,
                                  .first = first_index,
                                  .dst = out,
                                  .counters = counters,
                                  .bins = *bins});
}

static int decode(const apsmpi_format *f, const void *in, size_t n, size_t first_index, const int16_t *scales,
                  size_t block_len, float *out, void *s)
{
    return enqueue(s, (struct op){.kind = OP_DECODE,
                                  .f = *f,
                                  .src = in,
                                  .n = n,
                                  .first = first_index,
                                  .scales = scales,
                                  .block_len = block_len,
                                  .dst = out});
}

static const char *error_string(int err) { return err == 2 ? "mock device: out of memory" : "mock device: error"; }

static const apsmpi_device_ops mock_ops = {
    .abi = APSMPI_DEVICE_PLUGIN_ABI,
    .name = "mock",
    .device_count = device_count,
    .device_of = device_of,
    .set_device = set_device,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_sync = stream_sync,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_sync = event_sync,
    .stream_wait_event = stream_wait_event,
    .device_alloc = device_alloc,
    .device_free = device_free,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .copy = copy,
    .block_exponents = block_exponents,
    .encode = encode,
    .decode = decode,
    .encode_measured = encode_measured,
    .error_string = error_string,
};

APSMPI_PLUGIN_EXPORT const apsmpi_device_ops *apsmpi_device_plugin(void) { return &mock_ops; }
