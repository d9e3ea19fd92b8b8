/* test_mx.c: the MX formats' codec against the independent reference of the specification (mx_reference.c), at every instruction-set level this machine has. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/codec.h"
#include "core/codec_parallel.h"
#include "core/thread_pool.h"
#include "core/width_controller.h"
#include "core/mx_format.h"
#include "mx_reference.h"
#include "reference.h" /* ref_rng_bits: the documented random bits */

enum { BLOCK = 32, MAXN = 4096 };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint32_t f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* The levels of this machine. */
static int levels[APSMPI_ISA_COUNT], nlevels;

/* One format under test: its apsmpi_format, a codec per level, its reference. */
typedef struct fixture {
    apsmpi_format f;
    apsmpi_codec *c[APSMPI_ISA_COUNT];
    const mxref_elem *e;
    size_t gb;
} fixture;

static void fixture_open(fixture *t, int i)
{
    t->e = mxref_format(i);
    assert_int_equal(apsmpi_format_parse(t->e->mx_name, &t->f), 0);
    for (int l = 0; l < nlevels; l++) {
        t->c[l] = apsmpi_codec_create_isa(&t->f, levels[l]);
        assert_non_null(t->c[l]);
    }
    t->gb = apsmpi_group_bytes(&t->f);
}

static void fixture_close(fixture *t)
{
    for (int l = 0; l < nlevels; l++)
        apsmpi_codec_free(t->c[l]);
}

static const apsmpi_scales no_scales = {NULL, 0};
static const apsmpi_rounding nearest = {0, 0, 0};

/* The float bits the codec must give for a code in a block of this scale: the reference's
 * value, and for NaN the quiet NaN with the code's sign (an element NaN) or without (a NaN
 * scale). */
static uint32_t expected_bits(const mxref_elem *e, uint32_t code, uint8_t scale)
{
    float v = mxref_decode(e, code, scale);
    if (!isnan(v))
        return f2u(v);
    if (scale == 255)
        return 0x7FC00000u;
    return 0x7FC00000u | (((code >> (e->width - 1)) & 1u) << 31);
}

/* Encodes in[0..n) with every level and compares each with the reference (bytes and the
 * flushed count), then decodes the reference's bytes with every level and compares them
 * element by element. rounding: nearest, or stochastic with the reference drawing the
 * documented bits. */
static void check_buffer(const fixture *t, const float *in, size_t n, size_t first, apsmpi_rounding r)
{
    static uint8_t want[MAXN * 2], got[MAXN * 2 + 64];
    static uint32_t rnd[MAXN];
    static float out[MAXN + 64];
    assert_true(n <= MAXN);
    for (size_t i = 0; r.stochastic && i < n; i++)
        rnd[i] = ref_rng_bits(r.seed, r.call, first + i);
    size_t bytes = mxref_encode(t->e, in, n, r.stochastic ? rnd : NULL, want);
    assert_int_equal(bytes, apsmpi_groups_for(&t->f, n) * t->gb);
    uint64_t want_flushed = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *g = want + i / BLOCK * t->gb;
        uint32_t code = mxref_code(t->e, g, (int)(i % BLOCK));
        want_flushed += g[0] != 255 && in[i] != 0 && (code & ((1u << (t->e->width - 1)) - 1)) == 0;
    }
    for (int l = 0; l < nlevels; l++) {
        uint64_t flushed = 0;
        memset(got, 0xA5, bytes + 64);
        apsmpi_encode(t->c[l], in, n, first, no_scales, r, got, &flushed);
        if (memcmp(got, want, bytes) != 0) {
            for (size_t b = 0; b < bytes; b++)
                if (got[b] != want[b]) {
                    size_t blk = b / t->gb;
                    print_error("%s level %s n %zu: byte %zu (block %zu, scale %u vs %u) is %02x, not %02x; first "
                                "input of the block %a\n",
                                t->f.name, apsmpi_codec_isa_name(levels[l]), n, b, blk, got[blk * t->gb],
                                want[blk * t->gb], got[b], want[b], (double)in[blk * BLOCK]);
                    break;
                }
            fail();
        }
        for (size_t b = bytes; b < bytes + 64; b++)
            assert_int_equal(got[b], 0xA5); /* nothing written past the groups */
        assert_int_equal(flushed, want_flushed);
        memset(out, 0xA5, sizeof out);
        apsmpi_decode(t->c[l], want, n, first, no_scales, out);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *g = want + i / BLOCK * t->gb;
            uint32_t e = expected_bits(t->e, mxref_code(t->e, g, (int)(i % BLOCK)), g[0]);
            if (f2u(out[i]) != e) {
                print_error("%s level %s: element %zu decodes to %08x, not %08x\n", t->f.name,
                            apsmpi_codec_isa_name(levels[l]), i, f2u(out[i]), e);
                fail();
            }
        }
        assert_int_equal(f2u(out[n]), 0xA5A5A5A5u); /* nothing written past n */
    }
}

