/* test_codec.c: cmocka tests of fpconv.h and codec.c against the independent reference in reference.c (the packed sum: test_codec_levels.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/codec.h"
#include "core/fpconv.h"
#include "reference.h"
#include "test_codec_common.h"

/* Every format the tests cover: the named ones, all 8-bit and 16-bit eXmY, odd widths. */
static const char *const all_formats[] = {
    "fp16",  "bf16",  "e5m2",  "e4m3", "e4m3ieee", "e2m5", "e3m4", "e6m1", "e7m0", /* the other 8-bit eXmY */
    "e2m13", "e3m12", "e4m11", "e6m9", "e7m8",                                     /* the other 16-bit eXmY */
    "e2m0",  "e2m1",  "e3m2",  "e3m3", "e8m0",     "e5m7", "e4m8", "e8m3", "e2m12", "e6m3",
};
#define NFORMATS (sizeof all_formats / sizeof all_formats[0])

/* The instruction-set level under test: the best this CPU has, then the portable one. */
static int level = APSMPI_ISA_AUTO;

/* One format under test: its parsed description, codec and reference. */
typedef struct fixture {
    apsmpi_format f;
    apsmpi_codec *c;
    ref_format r;
} fixture;

static void fixture_open(fixture *t, const char *name)
{
    assert_int_equal(apsmpi_format_parse(name, &t->f), 0);
    t->c = apsmpi_codec_create_isa(&t->f, level);
    assert_non_null(t->c);
    assert_int_equal(ref_format_init(&t->r, t->f.ebits, t->f.mbits, t->f.kind == APSMPI_KIND_FN), 0);
    /* the parsed limits agree with the reference's own derivation */
    assert_int_equal(t->f.max_code, t->r.max_code);
    assert_int_equal(t->f.ovf_code, t->r.ovf_code);
    assert_int_equal(t->f.nan_code, t->r.nan_code);
}

static void fixture_close(fixture *t)
{
    apsmpi_codec_free(t->c);
    ref_format_free(&t->r);
}

/* Equal as float results: the same bits, or both NaN with the same sign. */
static int same_float(float got, float want)
{
    if (isnan(want))
        return isnan(got) && signbit(got) == signbit(want);
    return f2u(got) == f2u(want);
}

static void check_encode(const fixture *t, float x, int s, int stochastic, uint32_t rnd)
{
    uint32_t got = apsmpi_encode_one(f2u(x), s, &t->f, stochastic, rnd);
    uint32_t want = stochastic ? ref_encode_stochastic(&t->r, x, s, rnd) : ref_encode_nearest(&t->r, x, s);
    if (got != want) {
        print_error("%s encode%s x=%a (0x%08x) s=%d rnd=0x%08x: got 0x%x, want 0x%x\n", t->f.name,
                    stochastic ? "(stochastic)" : "", (double)x, f2u(x), s, rnd, got, want);
        fail();
    }
}

static void check_decode(const fixture *t, uint32_t code, int s, float got)
{
    float want = ref_decode(&t->r, code, s);
    if (!same_float(got, want)) {
        print_error("%s decode code=0x%x s=%d: got %a (0x%08x), want %a (0x%08x)\n", t->f.name, code, s, (double)got,
                    f2u(got), (double)want, f2u(want));
        fail();
    }
}

/* A random scale and a random float for it, such that x itself is usually a finite float
 * (normal or subnormal). */
static float random_input(const fixture *t, int *s)
{
    *s = rand_int(t->f.emin - t->f.mbits, t->f.emax) - rand_int(-150, 127);
    return random_input_for(&t->f, *s);
}

/* ---- decode ---- */

static const int decode_scales[] = {0, 5, -7, 40, -40, 126, -127, 127, -128, 150, -150, 300, -300, 32767, -32768};

