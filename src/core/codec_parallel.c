/* codec_parallel.c: the codec's buffer calls with the work cut over threads (core/thread_pool.h): the same bits as one thread. */
#include "core/codec_parallel.h"

#include <string.h>

#include "core/packed_layout.h"
#include "core/thread_pool.h"

/* Elements decoded at a time before they are added: small enough to stay in cache. */
enum { ADD_SLICE = 2048 };

/* One call's arguments, shared by its spans; a span's elements [lo, hi) start a packing group
 * (lo is a multiple of APSMPI_CODEC_GRAIN), so its codes start at packed byte lo's. */
typedef struct codec_loop {
    const apsmpi_codec *c;
    const float *in;
    const unsigned char *codes;
    size_t first;
    apsmpi_scales sc;
    apsmpi_rounding r;
    unsigned char *out;
    float *dst, *tmp;
    int set;
    uint64_t *flushed;        /* NULL, or one count per span */
    apsmpi_mx_measure *spans; /* apsmpi_encode_threads_measured: one measure per span */
} codec_loop;

static size_t bytes_before(const codec_loop *l, size_t lo)
{
    return apsmpi_packed_bytes(apsmpi_codec_format(l->c), lo);
}

static void encode_span(void *arg, size_t lo, size_t hi, int span)
{
    codec_loop *l = arg;
    apsmpi_encode(l->c, l->in + lo, hi - lo, l->first + lo, l->sc, l->r, l->out + bytes_before(l, lo),
                  l->flushed ? &l->flushed[span] : NULL);
}

void apsmpi_encode_threads(const apsmpi_codec *c, int threads, const float *in, size_t n, size_t first_index,
                           apsmpi_scales sc, apsmpi_rounding r, void *out, uint64_t *flushed)
{
    uint64_t counts[APSMPI_MAX_CODEC_THREADS] = {0};
    codec_loop l = {
        .c = c, .in = in, .first = first_index, .sc = sc, .r = r, .out = out, .flushed = flushed ? counts : NULL};
    int spans = apsmpi_pool_run(threads, n, APSMPI_CODEC_GRAIN, APSMPI_CODEC_MIN_SPAN, encode_span, &l);

    for (int p = 0; flushed && p < spans; p++)
        *flushed += counts[p];
}

static void encode_measured_span(void *arg, size_t lo, size_t hi, int span)
{
    codec_loop *l = arg;
    apsmpi_encode_measured(l->c, l->in + lo, hi - lo, l->first + lo, l->r, l->out + bytes_before(l, lo),
                           &l->spans[span]);
}

void apsmpi_encode_threads_measured(const apsmpi_codec *c, int threads, const float *in, size_t n, size_t first_index,
                                    apsmpi_rounding r, void *out, apsmpi_mx_measure *m)
{
    apsmpi_mx_measure spans[APSMPI_MAX_CODEC_THREADS];
    for (int p = 0; p < APSMPI_MAX_CODEC_THREADS; p++)
        spans[p] = (apsmpi_mx_measure){m->bins, {0}};
    codec_loop l = {.c = c, .in = in, .first = first_index, .r = r, .out = out, .spans = spans};
    int nspans = apsmpi_pool_run(threads, n, APSMPI_CODEC_GRAIN, APSMPI_CODEC_MIN_SPAN, encode_measured_span, &l);

    for (int p = 0; p < nspans; p++)
        for (int i = 0; i < APSMPI_MEASURE_COUNTERS; i++)
            m->count[i] += spans[p].count[i];
}

static void decode_span(void *arg, size_t lo, size_t hi, int span)
{
    codec_loop *l = arg;
    (void)span;
    apsmpi_decode(l->c, l->codes + bytes_before(l, lo), hi - lo, l->first + lo, l->sc, l->dst + lo);
}

void apsmpi_decode_threads(const apsmpi_codec *c, int threads, const void *in, size_t n, size_t first_index,
                           apsmpi_scales sc, float *out)
{
    codec_loop l = {.c = c, .codes = in, .first = first_index, .sc = sc, .dst = out};
    apsmpi_pool_run(threads, n, APSMPI_CODEC_GRAIN, APSMPI_CODEC_MIN_SPAN, decode_span, &l);
}

static void decode_add_span(void *arg, size_t lo, size_t hi, int span)
{
    codec_loop *l = arg;
    (void)span;
    if (l->set) {
        decode_span(arg, lo, hi, span);
        return;
    }
    for (size_t at = lo; at < hi; at += ADD_SLICE) {
        size_t len = hi - at < ADD_SLICE ? hi - at : ADD_SLICE;
        float *dst = l->dst + at, *tmp = l->tmp + at;
        apsmpi_decode(l->c, l->codes + bytes_before(l, at), len, l->first + at, l->sc, tmp);
        for (size_t i = 0; i < len; i++)
            dst[i] += tmp[i];
    }
}

void apsmpi_decode_add_threads(const apsmpi_codec *c, int threads, const void *in, size_t n, size_t first_index,
                               apsmpi_scales sc, float *dst, int set, float *tmp)
{
    codec_loop l = {.c = c, .codes = in, .first = first_index, .sc = sc, .dst = dst, .set = set, .tmp = tmp};
    apsmpi_pool_run(threads, n, APSMPI_CODEC_GRAIN, APSMPI_CODEC_MIN_SPAN, decode_add_span, &l);
}