/* ---- the reference itself against what the specification states ---- */

static void test_reference_tables(void **state)
{
    (void)state;
    static const double e2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6}; /* the specification's table of FP4 */
    static const int emax[MXREF_NFORMATS] = {8, 15, 4, 2, 2, 4};
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        const mxref_elem *e = mxref_format(i);
        assert_true(e->value[e->max_mag] == e->stated_max);
        assert_true(e->value[1] == e->stated_min_subnormal);
        assert_int_equal(e->emax, emax[i]);
        for (uint32_t c = 1; c <= e->max_mag; c++)
            assert_true(e->value[c] > e->value[c - 1]); /* codes order as values */
        /* FP6 and FP4 have no special codes: every code is finite */
        if (e->width < 8)
            assert_int_equal(e->max_mag, (1u << (e->width - 1)) - 1);
    }
    for (uint32_t c = 0; c < 8; c++)
        assert_true(mxref_format(4)->value[c] == e2m1[c]);
    assert_true(isnan(mxref_value(mxref_format(0), 0x7F)) && isnan(mxref_value(mxref_format(0), 0xFF)));
    assert_true(mxref_value(mxref_format(0), 0x7E) == 448.0);
    assert_true(isinf(mxref_value(mxref_format(1), 0x7C)) && mxref_value(mxref_format(1), 0xFC) < 0);
    assert_true(isnan(mxref_value(mxref_format(1), 0x7D)));
}

/* ---- formats: names, layout, element parameters ---- */

static void test_format_names(void **state)
{
    (void)state;
    static const struct {
        const char *name, *canonical;
    } names[] = {{"mxfp8", "mxfp8"},     {"MXFP8", "mxfp8"},     {"mxfp8e4m3", "mxfp8"},     {"mxfp8e5m2", "mxfp8e5m2"},
                 {"mxfp6", "mxfp6"},     {"mxfp6e3m2", "mxfp6"}, {"mxfp6e2m3", "mxfp6e2m3"}, {"mxfp4", "mxfp4"},
                 {"MxFp4E2m1", "mxfp4"}, {"mxfp5", "mxfp5"},     {"mxfp5e3m1", "mxfp5"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        apsmpi_format f;
        assert_int_equal(apsmpi_format_parse(names[i].name, &f), 0);
        assert_string_equal(f.name, names[i].canonical);
        assert_int_equal(f.mx, 1);
    }
    static const char *const bad[] = {"mxfp", "mxfp5e2m2", "mxfp8e3m4", "mxfp4e1m2", "mxint8", "mxfp16", "mx"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        apsmpi_format f;
        assert_int_equal(apsmpi_format_parse(bad[i], &f), -1);
    }
    apsmpi_format f;
    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    assert_int_equal(f.mx, 0); /* the plain formats are not MX */
    for (int i = 0; apsmpi_mx_format_names[i] != NULL; i++)
        assert_int_equal(apsmpi_format_parse(apsmpi_mx_format_names[i], &f), 0);
}

static void test_format_layout(void **state)
{
    (void)state;
    static const size_t group_bytes[MXREF_NFORMATS] = {33, 33, 25, 25, 17, 21};
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        const mxref_elem *e = mxref_format(i);
        apsmpi_format f;
        assert_int_equal(apsmpi_format_parse(e->mx_name, &f), 0);
        assert_int_equal(f.width, e->width);
        assert_int_equal(f.ebits, e->ebits);
        assert_int_equal(f.mbits, e->mbits);
        assert_int_equal(f.bias, e->bias);
        assert_int_equal(f.emax, e->emax);
        assert_int_equal(f.max_code, e->max_mag);
        assert_true((double)f.max_finite == e->stated_max);
        assert_int_equal(apsmpi_group_elems(&f), 32);
        assert_int_equal(apsmpi_group_bytes(&f), group_bytes[i]);
        assert_int_equal(apsmpi_groups_for(&f, 0), 0);
        assert_int_equal(apsmpi_groups_for(&f, 1), 1);
        assert_int_equal(apsmpi_groups_for(&f, 32), 1);
        assert_int_equal(apsmpi_groups_for(&f, 33), 2);
    }
}

/* ---- every code, both ways ---- */

/* Scales every code is decoded and encoded under: the ends of E8M0, around 127, and the
 * scales where products become float subnormals or reach the top of the float range. */
static const int test_scales[] = {0, 1, 2, 9, 20, 100, 119, 126, 127, 128, 150, 200, 230, 239, 240, 246, 247, 252, 254};