/* Every code of a format through apsmpi_decode_one and through apsmpi_decode (packed). */
static void decode_every_code(const char *name)
{
    fixture t;
    fixture_open(&t, name);
    size_t n = (size_t)1 << t.f.width;
    uint32_t *codes = malloc(n * sizeof *codes);
    uint8_t *packed = malloc(n * 2 + 16);
    float *out = malloc(n * sizeof *out);
    assert_true(codes && packed && out);
    for (size_t k = 0; k < n; k++)
        codes[k] = (uint32_t)k;
    ref_pack(codes, n, t.f.width, apsmpi_group_elems(&t.f), packed);
    for (size_t i = 0; i < sizeof decode_scales / sizeof decode_scales[0]; i++) {
        int16_t s = (int16_t)decode_scales[i];
        for (size_t k = 0; k < n; k++)
            check_decode(&t, (uint32_t)k, s, apsmpi_decode_one((uint32_t)k, s, &t.f));
        apsmpi_decode(t.c, packed, n, 0, (apsmpi_scales){&s, n}, out);
        for (size_t k = 0; k < n; k++)
            check_decode(&t, (uint32_t)k, s, out[k]);
    }
    free(codes);
    free(packed);
    free(out);
    fixture_close(&t);
}

static void test_decode_every_code(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        decode_every_code(all_formats[i]);
}

/* Known values, so that the reference itself is checked too. */
static void test_decode_known_values(void **state)
{
    (void)state;
    fixture t;
    fixture_open(&t, "e4m3");
    assert_true(apsmpi_decode_one(0x7E, 0, &t.f) == 448.0f);
    assert_true(apsmpi_decode_one(0x01, 0, &t.f) == 0x1p-9f);
    assert_true(apsmpi_decode_one(0x38, 0, &t.f) == 1.0f);
    assert_true(apsmpi_decode_one(0xB8, 3, &t.f) == -0.125f);
    assert_true(isnan(apsmpi_decode_one(0x7F, 0, &t.f)) && isnan(apsmpi_decode_one(0xFF, 0, &t.f)));
    assert_true(apsmpi_decode_one(0x78, 0, &t.f) == 256.0f); /* S.1111.000 is finite in FN */
    fixture_close(&t);
    fixture_open(&t, "fp16");
    assert_true(apsmpi_decode_one(0x7BFF, 0, &t.f) == 65504.0f);
    assert_true(apsmpi_decode_one(0x0001, 0, &t.f) == 0x1p-24f);
    assert_true(apsmpi_decode_one(0x7C00, 0, &t.f) == INFINITY);
    assert_true(apsmpi_decode_one(0xFC00, 0, &t.f) == -INFINITY);
    assert_true(apsmpi_decode_one(0x0001, 126, &t.f) == 0.0f);      /* 2^-150: tie to even 0 */
    assert_true(apsmpi_decode_one(0x0003, 126, &t.f) == 0x1p-148f); /* 1.5 * 2^-149: even 2 */
    assert_true(apsmpi_decode_one(0x0003, 125, &t.f) == 0x1.8p-148f);
    assert_true(apsmpi_decode_one(0x7BFF, -112, &t.f) == 0x1.ffcp127f);
    assert_true(apsmpi_decode_one(0x7BFF, -113, &t.f) == INFINITY);
    fixture_close(&t);
    fixture_open(&t, "e2m1");
    assert_true(apsmpi_decode_one(0x5, 0, &t.f) == 3.0f); /* 0.10.1: the largest finite, 3 */
    assert_true(apsmpi_decode_one(0x6, 0, &t.f) == INFINITY);
    fixture_close(&t);
}

/* ---- encode ---- */

/* The points around the pair of neighbours (a, b): a, their midpoint, and the floats just
 * below and above the midpoint, each times 2^-s for several s, both signs, nearest and
 * stochastic rounding with extreme and random bits. */
static void encode_boundaries(const char *name)
{
    static const int scales[] = {0, 11, -13, 130};
    fixture t;
    fixture_open(&t, name);
    for (uint32_t k = 0; k <= t.r.max_code; k++) {
        double a = t.r.values[k];
        double b = k < t.r.max_code ? t.r.values[k + 1] : t.r.beyond;
        for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
            int s = scales[si];
            double mid = ldexp((a + b) / 2, -s);
            float fm = (float)mid;
            if ((double)fm != mid || isinf(fm))
                continue;
            float pts[4] = {(float)ldexp(a, -s), fm, nextafterf(fm, 0.0f), nextafterf(fm, INFINITY)};
            for (int p = 0; p < 4; p++) {
                for (int sign = 0; sign < 2; sign++) {
                    float x = sign ? -pts[p] : pts[p];
                    check_encode(&t, x, s, 0, 0);
                    check_encode(&t, x, s, 1, 0);
                    check_encode(&t, x, s, 1, 0xFFFFFFFFu);
                    check_encode(&t, x, s, 1, (uint32_t)rand64());
                }
            }
        }
    }
    fixture_close(&t);
}

