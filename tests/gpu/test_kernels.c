/* test_kernels.c: the CUDA kernels against the CPU codec and APS, bit for bit, for every format (SKIP without a GPU). */
/* Every comparison runs the CPU function (apsmpi_block_exponents, apsmpi_encode,
 * apsmpi_decode) and its kernel on the same input and compares block exponents, packed
 * bytes, decoded float bits and the flush counters exactly (for an MX format also the
 * measuring encode's counters, against core/width_controller.c's histogram of every block and
 * the codec's flushes); guard bytes around every device
 * output check that a kernel writes nothing outside its result. Inputs: random bit patterns,
 * gradient-like values, the whole float range, specials (zeros, subnormals, FLT_MAX, inf,
 * NaNs), rounding ties of each format under each block's scale, sparse buffers; lengths that
 * are no multiple of the packing group or of the block; scales per block (none, APS, random
 * up to +-330, the int16 extremes); nearest and stochastic rounding; first_index != 0;
 * misaligned pointers; buffers past 2^31 elements when the device has the memory.
 * Exit status 77 (SKIP) when there is no usable CUDA device.
 * For a slow device (a simulator, scripts/ci/check_gpusim.sh): APSMPI_TEST_MAX_ELEMS caps every
 * buffer length (and skips the 2^31 test), APSMPI_TEST_FORMATS (e.g. "fp16,e3m2") picks the
 * formats of the per-format tests, APSMPI_TEST_SAMPLE=K runs one in K of the positions and
 * block lengths of the block-exponent tests, APSMPI_TEST_ONLY and APSMPI_TEST_SKIP (globs)
 * pick tests by name.
 * Unset, everything runs at full size. Each
 * format draws its own random numbers, so a failure repeats with the format alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "apsmpi_kernels.h"
#include "core/aps.h"
#include "core/codec.h"
#include "core/format.h"
#include "core/flush_depth.h"
#include "core/fpconv.h"
#include "core/width_controller.h"

/* Every format the core accepts, by kind, every packed width 3..16, and the MX formats. */
static const char *const formats[] = {
    "fp16", "bf16", "e5m2",  "e4m3", "e4m3ieee", "e2m0",      "e2m1",  "e3m0",      "e3m1",  "e3m2",  "e2m3", "e4m2",
    "e2m5", "e7m0", "e3m5",  "e8m0", "e5m4",     "e4m6",      "e8m2",  "e4m7",      "e5m6",  "e4m8",  "e5m7", "e6m7",
    "e7m7", "e8m6", "e2m13", "e8m7", "mxfp8",    "mxfp8e5m2", "mxfp6", "mxfp6e2m3", "mxfp5", "mxfp4",
};
#define NFORMATS (sizeof formats / sizeof formats[0])

enum { GUARD = 64 };                  /* bytes checked on each side of a device output */
#define MAXN (((size_t)1 << 21) + 64) /* largest element count of the buffers below */
#define MAXS ((size_t)1 << 22)        /* largest scale count */

/* ---- device and host buffers, allocated once ---- */
static float *d_in, *d_dec;
static uint8_t *d_out;
static int16_t *d_exps, *d_scales;
static unsigned long long *d_counters;
static float *h_in, *h_dec_cpu, *h_dec_gpu;
static uint8_t *h_out_cpu, *h_out_gpu, *h_packed;
static int16_t *h_exps_cpu, *h_exps_gpu, *h_scales;