static void test_decode_every_code(void **state)
{
    (void)state;
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        uint32_t ncodes = 1u << t.e->width;
        size_t nblocks = (ncodes + BLOCK - 1) / BLOCK;
        uint8_t groups[8 * 33];
        float out[8 * BLOCK];
        for (size_t s = 0; s <= sizeof test_scales / sizeof test_scales[0]; s++) {
            uint8_t scale = s < sizeof test_scales / sizeof test_scales[0] ? (uint8_t)test_scales[s] : 255;
            memset(groups, 0, sizeof groups);
            for (size_t b = 0; b < nblocks; b++) {
                uint8_t *g = groups + b * t.gb;
                g[0] = scale;
                for (int j = 0; j < BLOCK; j++) { /* code b*32 + j, bit by bit */
                    uint32_t code = (uint32_t)(b * BLOCK + (size_t)j) % ncodes;
                    for (int bit = 0; bit < t.e->width; bit++) {
                        size_t pos = (size_t)j * (size_t)t.e->width + (size_t)bit;
                        if ((code >> bit) & 1)
                            g[1 + pos / 8] |= (uint8_t)(1u << (pos % 8));
                    }
                }
            }
            for (int l = 0; l < nlevels; l++) {
                apsmpi_decode(t.c[l], groups, nblocks * BLOCK, 0, no_scales, out);
                for (size_t k = 0; k < nblocks * BLOCK; k++) {
                    uint32_t code = (uint32_t)k % ncodes, want = expected_bits(t.e, code, scale);
                    if (f2u(out[k]) != want) {
                        print_error("%s level %s scale %u code %02x: %08x, not %08x\n", t.f.name,
                                    apsmpi_codec_isa_name(levels[l]), scale, code, f2u(out[k]), want);
                        fail();
                    }
                }
            }
        }
        fixture_close(&t);
    }
}

static void test_encode_every_code(void **state)
{
    (void)state;
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        for (size_t s = 0; s < sizeof test_scales / sizeof test_scales[0]; s++) {
            int scale = test_scales[s];
            if (scale + t.e->emax > 254) /* no float has that maximum */
                continue;
            float in[BLOCK];
            /* element 0 pins the block's scale: the largest value times X; the others run
             * through every finite code, both signs */
            for (uint32_t c0 = 0; c0 <= t.e->max_mag; c0 += BLOCK - 1) {
                in[0] = (float)ldexp(t.e->stated_max, scale - 127);
                for (int j = 1; j < BLOCK; j++) {
                    uint32_t c = (c0 + (uint32_t)j - 1) % (t.e->max_mag + 1);
                    in[j] = (float)ldexp(t.e->value[c], scale - 127) * (j % 2 ? 1.0f : -1.0f);
                }
                check_buffer(&t, in, BLOCK, 0, nearest);
                uint8_t g[33];
                apsmpi_encode(t.c[0], in, BLOCK, 0, no_scales, nearest, g, NULL);
                assert_int_equal(g[0], scale);
                for (int j = 1; j < BLOCK; j++) { /* a value of the format comes back as its code */
                    uint32_t c = (c0 + (uint32_t)j - 1) % (t.e->max_mag + 1);
                    uint32_t want = c | (j % 2 ? 0 : 1u << (t.e->width - 1)); /* 0 * -1 is -0 */
                    assert_int_equal(mxref_code(t.e, g, j), want);
                }
            }
        }
        fixture_close(&t);
    }
}

/* ---- saturation, scale boundaries, zero and subnormal blocks ---- */

static void test_saturation(void **state)
{
    (void)state;
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        /* amax in [2^emax, 2^(emax+1)): the scale is 2^0 at E = 127; everything from the
         * largest value up to just below 2^(emax+1) saturates to it, never to inf or NaN */
        double top = ldexp(1.0, t.e->emax + 1);
        float in[BLOCK];
        for (int k = 0; k < 64; k++) {
            double a = t.e->stated_max + (top - t.e->stated_max) * k / 64.0;
            in[0] = (float)a;
            for (int j = 1; j < BLOCK; j++)
                in[j] = (float)(j % 2 ? a : -a) * (float)(1.0 - ldexp(1.0, -24) * j);
            in[BLOCK - 1] = nextafterf((float)top, 0.0f);
            check_buffer(&t, in, BLOCK, 0, nearest);
            uint8_t g[33];
            apsmpi_encode(t.c[0], in, BLOCK, 0, no_scales, nearest, g, NULL);
            assert_int_equal(g[0], 127);
            assert_int_equal(mxref_code(t.e, g, BLOCK - 1), t.e->max_mag);
            assert_int_equal(mxref_code(t.e, g, 2), t.e->max_mag | (1u << (t.e->width - 1)));
        }
        fixture_close(&t);
    }
}