static void test_encode_boundaries(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        encode_boundaries(all_formats[i]);
}

/* inf, NaN, zeros, float subnormals, the largest finite and just beyond, extreme scales. */
static void encode_specials(const char *name)
{
    static const uint32_t bits[] = {
        0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x00000000,
        0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00400000, 0x00400001, 0x00000003,
        0x00012345, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0x3FC00000,
    };
    static const int scales[] = {0, 1, -1, 100, 126, 140, 149, 150, 160, 200, 300, 32767, -5, -126, -300, -32768};
    fixture t;
    fixture_open(&t, name);
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        float x;
        memcpy(&x, &bits[i], sizeof x);
        for (size_t j = 0; j < sizeof scales / sizeof scales[0]; j++) {
            check_encode(&t, x, scales[j], 0, 0);
            check_encode(&t, x, scales[j], 1, 0x80000000u);
            check_encode(&t, x, scales[j], 1, 0xFFFFFFFFu);
        }
    }
    /* float subnormal inputs of every bit length, scaled into the format's range */
    for (int len = 1; len <= 23; len++) {
        for (int rep = 0; rep < 50; rep++) {
            uint32_t u = ((uint32_t)rand64() & ((1u << len) - 1)) | (1u << (len - 1));
            float x;
            memcpy(&x, &u, sizeof x);
            int s = 149 - len + rand_int(t.f.emin - t.f.mbits - 2, t.f.emax + 1);
            check_encode(&t, x, s, 0, 0);
            check_encode(&t, -x, s, 1, (uint32_t)rand64());
        }
    }
    fixture_close(&t);
}

static void test_encode_specials(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        encode_specials(all_formats[i]);
}

static uint32_t enc(const fixture *t, float x, int s) { return apsmpi_encode_one(f2u(x), s, &t->f, 0, 0); }

/* Known results, independent of the reference. */
static void test_encode_known_values(void **state)
{
    (void)state;
    fixture t;
    fixture_open(&t, "e4m3");
    assert_int_equal(enc(&t, 448.0f, 0), 0x7E);
    assert_int_equal(enc(&t, 464.0f, 0), 0x7E);                   /* tie 448|480: even 448 */
    assert_int_equal(enc(&t, nextafterf(464.0f, 1e9f), 0), 0x7F); /* rounds to 480: NaN */
    assert_int_equal(enc(&t, INFINITY, 0), 0x7F);
    assert_int_equal(enc(&t, -INFINITY, 0), 0xFF);
    assert_int_equal(enc(&t, -NAN, 0), 0xFF);
    assert_int_equal(enc(&t, 1.0f, 3), 0x50);     /* 8 */
    assert_int_equal(enc(&t, 0x1p-10f, 0), 0x00); /* half the smallest: even 0 */
    assert_int_equal(enc(&t, 0x1.8p-10f, 0), 0x01);
    assert_int_equal(enc(&t, -0.0f, 0), 0x80);
    fixture_close(&t);
    fixture_open(&t, "fp16");
    assert_int_equal(enc(&t, 65504.0f, 0), 0x7BFF);
    assert_int_equal(enc(&t, 65519.996f, 0), 0x7BFF);
    assert_int_equal(enc(&t, 65520.0f, 0), 0x7C00);
    assert_int_equal(enc(&t, 0x1p-149f, 149 - 24), 0x0001); /* float subnormal input */
    assert_int_equal(enc(&t, FLT_MAX, -113), 0x7800);       /* (2-2^-23)*2^14 -> 2^15 */
    assert_int_equal(enc(&t, 1.0f, -25), 0x0000);           /* 2^-25: tie 0|2^-24, even 0 */
    assert_int_equal(enc(&t, 1.0f, 16), 0x7C00);
    fixture_close(&t);
    fixture_open(&t, "e5m2");
    assert_int_equal(enc(&t, 57344.0f, 0), 0x7B);
    assert_int_equal(enc(&t, 61440.0f, 0), 0x7C); /* tie 57344|65536: even is inf */
    assert_int_equal(enc(&t, NAN, 0), 0x7E);
    fixture_close(&t);
    fixture_open(&t, "e2m0");
    assert_int_equal(enc(&t, 2.0f, 0), 0x2);
    assert_int_equal(enc(&t, 3.0f, 0), 0x2);                   /* tie 2|(4): code 2 is even */
    assert_int_equal(enc(&t, nextafterf(3.0f, 4.0f), 0), 0x3); /* inf */
    assert_int_equal(enc(&t, NAN, 0), 0x3);                    /* no NaN in e2m0: inf */
    fixture_close(&t);
}