#define CUDA_OK(call)                                                                               \
    do {                                                                                            \
        cudaError_t err_ = (call);                                                                  \
        if (err_ != cudaSuccess)                                                                    \
            fail_msg("%s failed: %s (%s:%d)", #call, cudaGetErrorString(err_), __FILE__, __LINE__); \
    } while (0)

/* ---- limits for a slow device (see the top of the file) ---- */
static size_t max_elems = SIZE_MAX, sample_every = 1;
static const char *format_list; /* NULL: every format */

static size_t capped(size_t n) { return n < max_elems ? n : max_elems; }

/* 1 if format name is in APSMPI_TEST_FORMATS (or that is unset). */
static int format_selected(const char *name)
{
    size_t len = strlen(name);
    for (const char *p = format_list; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return format_list == NULL;
}

/* ---- random numbers: splitmix64 ---- */
static uint64_t rng_state = 0x243F6A8885A308D3ull, rng_seed;
static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint32_t rnd32(void) { return (uint32_t)(rnd64() >> 32); }
static size_t rnd_below(size_t n) { return (size_t)(rnd64() % n); }
static int rnd_int(int lo, int hi) /* uniform in [lo, hi] */ { return lo + (int)rnd_below((size_t)(hi - lo + 1)); }

static float f_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
static uint32_t u_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- the cases ---- */

enum kind { K_BITS, K_GRAD, K_WIDE, K_SPECIAL, K_TIES, K_SPARSE, K_ZEROS, NKINDS };
static const char *const kind_names[] = {"bits", "gradient", "wide", "special", "ties", "sparse", "zeros"};

enum scale_mode { SC_NONE, SC_APS, SC_RANDOM, SC_EDGE, NSCALES };
static const char *const scale_names[] = {"none", "aps", "random", "edge"};

/* Scales where the decoder changes method (-127..126 multiplies), overflow and underflow
 * for every format, and the int16 extremes. */
static const int edge_scales[] = {0, 1, -1, 126, 127, -127, -128, 125, -126, 150, -150, 300, -300, 32767, -32768, 64};
#define NEDGES (sizeof edge_scales / sizeof edge_scales[0])

typedef struct kcase {
    const char *name;
    apsmpi_format f;
    apsmpi_codec *codec;
    size_t n, first, block_len;
    int kind, scale_mode, nranks;
    apsmpi_rounding r;
    size_t in_off;   /* elements: the device input starts this far into its buffer */
    size_t out_off;  /* bytes (encode) or elements (decode) into the output buffer */
    int16_t *scales; /* host scales for buffer indices [0, first + n), or NULL */
    size_t nscales;
} kcase;

static const char *describe(const kcase *c)
{
    static char buf[400];
    snprintf(buf, sizeof buf,
             "format %s n %zu first %zu block_len %zu input %s scales %s rounding %s seed %llu call %llu "
             "in_off %zu out_off %zu",
             c->name, c->n, c->first, c->block_len, kind_names[c->kind], scale_names[c->scale_mode],
             c->r.stochastic ? "stochastic" : "nearest", (unsigned long long)c->r.seed, (unsigned long long)c->r.call,
             c->in_off, c->out_off);
    return buf;
}

static int scale_of(const kcase *c, size_t i) /* the scale of slice element i */
{
    return c->scales ? c->scales[(c->first + i) / c->block_len] : 0;
}

/* A value of the format (or a tie between two, or next to a tie), before the scale. */
static double format_boundary(const apsmpi_format *f)
{
    double sub = ldexp(1.0, f->emin - f->mbits); /* smallest subnormal */
    double top_ulp = ldexp(1.0, f->emax - f->mbits);
    double v;
    switch (rnd_int(0, 11)) {
    case 0:
        v = f->max_finite;
        break;
    case 1:
        v = f->max_finite + top_ulp / 2;
        break; /* the tie at the overflow threshold */
    case 2:
        v = f->max_finite + top_ulp / 2 * (1 - 1e-6);
        break;
    case 3:
        v = f->max_finite + top_ulp / 2 * (1 + 1e-6);
        break;
    case 4:
        v = sub / 2;
        break; /* tie between 0 and the smallest */
    case 5:
        v = sub * 1.5;
        break;
    case 6:
        v = sub * 0.75;
        break;
    case 7:
        v = ldexp(1.0, f->emin);
        break; /* smallest normal */
    case 8:
        v = ldexp(1.0, f->emin) - sub / 2;
        break;
    case 9:
        v = 1.0 + ldexp(1.0, -f->mbits - 1);
        break;
    case 10:
        v = 1.0 + 3 * ldexp(1.0, -f->mbits - 1);
        break;
    default:
        v = 2 * f->max_finite;
        break;
    }
    return rnd32() & 1 ? -v : v;
}

/* A random magnitude code's value, the next one's, or the tie between them (or next to it). */
static double format_tie(const apsmpi_format *f)
{
    uint32_t c = (uint32_t)rnd_below(f->max_code);
    double a = apsmpi_decode_one(c, 0, f), b = apsmpi_decode_one(c + 1, 0, f), mid = (a + b) / 2;
    double v;
    switch (rnd_int(0, 4)) {
    case 0:
        v = a;
        break;
    case 1:
        v = b;
        break;
    case 2:
        v = mid - (b - a) * ldexp(1.0, -30);
        break;
    case 3:
        v = mid + (b - a) * ldexp(1.0, -30);
        break;
    default:
        v = mid;
        break;
    }
    return rnd32() & 1 ? -v : v;
}

static const uint32_t special_bits[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u,
    0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u,
    0x7FFFFFFFu, 0xFFFFFFFFu, 0x3F800000u, 0xBF800000u, 0x00400000u, 0x33800000u,
};
#define NSPECIAL (sizeof special_bits / sizeof special_bits[0])

/* Fills slice element i of the case's kind; the scale of its block is known (SC_APS: 0). */
static float gen_value(const kcase *c, size_t i)
{
    int s = c->scale_mode == SC_APS ? 0 : scale_of(c, i);
    switch (c->kind) {
    case K_BITS:
        return f_of(rnd32());
    case K_GRAD: {
        if (rnd_below(50) == 0)
            return rnd32() & 1 ? -0.0f : 0.0f;
        uint32_t e = (uint32_t)rnd_int(127 - 40, 127 + 8);
        return f_of((rnd32() & 0x807FFFFFu) | e << 23);
    }
    case K_WIDE:
        return f_of((rnd32() & 0x807FFFFFu) | (uint32_t)rnd_int(0, 254) << 23);
    case K_SPECIAL:
        if (rnd32() & 1)
            return f_of(special_bits[rnd_below(NSPECIAL)]);
        return (float)ldexp(format_boundary(&c->f), -s);
    case K_TIES:
        return (float)ldexp(format_tie(&c->f), -s);
    case K_SPARSE:
        if (rnd_below(1000) != 0)
            return 0.0f;
        if (rnd_below(50) == 0)
            return f_of(special_bits[rnd_below(NSPECIAL)]);
        return f_of((rnd32() & 0x807FFFFFu) | (uint32_t)rnd_int(0, 254) << 23);
    default:
        return rnd_below(5000) == 0 ? f_of(rnd32() & 0x807FFFFFu) : 0.0f; /* zeros, a few subnormals */
    }
}

/* The scales of the case for buffer indices [0, first + n): blocks wholly before the slice
 * get scale 0; SC_APS derives them from the slice (the caller fills h_in first). */
static void make_scales(kcase *c, const float *in)
{
    c->scales = NULL;
    c->nscales = 0;
    if (c->scale_mode == SC_NONE)
        return;
    size_t total = c->first + c->n;
    c->nscales = c->block_len >= total ? 1 : (total + c->block_len - 1) / c->block_len;
    assert_true(c->nscales <= MAXS);
    c->scales = h_scales;
    for (size_t b = 0; b < c->nscales; b++) {
        switch (c->scale_mode) {
        case SC_APS:
            c->scales[b] = APSMPI_EXP_ZERO;
            break;
        case SC_RANDOM:
            c->scales[b] = (int16_t)(rnd_below(8) == 0 ? rnd_int(-330, 330) : rnd_int(-40, 40));
            break;
        default:
            c->scales[b] = (int16_t)edge_scales[(b + rnd_below(3)) % NEDGES];
            break;
        }
    }
    if (c->scale_mode == SC_APS) {
        for (size_t i = 0; i < c->n; i++) {
            size_t b = (c->first + i) / c->block_len;
            int16_t e = apsmpi_exponent_of(u_of(in[i]) & 0x7fffffffu);
            if (e > c->scales[b])
                c->scales[b] = e;
        }
        apsmpi_exponents_to_scales(c->scales, c->nscales, &c->f, c->nranks);
    }
}

/* ---- device helpers ---- */

static void upload_scales(const kcase *c)
{
    if (c->scales)
        CUDA_OK(cudaMemcpy(d_scales, c->scales, c->nscales * sizeof *d_scales, cudaMemcpyHostToDevice));
}

/* Guard pattern over [0, bytes) of a device buffer. */
static void guard_fill(void *d, size_t bytes) { CUDA_OK(cudaMemset(d, 0xA5, bytes)); }

/* 1 if h[from, to) all hold the guard pattern. */
static int guard_intact(const uint8_t *h, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++)
        if (h[k] != 0xA5)
            return 0;
    return 1;
}

static void sync_ok(void)
{
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaGetLastError());
}

/* ---- the comparisons ---- */

static size_t packed_bytes(const apsmpi_format *f, size_t n) { return apsmpi_groups_for(f, n) * apsmpi_group_bytes(f); }

/* auto's default ladder (core/width_controller.h: mxfp4, mxfp5, mxfp6, mxfp8, FP32), parsed in setup. */
static apsmpi_ladder ladder;

/* The ladder's bins (a bin per rung below FP32), or bins drawn at random. */
static apsmpi_depth_bins depth_bins(int of_ladder)
{
    apsmpi_depth_bins bins;
    for (int k = 0; k < APSMPI_DEPTH_BINS; k++)
        bins.depth[k] = !of_ladder                        ? rnd_int(-2, 40)
                        : k < apsmpi_ladder_fp32(&ladder) ? ladder.depth[k]
                                                          : APSMPI_DEPTH_NONE;
    return bins;
}

/* The counters a measuring encode of x[0..n) must give with the ladder's bins: the non-zero values
 * and the depths that core/width_controller.c's apsmpi_flush_depths counts over every block (in
 * ranges of APSMPI_MEASURE_BLOCKS blocks, which it counts whole), and the CPU codec's flushes. */
static void ladder_counts(const float *x, size_t n, uint64_t flushed, uint64_t want[APSMPI_MEASURE_COUNTERS])
{
    apsmpi_flush_measure m = {0};
    for (size_t at = 0; at < n; at += (size_t)APSMPI_MEASURE_BLOCKS * 32)
        apsmpi_flush_depths(x + at, n - at < (size_t)APSMPI_MEASURE_BLOCKS * 32 ? n - at : APSMPI_MEASURE_BLOCKS * 32,
                            &ladder, &m);
    assert_int_equal(m.counted, n);
    memset(want, 0, APSMPI_MEASURE_COUNTERS * sizeof *want);
    want[APSMPI_COUNT_NONZERO] = m.nonzero;
    want[APSMPI_COUNT_FLUSHED] = flushed;
    for (int r = 0; r < apsmpi_ladder_fp32(&ladder); r++)
        want[APSMPI_COUNT_DEEP + r] = m.deep[r];
}