static void test_scale_boundaries(void **state)
{
    (void)state;
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        float in[BLOCK];
        for (int k = -149; k <= 127; k++) {
            float p = (float)ldexp(1.0, k);
            float around[3] = {nextafterf(p, 0.0f), p, nextafterf(p, INFINITY)};
            for (int a = 0; a < 3; a++) {
                if (!isfinite(around[a]) || around[a] == 0)
                    continue;
                for (int j = 0; j < BLOCK; j++) /* the maximum, and smaller values of both signs */
                    in[j] = j == 7 ? -around[a] : around[a] * (float)ldexp(1.0 + (j % 5) * 0.1, -(j % 9)) * 0.5f;
                check_buffer(&t, in, BLOCK, 0, nearest);
                uint8_t g[33];
                apsmpi_encode(t.c[0], in, BLOCK, 0, no_scales, nearest, g, NULL);
                int fl = a == 0 ? k - 1 : k; /* floor(log2) of the maximum */
                int want = fl - t.e->emax + 127;
                assert_int_equal(g[0], want < 0 ? 0 : want);
            }
        }
        fixture_close(&t);
    }
}

static void test_zero_and_subnormal_blocks(void **state)
{
    (void)state;
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        float in[4 * BLOCK];
        uint8_t g[4 * 33];
        float out[4 * BLOCK];
        /* all zero, both signs: scale byte 0, every code zero with the input's sign, back exact */
        for (int j = 0; j < BLOCK; j++)
            in[j] = j % 3 ? 0.0f : -0.0f;
        /* float subnormals only: the scale clamps to 2^-127 */
        for (int j = 0; j < BLOCK; j++)
            in[BLOCK + j] = u2f((uint32_t)(j * 37 + 1) | (j % 2 ? 0x80000000u : 0));
        /* the largest subnormal and smaller ones */
        for (int j = 0; j < BLOCK; j++)
            in[2 * BLOCK + j] = u2f(0x007FFFFFu >> (j % 23));
        /* the smallest normal float with subnormals: 2^-126 gives scale 2^(-126 - emax), clamped */
        for (int j = 0; j < BLOCK; j++)
            in[3 * BLOCK + j] = j == 0 ? 0x1p-126f : u2f((uint32_t)j * 0x12345u);
        check_buffer(&t, in, 4 * BLOCK, 0, nearest);
        for (int l = 0; l < nlevels; l++) {
            apsmpi_encode(t.c[l], in, 4 * BLOCK, 0, no_scales, nearest, g, NULL);
            assert_int_equal(g[0], 0);
            assert_int_equal(g[t.gb], 0);
            assert_int_equal(g[2 * t.gb], 0);
            assert_int_equal(g[3 * t.gb], 0);
            apsmpi_decode(t.c[l], g, BLOCK, 0, no_scales, out);
            for (int j = 0; j < BLOCK; j++)
                assert_int_equal(f2u(out[j]), f2u(in[j])); /* +0 and -0 back */
        }
        fixture_close(&t);
    }
}

static void test_nonfinite_blocks(void **state)
{
    (void)state;
    static const uint32_t specials[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u};
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        float in[2 * BLOCK], out[2 * BLOCK];
        uint8_t g[2 * 33];
        for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++) {
            for (int j = 0; j < 2 * BLOCK; j++)
                in[j] = (float)(j - 20) * 0.25f;
            in[5] = u2f(specials[s]); /* the first block holds it, the second does not */
            check_buffer(&t, in, 2 * BLOCK, 0, nearest);
            for (int l = 0; l < nlevels; l++) {
                uint64_t flushed = 0;
                apsmpi_encode(t.c[l], in, 2 * BLOCK, 0, no_scales, nearest, g, &flushed);
                assert_int_equal(g[0], 255);
                assert_int_not_equal(g[t.gb], 255);
                apsmpi_decode(t.c[l], g, 2 * BLOCK, 0, no_scales, out);
                for (int j = 0; j < BLOCK; j++)
                    assert_int_equal(f2u(out[j]), 0x7FC00000u);
                assert_int_equal(flushed, 0); /* a NaN block's elements are not flushed */
            }
        }
        fixture_close(&t);
    }
}

/* ---- random buffers, both roundings, the packed sum ---- */

/* A random float: a gradient-like value of a random magnitude, a tenth of the time any bits
 * of a finite float, a few zeros and float subnormals. */
static float random_value(int spread)
{
    uint32_t k = (uint32_t)(rnd64() % 20);
    if (k == 0)
        return 0.0f;
    if (k == 1)
        return u2f((uint32_t)rnd64() & 0x807FFFFFu);
    if (k == 2) {
        float x;
        do
            x = u2f((uint32_t)rnd64());
        while (!isfinite(x));
        return x;
    }
    double m = (double)(int32_t)rnd64() / 2147483648.0;
    return (float)ldexp(m, (int)(rnd64() % (2 * (uint64_t)spread + 1)) - spread);
}

static void test_random_vs_reference(void **state)
{
    (void)state;
    static float in[MAXN];
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        for (int rep = 0; rep < 60; rep++) {
            size_t n = rep < 40 ? (size_t)rep * 7 + 1 : (size_t)(rnd64() % MAXN) + 1;
            int spread = (int)(rnd64() % 40);
            for (size_t j = 0; j < n; j++)
                in[j] = random_value(spread);
            if (rep % 7 == 3)
                in[rnd64() % n] = rep % 2 ? INFINITY : NAN;
            check_buffer(&t, in, n, 0, nearest);
            apsmpi_rounding sr = {1, rnd64(), rnd64() % 1000};
            check_buffer(&t, in, n, (size_t)(rnd64() % 100000) * 32, sr);
        }
        fixture_close(&t);
    }
}