/* At least 1,000,000 random inputs per format: nearest and stochastic encode, and
 * decode of random codes with random scales. */
static void random_format(const char *name)
{
    enum { N = 1000000 };
    fixture t;
    fixture_open(&t, name);
    uint32_t ncodes = 1u << t.f.width;
    for (int i = 0; i < N; i++) {
        int s;
        float x = random_input(&t, &s);
        check_encode(&t, x, s, 0, 0);
        check_encode(&t, x, s, 1, (uint32_t)rand64());
        uint32_t code = (uint32_t)rand64() % ncodes;
        int ds = i % 10 == 0 ? rand_int(-32768, 32767) : rand_int(-160, 160);
        check_decode(&t, code, ds, apsmpi_decode_one(code, ds, &t.f));
    }
    fixture_close(&t);
}

static void test_random(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        random_format(all_formats[i]);
}

/* ---- buffers ---- */

/* apsmpi_encode and apsmpi_decode on a buffer with per-block scales at an offset
 * first_index: codes, padding, untouched bytes after the output, flushed count, values. */
static void buffer_case(const fixture *t, size_t n, size_t first, size_t block_len, int stochastic)
{
    size_t nblocks = (first + n) / block_len + 1;
    int16_t *scale = malloc(nblocks * sizeof *scale);
    float *in = malloc((n + 1) * sizeof *in), *out = malloc((n + 1) * sizeof *out);
    uint32_t *want = malloc((n + 1) * sizeof *want);
    size_t cap = (n + 16) * 2 + 64;
    uint8_t *packed = malloc(cap), *expect = malloc(cap);
    assert_true(scale && in && out && want && packed && expect);
    for (size_t b = 0; b < nblocks; b++)
        scale[b] = (int16_t)(b % 7 == 6 ? rand_int(-200, 200) : rand_int(-20, 20));
    apsmpi_rounding r = {stochastic, rand64(), rand64()};
    uint64_t flushed_want = 0;
    for (size_t i = 0; i < n; i++) {
        int s = scale[(first + i) / block_len];
        in[i] = random_input_for(&t->f, s);
        uint32_t rnd = ref_rng_bits(r.seed, r.call, first + i);
        want[i] = stochastic ? ref_encode_stochastic(&t->r, in[i], s, rnd) : ref_encode_nearest(&t->r, in[i], s);
        flushed_want += in[i] != 0 && (want[i] & ((1u << (t->f.width - 1)) - 1)) == 0;
    }
    size_t bytes = ref_pack(want, n, t->f.width, apsmpi_group_elems(&t->f), expect);
    assert_int_equal(bytes, apsmpi_groups_for(&t->f, n) * apsmpi_group_bytes(&t->f));
    memset(packed, 0xA5, cap);
    uint64_t flushed = 7;
    apsmpi_encode(t->c, in, n, first, (apsmpi_scales){scale, block_len}, r, packed, &flushed);
    assert_memory_equal(packed, expect, bytes);
    for (size_t b = bytes; b < cap; b++)
        assert_int_equal(packed[b], 0xA5);
    assert_int_equal(flushed, 7 + flushed_want);
    out[n] = 1234.0f;
    apsmpi_decode(t->c, packed, n, first, (apsmpi_scales){scale, block_len}, out);
    for (size_t i = 0; i < n; i++)
        check_decode(t, want[i], scale[(first + i) / block_len], out[i]);
    assert_true(out[n] == 1234.0f);
    free(scale);
    free(in);
    free(out);
    free(want);
    free(packed);
    free(expect);
}

static void test_buffer_api(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 17, 1000, 1023, 1024, 1025, 4099, 10007};
    static const size_t blocks[] = {1, 3, 37, 1024, 4096};
    for (size_t i = 0; i < NFORMATS; i++) {
        fixture t;
        fixture_open(&t, all_formats[i]);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t first = k % 3 == 0 ? 0 : (size_t)rand_int(1, 100000);
            size_t bl = blocks[(k + i) % (sizeof blocks / sizeof blocks[0])];
            buffer_case(&t, sizes[k], first, bl, (int)(k & 1));
        }
        fixture_close(&t);
    }
}