/* The measuring MX encode of h_in[0..n) (APSMPI_FORMAT=auto's): the CPU's bytes, and counters
 * that the CPU's measure gives (ladder_counts), or with bins drawn at random the counts of
 * core/flush_depth.h made block by block here. The counters start from random values. */
static void check_encode_measured(const kcase *c, uint64_t flushed, uint64_t nonzero)
{
    size_t bytes = packed_bytes(&c->f, c->n), span = c->out_off + bytes + GUARD;
    int ladder = (int)rnd_below(2);
    apsmpi_depth_bins bins = depth_bins(ladder);
    uint64_t want[APSMPI_MEASURE_COUNTERS] = {0};
    unsigned long long cnt0[APSMPI_MEASURE_COUNTERS], cnt[APSMPI_MEASURE_COUNTERS];

    if (ladder) {
        ladder_counts(h_in, c->n, flushed, want);
    } else {
        for (size_t b = 0; b < c->n; b += 32)
            apsmpi_block_depth_counts((const uint32_t *)(const void *)(h_in + b), c->n - b < 32 ? (int)(c->n - b) : 32,
                                      &bins, want);
        want[APSMPI_COUNT_FLUSHED] = flushed;
    }
    assert_int_equal(want[APSMPI_COUNT_NONZERO], nonzero);
    for (int k = 0; k < APSMPI_MEASURE_COUNTERS; k++)
        cnt0[k] = rnd64() >> 20;
    CUDA_OK(cudaMemcpy(d_counters, cnt0, sizeof cnt0, cudaMemcpyHostToDevice));
    guard_fill(d_out, span);
    int rc = apsmpi_cuda_encode_measured(&c->f, d_in + c->in_off, c->n, c->first, c->r, &bins, d_out + c->out_off,
                                         d_counters, NULL);
    if (rc != 0)
        fail_msg("apsmpi_cuda_encode_measured returned %d (%s): %s", rc, cudaGetErrorString((cudaError_t)rc),
                 describe(c));
    sync_ok();
    CUDA_OK(cudaMemcpy(h_out_gpu, d_out, span, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(cnt, d_counters, sizeof cnt, cudaMemcpyDeviceToHost));
    if (memcmp(h_out_gpu + c->out_off, h_out_cpu, bytes) != 0 || !guard_intact(h_out_gpu, 0, c->out_off) ||
        !guard_intact(h_out_gpu, c->out_off + bytes, span))
        fail_msg("the measuring encode's bytes differ from the CPU's: %s", describe(c));
    for (int k = 0; k < APSMPI_MEASURE_COUNTERS; k++)
        if (cnt[k] - cnt0[k] != want[k])
            fail_msg("the measuring encode's counter %d (%s bins %d %d %d %d): gpu +%llu, cpu %llu: %s", k,
                     ladder ? "the ladder's" : "random", bins.depth[0], bins.depth[1], bins.depth[2], bins.depth[3],
                     cnt[k] - cnt0[k], (unsigned long long)want[k], describe(c));
}

/* Encodes h_in[0..n) on both sides; the CPU result stays in h_out_cpu. */
static void check_encode(const kcase *c)
{
    size_t bytes = packed_bytes(&c->f, c->n);
    apsmpi_scales sc = {c->scales, c->block_len};
    uint64_t flushed = 0, nonzero = 0;
    apsmpi_encode(c->codec, h_in, c->n, c->first, sc, c->r, h_out_cpu, &flushed);
    for (size_t i = 0; i < c->n; i++)
        nonzero += (u_of(h_in[i]) << 1) != 0;

    unsigned long long cnt0[2] = {rnd64() >> 20, rnd64() >> 20}, cnt[2];
    CUDA_OK(cudaMemcpy(d_in + c->in_off, h_in, c->n * sizeof *h_in, cudaMemcpyHostToDevice));
    upload_scales(c);
    CUDA_OK(cudaMemcpy(d_counters, cnt0, sizeof cnt0, cudaMemcpyHostToDevice));
    size_t span = c->out_off + bytes + GUARD;
    guard_fill(d_out, span);
    int rc = apsmpi_cuda_encode(&c->f, d_in + c->in_off, c->n, c->first, c->scales ? d_scales : NULL, c->block_len,
                                c->r, d_out + c->out_off, d_counters, NULL);
    if (rc != 0)
        fail_msg("apsmpi_cuda_encode returned %d (%s): %s", rc, cudaGetErrorString((cudaError_t)rc), describe(c));
    sync_ok();
    CUDA_OK(cudaMemcpy(h_out_gpu, d_out, span, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(cnt, d_counters, sizeof cnt, cudaMemcpyDeviceToHost));

    if (!guard_intact(h_out_gpu, 0, c->out_off) || !guard_intact(h_out_gpu, c->out_off + bytes, span))
        fail_msg("encode wrote outside its %zu output bytes: %s", bytes, describe(c));
    for (size_t k = 0; k < bytes; k++) {
        if (h_out_gpu[c->out_off + k] != h_out_cpu[k]) {
            size_t g = apsmpi_group_elems(&c->f), gb = apsmpi_group_bytes(&c->f), i = k / gb * g;
            fail_msg("encode: byte %zu (group of elements %zu..%zu, first input %08x scale %d) cpu %02x gpu %02x: %s",
                     k, i, i + g - 1, i < c->n ? u_of(h_in[i]) : 0u, i < c->n ? scale_of(c, i) : 0, h_out_cpu[k],
                     h_out_gpu[c->out_off + k], describe(c));
        }
    }
    if (cnt[0] != cnt0[0] + nonzero || cnt[1] != cnt0[1] + flushed)
        fail_msg("encode counters: non-zero +%llu (cpu %llu), flushed +%llu (cpu %llu): %s", cnt[0] - cnt0[0],
                 (unsigned long long)nonzero, cnt[1] - cnt0[1], (unsigned long long)flushed, describe(c));
    /* without counters, the same bytes */
    guard_fill(d_out, span);
    rc = apsmpi_cuda_encode(&c->f, d_in + c->in_off, c->n, c->first, c->scales ? d_scales : NULL, c->block_len, c->r,
                            d_out + c->out_off, NULL, NULL);
    assert_int_equal(rc, 0);
    sync_ok();
    CUDA_OK(cudaMemcpy(h_out_gpu, d_out, span, cudaMemcpyDeviceToHost));
    if (memcmp(h_out_gpu + c->out_off, h_out_cpu, bytes) != 0 || !guard_intact(h_out_gpu, c->out_off + bytes, span))
        fail_msg("encode without counters differs: %s", describe(c));
    if (c->f.mx)
        check_encode_measured(c, flushed, nonzero);
}

/* Decodes the packed bytes at h_packed on both sides. */
static void check_decode(const kcase *c)
{
    size_t bytes = packed_bytes(&c->f, c->n);
    apsmpi_scales sc = {c->scales, c->block_len};
    apsmpi_decode(c->codec, h_packed, c->n, c->first, sc, h_dec_cpu);

    /* the packed input starts in_off bytes into d_out (misaligned when in_off % 4 != 0) */
    CUDA_OK(cudaMemcpy(d_out + c->in_off, h_packed, bytes, cudaMemcpyHostToDevice));
    upload_scales(c);
    size_t span = (c->out_off + c->n) * sizeof(float) + GUARD;
    guard_fill(d_dec, span);
    int rc = apsmpi_cuda_decode(&c->f, d_out + c->in_off, c->n, c->first, c->scales ? d_scales : NULL, c->block_len,
                                d_dec + c->out_off, NULL);
    if (rc != 0)
        fail_msg("apsmpi_cuda_decode returned %d (%s): %s", rc, cudaGetErrorString((cudaError_t)rc), describe(c));
    sync_ok();
    CUDA_OK(cudaMemcpy(h_dec_gpu, d_dec, span, cudaMemcpyDeviceToHost));
    const uint8_t *raw = (const uint8_t *)h_dec_gpu;
    if (!guard_intact(raw, 0, c->out_off * sizeof(float)) ||
        !guard_intact(raw, (c->out_off + c->n) * sizeof(float), span))
        fail_msg("decode wrote outside its %zu floats: %s", c->n, describe(c));
    for (size_t i = 0; i < c->n; i++) {
        uint32_t a = u_of(h_dec_cpu[i]), b = u_of(h_dec_gpu[c->out_off + i]);
        if (a != b)
            fail_msg("decode: element %zu (scale %d) cpu %08x (%g) gpu %08x (%g): %s", i, scale_of(c, i), a,
                     (double)h_dec_cpu[i], b, (double)h_dec_gpu[c->out_off + i], describe(c));
    }
}

/* Block exponents of h_in[0..n) on both sides (c->first, scales and format unused). */
static void check_exponents(const kcase *c)
{
    size_t nb = c->block_len >= c->n ? 1 : (c->n + c->block_len - 1) / c->block_len;
    size_t eo = c->out_off; /* int16 elements into d_exps: odd offsets test the 16-bit atomics */
    /* the CPU's apsmpi_block_count(n, block_len) overflows for block_len near SIZE_MAX: give
     * it n, the same single block */
    for (size_t b = 0; b < nb; b++)
        h_exps_cpu[b] = 0x5A5A;
    apsmpi_block_exponents(h_in, c->n, c->block_len < c->n ? c->block_len : c->n, h_exps_cpu);
    CUDA_OK(cudaMemcpy(d_in + c->in_off, h_in, c->n * sizeof *h_in, cudaMemcpyHostToDevice));
    size_t span = (eo + nb) * sizeof(int16_t) + GUARD;
    guard_fill(d_exps, span);
    int rc = apsmpi_cuda_block_exponents(d_in + c->in_off, c->n, c->block_len, d_exps + eo, NULL);
    if (rc != 0)
        fail_msg("apsmpi_cuda_block_exponents returned %d (%s): %s", rc, cudaGetErrorString((cudaError_t)rc),
                 describe(c));
    sync_ok();
    CUDA_OK(cudaMemcpy(h_exps_gpu, d_exps, span, cudaMemcpyDeviceToHost));
    const uint8_t *raw = (const uint8_t *)h_exps_gpu;
    if (!guard_intact(raw, 0, eo * sizeof(int16_t)) || !guard_intact(raw, (eo + nb) * sizeof(int16_t), span))
        fail_msg("block exponents wrote outside its %zu results: %s", nb, describe(c));
    for (size_t b = 0; b < nb; b++)
        if (h_exps_cpu[b] != h_exps_gpu[eo + b])
            fail_msg("block exponent %zu of %zu: cpu %d gpu %d: %s", b, nb, h_exps_cpu[b], h_exps_gpu[eo + b],
                     describe(c));
}

static void case_open(kcase *c, const char *name)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    assert_int_equal(apsmpi_format_parse(name, &c->f), 0);
    c->codec = apsmpi_codec_create(&c->f);
    assert_non_null(c->codec);
    c->nranks = 1;
    c->block_len = 1;
}

/* Fills h_in and the scales of the case. */
static void case_fill(kcase *c)
{
    assert_true(c->n <= MAXN);
    if (c->scale_mode != SC_APS)
        make_scales(c, NULL);
    for (size_t i = 0; i < c->n; i++)
        h_in[i] = gen_value(c, i);
    if (c->scale_mode == SC_APS)
        make_scales(c, h_in);
}

/* ---- the tests ---- */

static const size_t lengths[] = {1, 2, 3, 5, 7, 8, 9, 15, 31, 33, 100, 255, 257, 1000, 4095, 4097, 8193, 30011, 65539};
#define NLENGTHS (sizeof lengths / sizeof lengths[0])
static const size_t block_lens[] = {1, 3, 7, 8, 16, 17, 100, 1000, 4096, 5000, 8192, 16385, 100000, SIZE_MAX};
#define NBLOCKLENS (sizeof block_lens / sizeof block_lens[0])

/* n == 0: nothing is written, whatever the pointers. */
static void test_zero_length(void **state)
{
    apsmpi_format f;
    apsmpi_rounding r = {1, 7, 9};
    assert_int_equal(apsmpi_format_parse("e3m2", &f), 0);
    guard_fill(d_out, GUARD);
    guard_fill(d_exps, GUARD);
    guard_fill(d_dec, GUARD);
    assert_int_equal(apsmpi_cuda_block_exponents(d_in, 0, 16, d_exps, NULL), 0);
    assert_int_equal(apsmpi_cuda_block_exponents(NULL, 0, 0, NULL, NULL), 0);
    assert_int_equal(apsmpi_cuda_encode(&f, d_in, 0, 0, d_scales, 16, r, d_out, d_counters, NULL), 0);
    assert_int_equal(apsmpi_cuda_encode(&f, NULL, 0, 8, NULL, 0, r, NULL, NULL, NULL), 0);
    assert_int_equal(apsmpi_cuda_decode(&f, d_out, 0, 0, d_scales, 16, d_dec, NULL), 0);
    assert_int_equal(apsmpi_cuda_decode(&f, NULL, 0, 0, NULL, 0, NULL, NULL), 0);
    sync_ok();
    uint8_t h[3 * GUARD];
    CUDA_OK(cudaMemcpy(h, d_out, GUARD, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(h + GUARD, d_exps, GUARD, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(h + 2 * GUARD, d_dec, GUARD, cudaMemcpyDeviceToHost));
    assert_true(guard_intact(h, 0, sizeof h));
    /* a block length of 0 with scales is refused, not run */
    assert_int_not_equal(apsmpi_cuda_block_exponents(d_in, 10, 0, d_exps, NULL), 0);
    assert_int_not_equal(apsmpi_cuda_encode(&f, d_in, 10, 0, d_scales, 0, r, d_out, NULL, NULL), 0);
    assert_int_not_equal(apsmpi_cuda_decode(&f, d_out, 10, 0, d_scales, 0, d_dec, NULL), 0);
    /* a measuring encode is an MX format's, with bins and counters */
    apsmpi_format mx;
    apsmpi_depth_bins bins = depth_bins(1);
    assert_int_equal(apsmpi_format_parse("mxfp4", &mx), 0);
    assert_int_equal(apsmpi_cuda_encode_measured(&mx, NULL, 0, 0, r, NULL, NULL, NULL, NULL), 0);
    assert_int_not_equal(apsmpi_cuda_encode_measured(&f, d_in, 10, 0, r, &bins, d_out, d_counters, NULL), 0);
    assert_int_not_equal(apsmpi_cuda_encode_measured(&mx, d_in, 10, 0, r, NULL, d_out, d_counters, NULL), 0);
    assert_int_not_equal(apsmpi_cuda_encode_measured(&mx, d_in, 10, 0, r, &bins, d_out, NULL, NULL), 0);
    (void)cudaGetLastError();
}

static void test_block_exponents(void **state)
{
    kcase c;
    case_open(&c, "fp16");
    static const size_t ns[] = {1, 5, 100, 4099, 70001, (1u << 21) + 3};
    static const size_t bls[] = {1, 2, 7, 16, 17, 32, 33, 1000, 4096, 8192, 8193, 16384, 20000, 100000, 1u << 20};
    static const int kinds[] = {K_BITS, K_GRAD, K_WIDE, K_SPECIAL, K_SPARSE, K_ZEROS};
    size_t iter = 0;
    for (size_t in = 0; in < sizeof ns / sizeof ns[0] && (in == 0 || ns[in - 1] < max_elems); in++) {
        for (size_t ik = 0; ik < sizeof kinds / sizeof kinds[0]; ik++) {
            c.n = capped(ns[in]);
            c.kind = kinds[ik];
            c.scale_mode = SC_NONE;
            case_fill(&c);
            size_t nbl = sizeof bls / sizeof bls[0];
            for (size_t ib = 0; ib < nbl + 4; ib++, iter++) {
                if (iter % sample_every != 0)
                    continue;
                /* the listed lengths, then n - 1, n, n + 1 and SIZE_MAX (one block) */
                size_t extra[4] = {c.n > 1 ? c.n - 1 : 1, c.n, c.n + 1, SIZE_MAX};
                c.block_len = ib < nbl ? bls[ib] : extra[ib - nbl];
                c.in_off = iter % 4;  /* 0..3 floats: all 16-byte alignments of the input */
                c.out_off = iter % 3; /* 0..2 int16: 4-byte and 2-byte aligned exponents */
                check_exponents(&c);
            }
        }
    }
    apsmpi_codec_free(c.codec);
}

/* One hot element among small ones (or zeros), at each position where a reduction could
 * miss it: the ends of every block and of every 16384-element segment that the kernel for
 * large blocks cuts them into (for these sizes its segments are exactly 16384 long on any
 * device), the first and last elements, and every element of the small cases. */
static void test_block_exponents_one_hot(void **state)
{
    static const struct {
        size_t n, bl;
    } cfg[] = {
        {131071, SIZE_MAX}, {131071, 40000}, {100003, 16385}, {100003, 8192}, {70001, 20000}, {1000, 1000},
        {1000, 100},        {1000, 17},      {1000, 16},      {1000, 5},      {1000, 1},
    };
    static const uint32_t hot[] = {0x5D800000u /* 2^60 */, 0x7F800000u, 0x7FC00001u, 0x00000001u};
    kcase c;
    case_open(&c, "fp16");
    size_t iter = 0;
    size_t *pos = malloc(4096 * sizeof *pos);
    assert_non_null(pos);
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        c.n = capped(cfg[ci].n);
        c.block_len = cfg[ci].bl;
        size_t np = 0;
        if (c.n <= 1000) {
            for (size_t p = 0; p < c.n; p++)
                pos[np++] = p;
        } else {
            size_t bl = c.block_len < c.n ? c.block_len : c.n;
            for (size_t p = 0; p < 6; p++) {
                pos[np++] = p;
                pos[np++] = c.n - 1 - p;
            }
            for (size_t blo = 0; blo < c.n; blo += bl) {
                size_t bhi = c.n - blo < bl ? c.n : blo + bl;
                for (size_t at = blo; at < bhi; at += 16384) {
                    pos[np++] = at;
                    pos[np++] = at + 1;
                    if (at > 0)
                        pos[np++] = at - 1;
                }
                pos[np++] = bhi - 1;
                pos[np++] = bhi - 2;
            }
            for (int k = 0; k < 20; k++)
                pos[np++] = rnd_below(c.n);
        }
        for (int zeros = 0; zeros < 2; zeros++) {
            c.kind = zeros ? K_ZEROS : K_GRAD;
            c.scale_mode = SC_NONE;
            case_fill(&c);
            if (zeros)
                memset(h_in, 0, c.n * sizeof *h_in);
            for (size_t k = 0; k < np; k++, iter++) {
                size_t p = pos[k];
                if (iter % sample_every != 0)
                    continue;
                float save = h_in[p];
                h_in[p] = f_of(hot[(iter + zeros) % 4] | (uint32_t)(iter & 1) << 31);
                c.in_off = iter % 4;
                c.out_off = iter % 3;
                check_exponents(&c);
                h_in[p] = save;
            }
        }
    }
    free(pos);
    apsmpi_codec_free(c.codec);
}

/* Encode then decode, CPU against GPU, over formats, inputs, scales, roundings and lengths. */
static void test_encode_decode(void **state)
{
    for (size_t fi = 0; fi < NFORMATS; fi++) {
        kcase c;
        size_t iter = fi * NSCALES * NKINDS * 2;
        if (!format_selected(formats[fi]))
            continue;
        rng_state = rng_seed + fi * 0xD1B54A32D192ED03ull;
        case_open(&c, formats[fi]);
        size_t g = apsmpi_group_elems(&c.f);
        for (int sm = 0; sm < NSCALES; sm++) {
            for (int kind = 0; kind < NKINDS; kind++) {
                for (int sr = 0; sr < 2; sr++, iter++) {
                    c.kind = kind;
                    c.scale_mode = sm;
                    c.n = capped(lengths[(iter * 7 + fi) % NLENGTHS]);
                    c.block_len = block_lens[(iter * 5 + kind) % NBLOCKLENS];
                    /* first_index: a multiple of the packing group; huge without scales */
                    c.first = sm == SC_NONE && iter % 3 == 0 ? ((size_t)1 << 35) + 8 * g : g * rnd_below(3000);
                    if (sm != SC_NONE && iter % 4 == 1) { /* block indices from buffer indices past 2^31, 2^32 */
                        c.first = ((size_t)(iter % 8 == 1 ? 3 : 5) << 30) + g * rnd_below(3000);
                        c.block_len = ((size_t)1 << 28) + rnd_below(1000);
                    }
                    c.nranks = 1 << rnd_int(0, 10);
                    c.r.stochastic = sr;
                    c.r.seed = rnd64();
                    c.r.call = rnd64() >> rnd_int(0, 63);
                    c.in_off = iter % 5;        /* floats */
                    c.out_off = (iter / 5) % 4; /* bytes */
                    case_fill(&c);
                    check_encode(&c);
                    /* decode what the CPU encoded, then random bytes (every code, NaNs included) */
                    memcpy(h_packed, h_out_cpu, packed_bytes(&c.f, c.n));
                    c.in_off = iter % 4;
                    c.out_off = (iter / 4) % 4;
                    check_decode(&c);
                    for (size_t k = 0; k < packed_bytes(&c.f, c.n); k++)
                        h_packed[k] = (uint8_t)rnd32();
                    check_decode(&c);
                }
            }
        }
        /* one long buffer per format: many thread blocks and grid-stride steps */
        c.kind = K_GRAD;
        c.scale_mode = SC_APS;
        c.n = capped(((size_t)1 << 21) + 5);
        c.block_len = 4096;
        c.first = 16 * g;
        c.r.stochastic = (int)(fi & 1);
        c.in_off = 0;
        c.out_off = 0;
        case_fill(&c);
        check_encode(&c);
        memcpy(h_packed, h_out_cpu, packed_bytes(&c.f, c.n));
        check_decode(&c);
        apsmpi_codec_free(c.codec);
    }
}

/* Every code of every format under every edge scale (under APSMPI_TEST_MAX_ELEMS: the scales
 * that fit, at least scale 0); the packing written independently here. */
static void test_decode_every_code(void **state)
{
    for (size_t fi = 0; fi < NFORMATS; fi++) {
        kcase c;
        if (!format_selected(formats[fi]))
            continue;
        case_open(&c, formats[fi]);
        if (c.f.mx) { /* its own layout: test_mx_decode_every_code */
            apsmpi_codec_free(c.codec);
            continue;
        }
        int w = c.f.width;
        size_t ncodes = (size_t)1 << w;
        /* APSMPI_TEST_MAX_ELEMS: as many edge scales as fit, at least the first (0): every code */
        size_t nedges = capped(ncodes * NEDGES) / ncodes;
        nedges = nedges < 1 ? 1 : nedges > NEDGES ? NEDGES : nedges;
        c.n = ncodes * nedges;
        c.block_len = ncodes;
        c.scale_mode = SC_EDGE;
        c.nscales = nedges;
        c.scales = h_scales;
        for (size_t b = 0; b < NEDGES; b++)
            h_scales[b] = (int16_t)edge_scales[b];
        size_t bytes = packed_bytes(&c.f, c.n);
        memset(h_packed, 0, bytes);
        for (size_t i = 0; i < c.n; i++) { /* LSB-first bit stream: element i at bit i * w */
            uint32_t code = (uint32_t)(i % ncodes);
            for (int k = 0; k < w; k++)
                if (code >> k & 1u)
                    h_packed[(i * w + k) >> 3] |= (uint8_t)(1u << ((i * w + k) & 7));
        }
        /* the CPU reads this layout as the codes written */
        apsmpi_scales sc = {c.scales, c.block_len};
        apsmpi_decode(c.codec, h_packed, c.n, 0, sc, h_dec_cpu);
        for (size_t i = 0; i < c.n; i++) {
            float want = apsmpi_decode_one((uint32_t)(i % ncodes), edge_scales[i / ncodes], &c.f);
            if (u_of(want) != u_of(h_dec_cpu[i]) && !(isnan(want) && isnan(h_dec_cpu[i])))
                fail_msg("layout: element %zu of %s decodes to %08x on the CPU, code %zu is %08x", i, c.name,
                         u_of(h_dec_cpu[i]), i % ncodes, u_of(want));
        }
        c.in_off = fi % 4;
        c.out_off = (fi / 4) % 4;
        check_decode(&c);
        apsmpi_codec_free(c.codec);
    }
}

/* Every code of every MX format under scale bytes from the ends of E8M0 (the smallest, whose
 * products are float subnormals; 127; the largest; NaN), the blocks laid out here: the scale
 * byte, then the codes bit by bit (the CPU codec reads this layout as the codes written:
 * tests/unit/test_mx.c). */
static void test_mx_decode_every_code(void **state)
{
    static const uint8_t scale_bytes[] = {0, 1, 9, 100, 126, 127, 128, 200, 239, 246, 254, 255};
    const size_t nscales = sizeof scale_bytes / sizeof scale_bytes[0];
    for (size_t fi = 0; fi < NFORMATS; fi++) {
        kcase c;
        if (!format_selected(formats[fi]))
            continue;
        case_open(&c, formats[fi]);
        if (!c.f.mx) {
            apsmpi_codec_free(c.codec);
            continue;
        }
        int w = c.f.width;
        size_t ncodes = (size_t)1 << w, per_scale = ncodes < 32 ? 32 : ncodes;
        size_t gb = apsmpi_group_bytes(&c.f);
        c.n = capped(per_scale * nscales) / 32 * 32;
        c.n = c.n < per_scale ? per_scale : c.n;
        memset(h_packed, 0, packed_bytes(&c.f, c.n));
        for (size_t i = 0; i < c.n; i++) {
            uint8_t *g = h_packed + i / 32 * gb;
            uint32_t code = (uint32_t)(i % ncodes);
            size_t j = i % 32;
            g[0] = scale_bytes[(i / per_scale) % nscales];
            for (int k = 0; k < w; k++)
                if (code >> k & 1u)
                    g[1 + ((j * w + k) >> 3)] |= (uint8_t)(1u << ((j * w + k) & 7));
        }
        c.in_off = fi % 4;
        c.out_off = (fi / 4) % 4;
        check_decode(&c);
        apsmpi_codec_free(c.codec);
    }
}

/* A buffer encoded in stages (the pipeline) equals the CPU's encoding of the whole, and
 * decoding the stages equals decoding the whole. */
static void test_stages(void **state)
{
    static const char *const names[] = {"e3m2", "e4m3", "fp16",  "e5m6",  "e2m0",
                                        "e7m7", "bf16", "mxfp6", "mxfp5", "mxfp4"};
    for (size_t fi = 0; fi < sizeof names / sizeof names[0]; fi++) {
        kcase c;
        if (!format_selected(names[fi]))
            continue;
        rng_state = rng_seed + (fi + 100) * 0xD1B54A32D192ED03ull;
        case_open(&c, names[fi]);
        size_t g = apsmpi_group_elems(&c.f), gb = apsmpi_group_bytes(&c.f);
        c.n = capped(300007);
        c.first = 0;
        c.block_len = 1000;
        c.kind = K_GRAD;
        c.scale_mode = SC_APS;
        c.nranks = 8;
        c.r.stochastic = 1;
        c.r.seed = 42 + fi;
        c.r.call = 7;
        case_fill(&c);
        size_t bytes = packed_bytes(&c.f, c.n);
        apsmpi_scales sc = {c.scales, c.block_len};
        uint64_t flushed = 0;
        apsmpi_encode(c.codec, h_in, c.n, 0, sc, c.r, h_out_cpu, &flushed);
        apsmpi_decode(c.codec, h_out_cpu, c.n, 0, sc, h_dec_cpu);

        CUDA_OK(cudaMemcpy(d_in, h_in, c.n * sizeof *h_in, cudaMemcpyHostToDevice));
        upload_scales(&c);
        CUDA_OK(cudaMemset(d_counters, 0, 2 * sizeof *d_counters));
        guard_fill(d_out, bytes + GUARD);
        guard_fill(d_dec, c.n * sizeof(float) + GUARD);
        /* reduced (APSMPI_TEST_MAX_ELEMS): still at least three stages */
        size_t stage = g * (1 + rnd_below(max_elems == SIZE_MAX ? 20000 : c.n / g / 3 + 1));
        for (size_t at = 0; at < c.n; at += stage) {
            size_t len = c.n - at < stage ? c.n - at : stage;
            assert_int_equal(apsmpi_cuda_encode(&c.f, d_in + at, len, at, d_scales, c.block_len, c.r,
                                                d_out + at / g * gb, d_counters, NULL),
                             0);
        }
        for (size_t at = 0; at < c.n; at += stage) {
            size_t len = c.n - at < stage ? c.n - at : stage;
            assert_int_equal(
                apsmpi_cuda_decode(&c.f, d_out + at / g * gb, len, at, d_scales, c.block_len, d_dec + at, NULL), 0);
        }
        sync_ok();
        unsigned long long cnt[2];
        CUDA_OK(cudaMemcpy(h_out_gpu, d_out, bytes + GUARD, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(h_dec_gpu, d_dec, c.n * sizeof(float) + GUARD, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(cnt, d_counters, sizeof cnt, cudaMemcpyDeviceToHost));
        if (memcmp(h_out_gpu, h_out_cpu, bytes) != 0 || !guard_intact(h_out_gpu, bytes, bytes + GUARD))
            fail_msg("encode in stages (stage %zu) differs from the CPU: %s", stage, describe(&c));
        if (memcmp(h_dec_gpu, h_dec_cpu, c.n * sizeof(float)) != 0 ||
            !guard_intact((const uint8_t *)h_dec_gpu, c.n * sizeof(float), c.n * sizeof(float) + GUARD))
            fail_msg("decode in stages (stage %zu) differs from the CPU: %s", stage, describe(&c));
        uint64_t nonzero = 0;
        for (size_t i = 0; i < c.n; i++)
            nonzero += (u_of(h_in[i]) << 1) != 0;
        assert_int_equal(cnt[0], nonzero);
        assert_int_equal(cnt[1], flushed);
        if (c.f.mx) { /* the measuring encode in the same stages: the counts of the whole */
            apsmpi_depth_bins bins = depth_bins(1);
            unsigned long long got[APSMPI_MEASURE_COUNTERS];
            uint64_t want[APSMPI_MEASURE_COUNTERS];
            ladder_counts(h_in, c.n, flushed, want);
            CUDA_OK(cudaMemset(d_counters, 0, sizeof got));
            for (size_t at = 0; at < c.n; at += stage) {
                size_t len = c.n - at < stage ? c.n - at : stage;
                assert_int_equal(apsmpi_cuda_encode_measured(&c.f, d_in + at, len, at, c.r, &bins, d_out + at / g * gb,
                                                             d_counters, NULL),
                                 0);
            }
            sync_ok();
            CUDA_OK(cudaMemcpy(h_out_gpu, d_out, bytes, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(got, d_counters, sizeof got, cudaMemcpyDeviceToHost));
            if (memcmp(h_out_gpu, h_out_cpu, bytes) != 0)
                fail_msg("measuring encode in stages (stage %zu) differs from the CPU: %s", stage, describe(&c));
            for (int k = 0; k < APSMPI_MEASURE_COUNTERS; k++)
                if (got[k] != want[k])
                    fail_msg("measuring encode in stages: counter %d gpu %llu cpu %llu: %s", k, got[k],
                             (unsigned long long)want[k], describe(&c));
        }
        apsmpi_codec_free(c.codec);
    }
}

/* A buffer of more than 2^31 elements (64-bit indices): zeros but for two windows of random
 * values, one across element 2^31 and one at the end; checked against the CPU on the
 * windows. Skipped when the device lacks the memory. */
static void test_beyond_2g_elements(void **state)
{
    const size_t n = ((size_t)1 << 31) + ((size_t)1 << 20) + 13, bl = 4096;
    const size_t wlen = 3 * 4096, wstart[2] = {((size_t)1 << 31) - 4096, n - (n % 4096) - 4096};
    apsmpi_format f;
    apsmpi_codec *codec;
    assert_int_equal(apsmpi_format_parse("e3m2", &f), 0);
    codec = apsmpi_codec_create(&f);
    assert_non_null(codec);
    size_t g = apsmpi_group_elems(&f), gb = apsmpi_group_bytes(&f);
    size_t nb = (n + bl - 1) / bl, bytes = packed_bytes(&f, n);
    size_t need = n * sizeof(float) * 2 + bytes + nb * 4 + ((size_t)1 << 30);
    size_t free_b = 0, total_b = 0;
    if (max_elems != SIZE_MAX) {
        printf("skipping the 2^31-element test: APSMPI_TEST_MAX_ELEMS=%zu\n", max_elems);
        apsmpi_codec_free(codec);
        skip();
    }
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < need) {
        printf("skipping the 2^31-element test: %zu MiB free, %zu MiB needed\n", free_b >> 20, need >> 20);
        apsmpi_codec_free(codec);
        skip();
    }
    float *x = NULL, *y = NULL;
    uint8_t *p = NULL;
    int16_t *e = NULL, *s = NULL;
    CUDA_OK(cudaMalloc((void **)&x, n * sizeof *x));
    CUDA_OK(cudaMalloc((void **)&y, n * sizeof *y));
    CUDA_OK(cudaMalloc((void **)&p, bytes));
    CUDA_OK(cudaMalloc((void **)&e, nb * sizeof *e));
    CUDA_OK(cudaMalloc((void **)&s, nb * sizeof *s));
    CUDA_OK(cudaMemset(x, 0, n * sizeof *x));
    size_t wl[2];
    float *win = malloc(2 * wlen * sizeof *win);
    assert_non_null(win);
    for (int w = 0; w < 2; w++) {
        wl[w] = n - wstart[w] < wlen ? n - wstart[w] : wlen;
        for (size_t i = 0; i < wl[w]; i++)
            win[w * wlen + i] =
                rnd_below(10) == 0 ? 0.0f : f_of((rnd32() & 0x807FFFFFu) | (uint32_t)rnd_int(100, 140) << 23);
        CUDA_OK(cudaMemcpy(x + wstart[w], win + w * wlen, wl[w] * sizeof *win, cudaMemcpyHostToDevice));
    }
    /* block exponents: the windows' blocks as the CPU, every other block zero */
    int16_t *he = malloc(nb * sizeof *he), hw[8];
    assert_non_null(he);
    assert_int_equal(apsmpi_cuda_block_exponents(x, n, bl, e, NULL), 0);
    sync_ok();
    CUDA_OK(cudaMemcpy(he, e, nb * sizeof *he, cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < nb; b++) {
        int inwin = 0;
        for (int w = 0; w < 2; w++)
            if (b * bl >= wstart[w] && b * bl < wstart[w] + wl[w]) {
                inwin = 1;
                apsmpi_block_exponents(win + w * wlen + (b * bl - wstart[w]),
                                       wstart[w] + wl[w] - b * bl < bl ? wstart[w] + wl[w] - b * bl : bl, bl, hw);
                if (he[b] != hw[0])
                    fail_msg("2^31 test: block %zu exponent cpu %d gpu %d", b, hw[0], he[b]);
            }
        if (!inwin && he[b] != APSMPI_EXP_ZERO)
            fail_msg("2^31 test: block %zu of zeros has exponent %d", b, he[b]);
    }
    /* one block for the whole buffer: the max of all */
    int16_t whole = 0, cpu_whole = APSMPI_EXP_ZERO;
    assert_int_equal(apsmpi_cuda_block_exponents(x, n, SIZE_MAX, e, NULL), 0);
    sync_ok();
    CUDA_OK(cudaMemcpy(&whole, e, sizeof whole, cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < nb; b++)
        cpu_whole = he[b] > cpu_whole ? he[b] : cpu_whole;
    assert_int_equal(whole, cpu_whole);
    /* encode (stochastic, APS scales) and decode; the windows against the CPU */
    apsmpi_exponents_to_scales(he, nb, &f, 4);
    CUDA_OK(cudaMemcpy(s, he, nb * sizeof *he, cudaMemcpyHostToDevice));
    apsmpi_rounding r = {1, 12345, 678};
    CUDA_OK(cudaMemset(d_counters, 0, 2 * sizeof *d_counters));
    assert_int_equal(apsmpi_cuda_encode(&f, x, n, 0, s, bl, r, p, d_counters, NULL), 0);
    assert_int_equal(apsmpi_cuda_decode(&f, p, n, 0, s, bl, y, NULL), 0);
    sync_ok();
    apsmpi_scales sc = {he, bl};
    uint64_t flushed = 0, nonzero = 0;
    uint8_t *hp = malloc(packed_bytes(&f, wlen) * 2);
    float *hd = malloc(wlen * sizeof *hd), *gd = malloc(wlen * sizeof *gd);
    assert_non_null(hp);
    assert_non_null(hd);
    assert_non_null(gd);
    for (int w = 0; w < 2; w++) {
        size_t wb = packed_bytes(&f, wl[w]);
        apsmpi_encode(codec, win + w * wlen, wl[w], wstart[w], sc, r, hp, &flushed);
        CUDA_OK(cudaMemcpy(hp + wb, p + wstart[w] / g * gb, wb, cudaMemcpyDeviceToHost));
        if (memcmp(hp, hp + wb, wb) != 0)
            fail_msg("2^31 test: encoded window %d differs", w);
        apsmpi_decode(codec, hp, wl[w], wstart[w], sc, hd);
        CUDA_OK(cudaMemcpy(gd, y + wstart[w], wl[w] * sizeof *gd, cudaMemcpyDeviceToHost));
        if (memcmp(hd, gd, wl[w] * sizeof *gd) != 0)
            fail_msg("2^31 test: decoded window %d differs", w);
        for (size_t i = 0; i < wl[w]; i++)
            nonzero += (u_of(win[w * wlen + i]) << 1) != 0;
    }
    unsigned long long cnt[2];
    CUDA_OK(cudaMemcpy(cnt, d_counters, sizeof cnt, cudaMemcpyDeviceToHost));
    assert_int_equal(cnt[0], nonzero);
    assert_int_equal(cnt[1], flushed);
    free(hp);
    free(hd);
    free(gd);
    free(he);
    free(win);
    cudaFree(x);
    cudaFree(y);
    cudaFree(p);
    cudaFree(e);
    cudaFree(s);
    apsmpi_codec_free(codec);
}

/* ---- setup ---- */

static int setup(void **state)
{
    size_t outb = MAXN * 2 + 1024;
    char why[160];
    if (apsmpi_ladder_parse(APSMPI_LADDER_DEFAULT, &ladder, why, sizeof why) != 0)
        return -1;
    if (cudaMalloc((void **)&d_in, (MAXN + 64) * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&d_dec, (MAXN + 64) * sizeof(float) + GUARD) != cudaSuccess ||
        cudaMalloc((void **)&d_out, outb) != cudaSuccess ||
        cudaMalloc((void **)&d_exps, (MAXN + 64) * sizeof(int16_t) + GUARD) != cudaSuccess ||
        cudaMalloc((void **)&d_scales, MAXS * sizeof(int16_t)) != cudaSuccess ||
        cudaMalloc((void **)&d_counters, APSMPI_MEASURE_COUNTERS * sizeof(unsigned long long)) != cudaSuccess)
        return -1;
    h_in = malloc(MAXN * sizeof *h_in);
    h_dec_cpu = malloc(MAXN * sizeof *h_dec_cpu);
    h_dec_gpu = malloc((MAXN + 64) * sizeof *h_dec_gpu + GUARD);
    h_out_cpu = malloc(outb);
    h_out_gpu = malloc(outb);
    h_packed = malloc(outb);
    h_exps_cpu = malloc(MAXN * sizeof *h_exps_cpu);
    h_exps_gpu = malloc((MAXN + 64) * sizeof *h_exps_gpu + GUARD);
    h_scales = malloc(MAXS * sizeof *h_scales);
    if (!h_in || !h_dec_cpu || !h_dec_gpu || !h_out_cpu || !h_out_gpu || !h_packed || !h_exps_cpu || !h_exps_gpu ||
        !h_scales)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    cudaFree(d_in);
    cudaFree(d_dec);
    cudaFree(d_out);
    cudaFree(d_exps);
    cudaFree(d_scales);
    cudaFree(d_counters);
    free(h_in);
    free(h_dec_cpu);
    free(h_dec_gpu);
    free(h_out_cpu);
    free(h_out_gpu);
    free(h_packed);
    free(h_exps_cpu);
    free(h_exps_gpu);
    free(h_scales);
    return 0;
}

int main(void)
{
    int ndev = 0;
    cudaError_t err = cudaGetDeviceCount(&ndev);
    if (err != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "device count 0");
        return 77;
    }
#ifdef APSMPI_TEST_EMULATED
    printf("the kernels' logic emulated on the host (tests/gpu/emulate_kernels.cpp), no GPU used\n");
#else
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        printf("device 0: %s, compute capability %d.%d\n", prop.name, prop.major, prop.minor);
#endif
    const char *seed = getenv("APSMPI_TEST_SEED"), *v;
    if (seed != NULL)
        rng_state = strtoull(seed, NULL, 0);
    rng_seed = rng_state;
    printf("random seed %#llx (set APSMPI_TEST_SEED to repeat another)\n", (unsigned long long)rng_state);
    if ((v = getenv("APSMPI_TEST_MAX_ELEMS")) != NULL && *v != '\0')
        max_elems = strtoull(v, NULL, 0) > 0 ? strtoull(v, NULL, 0) : 1;
    if ((v = getenv("APSMPI_TEST_SAMPLE")) != NULL && *v != '\0')
        sample_every = strtoull(v, NULL, 0) > 0 ? strtoull(v, NULL, 0) : 1;
    if ((v = getenv("APSMPI_TEST_FORMATS")) != NULL && *v != '\0')
        format_list = v;
    if (max_elems != SIZE_MAX || sample_every != 1 || format_list != NULL)
        printf("reduced run: at most %zu elements, one case in %zu of the block-exponent tests, formats %s\n",
               max_elems, sample_every, format_list ? format_list : "all");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_length),
        cmocka_unit_test(test_block_exponents),
        cmocka_unit_test(test_block_exponents_one_hot),
        cmocka_unit_test(test_encode_decode),
        cmocka_unit_test(test_decode_every_code),
        cmocka_unit_test(test_mx_decode_every_code),
        cmocka_unit_test(test_stages),
        cmocka_unit_test(test_beyond_2g_elements),
    };
    if ((v = getenv("APSMPI_TEST_ONLY")) != NULL && *v != '\0')
        cmocka_set_test_filter(v); /* a glob over the test names below */
    if ((v = getenv("APSMPI_TEST_SKIP")) != NULL && *v != '\0')
        cmocka_set_skip_filter(v);
    return cmocka_run_group_tests(tests, setup, teardown);
}