static void test_sum_vs_reference(void **state)
{
    (void)state;
    static float a[MAXN], b[MAXN], da[MAXN + 32], db[MAXN + 32], sum[MAXN + 32];
    static uint8_t pa[MAXN * 2], pb[MAXN * 2], want[MAXN * 2], got[MAXN * 2];
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        for (int rep = 0; rep < 30; rep++) {
            size_t ngroups = (size_t)(rnd64() % (MAXN / BLOCK)) + 1, n = ngroups * BLOCK;
            int spread = (int)(rnd64() % 30);
            for (size_t j = 0; j < n; j++) {
                a[j] = random_value(spread);
                b[j] = random_value(spread) * (rep % 3 == 0 ? -1.0f : 1.0f);
            }
            size_t bytes = mxref_encode(t.e, a, n, NULL, pa);
            mxref_encode(t.e, b, n, NULL, pb);
            for (size_t j = 0; j < n; j++) { /* decoded by the reference, added in float */
                da[j] =
                    mxref_decode(t.e, mxref_code(t.e, pa + j / BLOCK * t.gb, (int)(j % BLOCK)), pa[j / BLOCK * t.gb]);
                db[j] =
                    mxref_decode(t.e, mxref_code(t.e, pb + j / BLOCK * t.gb, (int)(j % BLOCK)), pb[j / BLOCK * t.gb]);
                sum[j] = da[j] + db[j];
            }
            mxref_encode(t.e, sum, n, NULL, want);
            for (int l = 0; l < nlevels; l++) {
                memcpy(got, pb, bytes);
                apsmpi_sum_packed(t.c[l], pa, got, ngroups);
                assert_memory_equal(got, want, bytes);
            }
        }
        fixture_close(&t);
    }
}

/* ---- every level bit for bit with the scalar level: lengths, offsets, alignment ---- */

static void test_levels_agree(void **state)
{
    (void)state;
    static float in[MAXN + 16], out0[MAXN + 16], out1[MAXN + 16];
    static uint8_t p0[MAXN * 2 + 64], p1[MAXN * 2 + 64];
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        for (int rep = 0; rep < 200; rep++) {
            size_t n = rep < 100 ? (size_t)rep : (size_t)(rnd64() % MAXN);
            size_t fo = rnd64() % 8, bo = rnd64() % 16; /* floats and bytes off alignment */
            int spread = (int)(rnd64() % 60);
            for (size_t j = 0; j < n; j++)
                in[fo + j] = random_value(spread);
            if (n && rep % 5 == 0)
                in[fo + rnd64() % n] = NAN;
            apsmpi_rounding r = {rep % 3 == 0, rnd64(), (uint64_t)rep};
            size_t bytes = apsmpi_groups_for(&t.f, n) * t.gb;
            uint64_t fl0 = 0;
            apsmpi_encode(t.c[0], in + fo, n, 96, no_scales, r, p0, &fl0);
            apsmpi_decode(t.c[0], p0, n, 96, no_scales, out0);
            for (int l = 1; l < nlevels; l++) {
                uint64_t fl1 = 0;
                apsmpi_encode(t.c[l], in + fo, n, 96, no_scales, r, p1 + bo, &fl1);
                assert_memory_equal(p1 + bo, p0, bytes);
                assert_int_equal(fl1, fl0);
                apsmpi_decode(t.c[l], p1 + bo, n, 96, no_scales, out1 + fo);
                assert_memory_equal(out1 + fo, out0, n * sizeof(float));
            }
        }
        fixture_close(&t);
    }
}

/* The packed sum of every level bit for bit with the scalar level's on packing groups made
 * directly: random code bytes (an element's inf and NaN codes included) under scale bytes
 * around the vector levels' fast window (64..190, at most 60 apart: codec_mx_simd.c) and
 * the extremes (0, 1, 254, NaN), blocks cancelling to zero, odd block counts (a last block
 * alone), and every operand changing from block to block and from lane to lane. */