/* No scales at all (scale == NULL means 0): the same as scale 0 everywhere. */
static void test_buffer_no_scales(void **state)
{
    (void)state;
    fixture t;
    fixture_open(&t, "e3m2");
    float in[11] = {0.1f, -0.2f, 14.0f, 14.9f, 1e-9f, -0.0f, 3.5f, 7.0f, 0.0625f, 15.0f, -1.75f};
    uint8_t packed[16] = {0};
    float out[11];
    apsmpi_encode(t.c, in, 11, 0, (apsmpi_scales){NULL, 0}, (apsmpi_rounding){0, 0, 0}, packed, NULL);
    apsmpi_decode(t.c, packed, 11, 0, (apsmpi_scales){NULL, 0}, out);
    for (int i = 0; i < 11; i++) {
        uint32_t code = ref_unpack_one(packed, (size_t)i, 6);
        assert_int_equal(code, ref_encode_nearest(&t.r, in[i], 0));
        check_decode(&t, code, 0, out[i]);
    }
    /* e3m2 is IEEE-like: largest finite 14; 15 is the tie 14|16 and goes to the even code, inf */
    assert_true(out[2] == 14.0f && out[3] == 14.0f && isinf(out[9]) && out[6] == 3.5f);
    fixture_close(&t);
}

/* Bit packing: every width 3..16, counts around the group size and large, random codes
 * (finite, so that decode then encode gives them back). */
static void test_packing_roundtrip(void **state)
{
    (void)state;
    static const char *const by_width[] = {"e2m0", "e2m1", "e3m1", "e3m2", "e4m2", "e5m2", "e5m3",
                                           "e5m4", "e6m4", "e5m6", "e5m7", "e6m7", "e5m9", "fp16"};
    for (int w = 3; w <= 16; w++) {
        fixture t;
        fixture_open(&t, by_width[w - 3]);
        assert_int_equal(t.f.width, w);
        size_t g = apsmpi_group_elems(&t.f);
        for (size_t n = 0; n <= 3 * g + 1 + 3000; n += (n < 3 * g + 1 ? 1 : 1499)) {
            uint32_t *codes = malloc((n + 1) * sizeof *codes);
            float *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
            uint8_t *packed = malloc(n * 2 + 64), *expect = malloc(n * 2 + 64);
            assert_true(codes && x && y && packed && expect);
            for (size_t k = 0; k < n; k++) {
                uint32_t sign = (uint32_t)(rand64() & 1) << (w - 1);
                codes[k] = sign | (uint32_t)(rand64() % (t.r.max_code + 1));
                x[k] = ref_decode(&t.r, codes[k], 0);
            }
            size_t bytes = ref_pack(codes, n, w, g, expect);
            memset(packed, 0x5A, n * 2 + 64);
            apsmpi_encode(t.c, x, n, 0, (apsmpi_scales){NULL, 0}, (apsmpi_rounding){0, 0, 0}, packed, NULL);
            assert_memory_equal(packed, expect, bytes);
            assert_int_equal(packed[bytes], 0x5A);
            for (size_t k = n; k < apsmpi_groups_for(&t.f, n) * g; k++)
                assert_int_equal(ref_unpack_one(packed, k, w), 0); /* zero padding */
            apsmpi_decode(t.c, packed, n, 0, (apsmpi_scales){NULL, 0}, y);
            for (size_t k = 0; k < n; k++)
                assert_int_equal(f2u(y[k]), f2u(x[k]));
            free(codes);
            free(x);
            free(y);
            free(packed);
            free(expect);
        }
        fixture_close(&t);
    }
}

/* ---- stochastic rounding ---- */

static void test_rng_construction(void **state)
{
    (void)state;
    for (int i = 0; i < 10000; i++) {
        uint64_t seed = rand64(), call = rand64() % 1000, index = rand64() >> (rand64() % 64);
        assert_int_equal(apsmpi_rng_bits(apsmpi_rng_key(seed, call), index), ref_rng_bits(seed, call, index));
    }
}