static void test_sum_levels_agree(void **state)
{
    (void)state;
    static const uint8_t scales[] = {0,   1,   2,   17,  63,  64,  65,  100, 120, 124,
                                     127, 130, 150, 189, 190, 191, 230, 254, 255};
    enum { NS = sizeof scales, GROUPS = 67 };
    static uint8_t pa[GROUPS * 33], pb[GROUPS * 33], want[GROUPS * 33], got[GROUPS * 33];
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        for (int rep = 0; rep < 300; rep++) {
            size_t ngroups = rep < 20 ? (size_t)rep + 1 : (size_t)(rnd64() % GROUPS) + 1, bytes = ngroups * t.gb;
            for (size_t j = 0; j < bytes; j++) {
                pa[j] = (uint8_t)rnd64();
                pb[j] = rep % 4 == 1 ? pa[j] ^ (uint8_t)(1u << (t.e->width - 1)) : (uint8_t)rnd64(); /* -a: zero sums */
            }
            for (size_t g = 0; g < ngroups; g++) {
                uint8_t *a = pa + g * t.gb, *b = pb + g * t.gb;
                if (rep % 4 != 1) { /* scales near each other, at the window's edges, or anywhere */
                    a[0] = rep % 3 ? scales[rnd64() % NS] : (uint8_t)(100 + rnd64() % 40);
                    int d = (int)(rnd64() % 130) - 65;
                    b[0] = rnd64() % 4 ? (uint8_t)(a[0] + d < 0     ? 0
                                                   : a[0] + d > 254 ? 254
                                                                    : a[0] + d)
                                       : scales[rnd64() % NS];
                } else
                    b[0] = a[0];
                if (t.e->width == 8 && rnd64() % 3) /* special codes only now and then */
                    for (size_t j = 1; j < t.gb; j++) {
                        a[j] = (uint8_t)(a[j] & 0xF7u);
                        b[j] = (uint8_t)(b[j] & 0xF7u);
                    }
                if (t.e->width < 8) /* the bytes of bit-packed codes are any bits; a few all-zero blocks */
                    if (rnd64() % 16 == 0)
                        memset(a + 1, 0, t.gb - 1);
            }
            memcpy(want, pb, bytes);
            apsmpi_sum_packed(t.c[0], pa, want, ngroups);
            for (int l = 1; l < nlevels; l++) {
                memcpy(got, pb, bytes);
                apsmpi_sum_packed(t.c[l], pa, got, ngroups);
                for (size_t j = 0; j < bytes; j++)
                    if (got[j] != want[j]) {
                        size_t g = j / t.gb;
                        print_error("%s level %s sum of %zu groups: byte %zu (group %zu, scales %u + %u) is %02x, not "
                                    "%02x\n",
                                    t.f.name, apsmpi_codec_isa_name(levels[l]), ngroups, j, g, pa[g * t.gb],
                                    pb[g * t.gb], got[j], want[j]);
                        fail();
                    }
            }
        }
        fixture_close(&t);
    }
}

/* Code j of a packing group's codes (LSB first, W bits each) set to c. */
static void set_code(uint8_t *codes, int W, int j, uint32_t c)
{
    for (int b = 0; b < W; b++) {
        int bit = W * j + b;
        codes[bit / 8] = (uint8_t)((codes[bit / 8] & ~(1u << bit % 8)) | ((c >> b & 1u) << bit % 8));
    }
}

/* The packed sum of every level bit for bit with the scalar level's on every pair of codes (the
 * element's NaN and inf codes included) at every distance of the two blocks' scale bytes within
 * and just outside the vector levels' fast window (60 apart, codec_mx_simd.c), the pairs in
 * blocks of 32: in order, shuffled, and shuffled beside a pair of largest codes (which raises
 * the sum's scale by one: the pairs' small sums then fall below its normals). */
static void test_sum_every_pair(void **state)
{
    (void)state;
    enum { MAXPAIRS = 1 << 16 };
    static uint32_t order[MAXPAIRS];
    static uint8_t pa[MAXPAIRS / 32 * 33], pb[MAXPAIRS / 32 * 33], want[MAXPAIRS / 32 * 33], got[MAXPAIRS / 32 * 33];
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        const int W = t.e->width, reach = 62; /* the window is 60 */
        const uint32_t npairs = 1u << (2 * W), ngroups = npairs / 32, largest = t.e->max_mag;
        for (int variant = 0; variant < 3; variant++) {
            for (uint32_t p = 0; p < npairs; p++)
                order[p] = p;
            for (uint32_t p = npairs - 1; variant && p > 0; p--) {
                uint32_t q = (uint32_t)(rnd64() % (p + 1)), x = order[p];
                order[p] = order[q];
                order[q] = x;
            }
            for (int d = -reach; d <= reach; d++) {
                memset(pa, 0, ngroups * t.gb);
                memset(pb, 0, ngroups * t.gb);
                for (uint32_t g = 0; g < ngroups; g++) {
                    uint8_t *a = pa + g * t.gb, *b = pb + g * t.gb;
                    a[0] = 120;
                    b[0] = (uint8_t)(120 + d);
                    for (int j = 0; j < 32; j++) {
                        uint32_t p = order[g * 32 + (uint32_t)j];
                        int big = variant == 2 && j == 31;
                        set_code(a + 1, W, j, big ? largest : p >> W);
                        set_code(b + 1, W, j, big ? largest : p & ((1u << W) - 1u));
                    }
                }
                memcpy(want, pb, ngroups * t.gb);
                apsmpi_sum_packed(t.c[0], pa, want, ngroups);
                for (int l = 1; l < nlevels; l++) {
                    memcpy(got, pb, ngroups * t.gb);
                    apsmpi_sum_packed(t.c[l], pa, got, ngroups);
                    for (size_t j = 0; j < ngroups * t.gb; j++)
                        if (got[j] != want[j]) {
                            print_error("%s level %s, scales 120 + %d, variant %d: byte %zu (group %zu) is %02x, not "
                                        "%02x\n",
                                        t.f.name, apsmpi_codec_isa_name(levels[l]), 120 + d, variant, j, j / t.gb,
                                        got[j], want[j]);
                            fail();
                        }
                }
            }
        }
        fixture_close(&t);
    }
}

/* The measured encode (APSMPI_FORMAT=auto's): at every level the bytes and the flushed count
 * of apsmpi_encode, and the non-zero values and depth counts of apsmpi_flush_depths over every
 * block (a range of at most APSMPI_MEASURE_BLOCKS blocks, which it counts whole), for inputs
 * of every kind: spreads of 0 to 60 binades within a block, powers of two at every depth and
 * their neighbours, zeros, float subnormals, blocks of tiny or huge values (clamped scales, scales above 127), inf and NaN, partial last blocks;
 * depths of the default ladder, of shorter ladders (256: none) and any; both roundings; and
 * on 1 to 4 codec threads the counts of one. */
static void test_encode_measured(void **state)
{
    (void)state;
    enum { N = 70000 };
    static float in[N];
    static uint8_t want[N * 2], got[N * 2];
    static const int depth_sets[][APSMPI_DEPTH_BINS] = {
        {4, 8, 9, 18}, {4, 9, 18, 256}, {3, 256, 256, 256}, {18, 4, 30, 1}, {100, 200, 254, 255}};
    enum { NSETS = sizeof depth_sets / sizeof depth_sets[0] };
    for (int i = 0; i < MXREF_NFORMATS; i++) {
        fixture t;
        fixture_open(&t, i);
        for (int rep = 0; rep < 40; rep++) {
            size_t n = rep < 10 ? (size_t)rep * 37 + 1 : (size_t)(rnd64() % N) + 1;
            int spread = (int)(rnd64() % 61), shift = rep % 5 == 1 ? -140 : rep % 5 == 2 ? 100 : 0;
            for (size_t j = 0; j < n; j++) {
                uint64_t r = rnd64();
                in[j] = r % 11 == 0 ? 0.0f : (float)ldexp(random_value(spread), shift);
                if (r % 97 == 1)
                    in[j] = u2f((uint32_t)(r >> 40) & 0x807FFFFFu); /* a float subnormal */
            }
            if (rep % 8 == 6) /* at and next to each depth's bound: powers of two and their neighbours */
                for (size_t j = 0; j < n; j++) {
                    static const uint32_t near_one[3] = {0x3F800000u, 0x3F800001u, 0x3F7FFFFFu};
                    int top = (int)(j / 32 % 40) - 20;
                    in[j] = j % 32 == 0 ? 1.5f * (float)ldexp(1.0, top)
                                        : u2f(near_one[rnd64() % 3]) * (float)ldexp(1.0, top - (int)(rnd64() % 26));
                    in[j] = rnd64() % 2 ? -in[j] : in[j];
                }
            if (rep % 6 == 5)
                in[rnd64() % n] = rep % 4 ? NAN : -INFINITY;
            if (rep % 7 == 3) /* a whole block of zeros */
                memset(in + (rnd64() % n) / 32 * 32, 0,
                       32 * sizeof *in < (n / 32 * 32) * sizeof *in ? 32 * sizeof *in : 0);
            const int *depth = depth_sets[rep % NSETS];
            apsmpi_ladder l = {.rungs = APSMPI_MAX_RUNGS, .mx = 1};
            for (int d = 0; d < APSMPI_DEPTH_BINS; d++)
                l.depth[d] = depth[d];
            l.depth[APSMPI_DEPTH_BINS] = APSMPI_DEPTH_NONE;
            apsmpi_flush_measure ref = {0};
            apsmpi_flush_depths(in, n, &l, &ref);
            assert_int_equal(ref.counted, n); /* every block */
            apsmpi_rounding r = {rep % 4 == 3, rnd64(), (uint64_t)rep};
            size_t bytes = apsmpi_groups_for(&t.f, n) * t.gb;
            for (int lv = 0; lv < nlevels; lv++) {
                uint64_t flushed = 0;
                apsmpi_encode(t.c[lv], in, n, 64, no_scales, r, want, &flushed);
                for (int threads = 1; threads <= (lv == nlevels - 1 ? 4 : 1); threads++) {
                    apsmpi_mx_measure m = {{{depth[0], depth[1], depth[2], depth[3]}}, {0}};
                    memset(got, 0xA5, bytes + 64);
                    if (threads == 1)
                        apsmpi_encode_measured(t.c[lv], in, n, 64, r, got, &m);
                    else
                        apsmpi_encode_threads_measured(t.c[lv], threads, in, n, 64, r, got, &m);
                    if (memcmp(got, want, bytes) != 0)
                        for (size_t j = 0; j < bytes; j++)
                            if (got[j] != want[j]) {
                                size_t g = j / t.gb;
                                print_error("%s level %s n %zu rep %d threads %d: byte %zu (block %zu) %02x, encode's "
                                            "%02x; block scale %02x/%02x; input %08x %08x\n",
                                            t.f.name, apsmpi_codec_isa_name(levels[lv]), n, rep, threads, j, g, got[j],
                                            want[j], got[g * t.gb], want[g * t.gb], f2u(in[g * 32 + (j % t.gb) - 1]),
                                            f2u(in[g * 32]));
                                break;
                            }
                    assert_memory_equal(got, want, bytes);
                    assert_int_equal(got[bytes], 0xA5);
                    if (m.count[APSMPI_COUNT_FLUSHED] != flushed || m.count[APSMPI_COUNT_NONZERO] != ref.nonzero)
                        print_error("%s level %s n %zu rep %d threads %d: flushed %llu (encode %llu), non-zero %llu "
                                    "(reference %llu)\n",
                                    t.f.name, apsmpi_codec_isa_name(levels[lv]), n, rep, threads,
                                    (unsigned long long)m.count[APSMPI_COUNT_FLUSHED], (unsigned long long)flushed,
                                    (unsigned long long)m.count[APSMPI_COUNT_NONZERO], (unsigned long long)ref.nonzero);
                    assert_int_equal(m.count[APSMPI_COUNT_FLUSHED], flushed);
                    assert_int_equal(m.count[APSMPI_COUNT_NONZERO], ref.nonzero);
                    for (int d = 0; d < APSMPI_DEPTH_BINS; d++) {
                        if (m.count[APSMPI_COUNT_DEEP + d] != ref.deep[d])
                            print_error("%s level %s n %zu rep %d: depth %d counted %llu, reference %llu\n", t.f.name,
                                        apsmpi_codec_isa_name(levels[lv]), n, rep, depth[d],
                                        (unsigned long long)m.count[APSMPI_COUNT_DEEP + d],
                                        (unsigned long long)ref.deep[d]);
                        assert_int_equal(m.count[APSMPI_COUNT_DEEP + d], ref.deep[d]);
                    }
                }
            }
        }
        fixture_close(&t);
    }
    apsmpi_pool_stop();
}