/* Same (seed, call, index): same bits; another call: different roundings. */
static void test_stochastic_reproducible(void **state)
{
    (void)state;
    enum { N = 4096 };
    fixture t;
    fixture_open(&t, "e4m3");
    float in[N];
    uint8_t p1[N], p2[N], p3[N];
    for (int i = 0; i < N; i++)
        in[i] = 1.0f + (float)(i % 100 + 1) * 0x1p-10f; /* never representable in e4m3 */
    apsmpi_rounding r = {1, 42, 7};
    apsmpi_scales sc = {NULL, 0};
    apsmpi_encode(t.c, in, N, 0, sc, r, p1, NULL);
    apsmpi_encode(t.c, in, N, 0, sc, r, p2, NULL);
    assert_memory_equal(p1, p2, N);
    r.call = 8;
    apsmpi_encode(t.c, in, N, 0, sc, r, p3, NULL);
    int differ = 0;
    for (int i = 0; i < N; i++)
        differ += p1[i] != p3[i];
    assert_true(differ > N / 10);
    /* a slice encoded at its offset gets the same bits as inside the whole buffer */
    r.call = 7;
    apsmpi_encode(t.c, in + 1000, 500, 1000, sc, r, p3, NULL);
    assert_memory_equal(p3, p1 + 1000, 500);
    fixture_close(&t);
}

/* Unbiased: for x between neighbours a < b, the count k of round-ups among N stochastic
 * roundings (N random streams) is binomial(N, p), p = (x - a)/(b - a). The test requires
 * |k - N p| <= 5 sqrt(N p (1 - p)) + 1, i.e. the mean of the rounded values lies within
 * 5 standard deviations of x (a false failure has probability below 1e-6 per case). */
static void test_stochastic_unbiased(void **state)
{
    (void)state;
    enum { N = 200000 };
    static const struct {
        const char *fmt;
        float x;
        int s;
    } cases[] = {
        {"e4m3", 1.1f, 0},  {"e4m3", 1.0625f, 0},  {"e4m3", 300.0f, 0}, {"e4m3", 0.0009f, 0},  {"e5m2", 3.3f, 2},
        {"e5m2", 1e-6f, 0}, {"bf16", 3.14159f, 0}, {"e3m2", 0.3f, -1},  {"fp16", 1.00001f, 0}, {"e4m3", 440.0f, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fixture t;
        fixture_open(&t, cases[c].fmt);
        uint32_t lo, hi;
        double p = ref_round_up_probability(&t.r, cases[c].x, cases[c].s, &lo, &hi);
        assert_true(p > 0.0 && p < 1.0);
        float *in = malloc(N * sizeof *in);
        uint8_t *packed = malloc(N * 2 + 16);
        assert_true(in && packed);
        for (int i = 0; i < N; i++)
            in[i] = cases[c].x;
        apsmpi_rounding r = {1, 2024, c};
        int16_t s = (int16_t)cases[c].s;
        apsmpi_encode(t.c, in, N, 0, (apsmpi_scales){&s, N}, r, packed, NULL);
        double up = 0, sum = 0;
        for (int i = 0; i < N; i++) {
            uint32_t code = ref_unpack_one(packed, (size_t)i, t.f.width);
            assert_true(code == lo || code == hi);
            up += code == hi;
            sum += ref_value(&t.r, code);
        }
        double bound = 5.0 * sqrt(N * p * (1.0 - p)) + 1.0;
        if (fabs(up - N * p) > bound) {
            print_error("%s x=%g: %g round-ups of %d, expected %g +- %g\n", t.f.name, (double)cases[c].x, up, N, N * p,
                        bound);
            fail();
        }
        double a = t.r.values[lo], ulp = t.r.values[hi] - a;
        assert_true(fabs(sum / N - ldexp(cases[c].x, cases[c].s)) <= bound / N * ulp + 1e-12 * a);
        free(in);
        free(packed);
        fixture_close(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_known_values),
        cmocka_unit_test(test_encode_known_values),
        cmocka_unit_test(test_decode_every_code),
        cmocka_unit_test(test_encode_boundaries),
        cmocka_unit_test(test_encode_specials),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_buffer_api),
        cmocka_unit_test(test_buffer_no_scales),
        cmocka_unit_test(test_packing_roundtrip),
        cmocka_unit_test(test_rng_construction),
        cmocka_unit_test(test_stochastic_reproducible),
        cmocka_unit_test(test_stochastic_unbiased),
    };
    int failed = cmocka_run_group_tests_name("best level", tests, NULL, NULL);
    if (apsmpi_codec_isa_best() != APSMPI_ISA_SCALAR) {
        level = APSMPI_ISA_SCALAR; /* the portable level, which CPUs without a vector level get */
        failed += cmocka_run_group_tests_name("level scalar", tests, NULL, NULL);
    }
    return failed;
}