/* The caller's flush-to-zero and denormals-are-zero modes change nothing. */
static void test_flush_modes(void **state)
{
    (void)state;
#if defined(__SSE2__)
    fixture t;
    fixture_open(&t, 4);
    float in[BLOCK], out[BLOCK];
    uint8_t g[33];
    for (int j = 0; j < BLOCK; j++)
        in[j] = u2f(0x00000100u * (uint32_t)(j + 1)); /* float subnormals: scale 2^-127 */
    unsigned mode = _mm_getcsr();
    for (int l = 0; l < nlevels; l++) {
        _mm_setcsr(mode | 0x8040);
        apsmpi_encode(t.c[l], in, BLOCK, 0, no_scales, nearest, g, NULL);
        apsmpi_decode(t.c[l], g, BLOCK, 0, no_scales, out);
        assert_int_equal(_mm_getcsr(), mode | 0x8040); /* restored */
        _mm_setcsr(mode);
        check_buffer(&t, in, BLOCK, 0, nearest);
        for (int j = 0; j < BLOCK; j++)
            assert_int_equal(f2u(out[j]), f2u(mxref_decode(t.e, mxref_code(t.e, g, j), g[0])));
    }
    fixture_close(&t);
#endif
}

int main(void)
{
    for (int l = APSMPI_ISA_SCALAR; l < APSMPI_ISA_COUNT; l++)
        if (apsmpi_codec_isa_supported(l))
            levels[nlevels++] = l;
    printf("levels:");
    for (int l = 0; l < nlevels; l++)
        printf(" %s", apsmpi_codec_isa_name(levels[l]));
    printf("\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_tables),  cmocka_unit_test(test_format_names),
        cmocka_unit_test(test_format_layout),     cmocka_unit_test(test_decode_every_code),
        cmocka_unit_test(test_encode_every_code), cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_scale_boundaries),  cmocka_unit_test(test_zero_and_subnormal_blocks),
        cmocka_unit_test(test_nonfinite_blocks),  cmocka_unit_test(test_random_vs_reference),
        cmocka_unit_test(test_sum_vs_reference),  cmocka_unit_test(test_levels_agree),
        cmocka_unit_test(test_sum_levels_agree),  cmocka_unit_test(test_sum_every_pair),
        cmocka_unit_test(test_encode_measured),   cmocka_unit_test(test_flush_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
