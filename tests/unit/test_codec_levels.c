/* test_codec_levels.c: every instruction-set level of the codec this machine has, bit for bit against the scalar level and the reference. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__SSE2__) || (defined(__aarch64__) && defined(__GNUC__))
#define HAVE_FLUSH_MODES 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/codec.h"
#include "reference.h"
#include "test_codec_common.h"

/* The formats: the named ones, other 8- and 16-bit eXmY, every bit-packed width. */
static const char *const all_formats[] = {
    "fp16", "bf16", "e5m2", "e4m3", "e4m3ieee", "e2m5", "e3m4", "e6m1", "e7m0", "e2m13", "e3m12", "e4m11",
    "e6m9", "e7m8", "e8m0", "e8m3", "e8m5",     "e7m2", "e2m0", "e2m1", "e3m1", "e3m2",  "e3m3",  "e6m3",
    "e4m2", "e5m3", "e5m4", "e6m4", "e5m6",     "e5m7", "e6m7", "e5m9", "e4m8", "e2m12",
};
#define NFORMATS (sizeof all_formats / sizeof all_formats[0])

/* The level under test, set by each group's setup. */
static int level;

typedef struct fixture {
    apsmpi_format f;
    apsmpi_codec *c;   /* the level under test */
    apsmpi_codec *ref; /* the scalar level */
    ref_format r;
} fixture;

static void fixture_open(fixture *t, const char *name)
{
    assert_int_equal(apsmpi_format_parse(name, &t->f), 0);
    t->c = apsmpi_codec_create_isa(&t->f, level);
    t->ref = apsmpi_codec_create_isa(&t->f, APSMPI_ISA_SCALAR);
    assert_non_null(t->c);
    assert_non_null(t->ref);
    assert_string_equal(apsmpi_codec_isa_of(t->c), apsmpi_codec_isa_name(level));
    assert_int_equal(ref_format_init(&t->r, t->f.ebits, t->f.mbits, t->f.kind == APSMPI_KIND_FN), 0);
}

static void fixture_close(fixture *t)
{
    apsmpi_codec_free(t->c);
    apsmpi_codec_free(t->ref);
    ref_format_free(&t->r);
}

static size_t packed_bytes(const apsmpi_format *f, size_t n) { return apsmpi_groups_for(f, n) * apsmpi_group_bytes(f); }

/* Slack around buffers, to shift them off any alignment and to see stray writes. */
enum { PAD = 64 };

/* Encodes in[0..n) with both codecs (the output `shift` bytes off alignment) and compares
 * the packed bytes, the bytes after them and the flushed counts, and the bytes of the level
 * under test encoding without a count; then decodes with both
 * (the floats `shift` elements off) and compares the float bits. Returns the packed codes
 * of the level under test in *packed_out (malloc'd) if not NULL. */
static void compare_levels(const fixture *t, const float *in, size_t n, size_t first, apsmpi_scales sc,
                           apsmpi_rounding r, size_t shift, uint8_t **packed_out)
{
    size_t bytes = packed_bytes(&t->f, n);
    size_t unit = t->f.width == 16 ? 2 : 1; /* whole codes of the 16-bit formats */
    size_t off = shift * unit % PAD;
    uint8_t *got = malloc(bytes + 2 * PAD), *want = malloc(bytes + 2 * PAD);
    float *fin = malloc((n + PAD) * sizeof *fin);
    float *out_got = malloc((n + PAD) * sizeof *out_got), *out_want = malloc((n + PAD) * sizeof *out_want);
    assert_true(got && want && fin && out_got && out_want);
    size_t fs = shift % 16;
    if (n)
        memcpy(fin + fs, in, n * sizeof *in);
    memset(got, 0xA5, bytes + 2 * PAD);
    memset(want, 0xA5, bytes + 2 * PAD);
    uint64_t fl_got = 3, fl_want = 3;
    apsmpi_encode(t->c, fin + fs, n, first, sc, r, got + off, &fl_got);
    apsmpi_encode(t->ref, in, n, first, sc, r, want + off, &fl_want);
    if (memcmp(got, want, bytes + 2 * PAD) != 0) {
        for (size_t b = 0; b < bytes + 2 * PAD; b++) {
            if (got[b] != want[b]) {
                size_t k = b < off ? 0 : (b - off) * 8 / (size_t)t->f.width;
                print_error("%s level %s encode%s n=%zu shift=%zu: byte %zu differs (0x%02x, scalar 0x%02x) near "
                            "element %zu, input %a (0x%08x)\n",
                            t->f.name, apsmpi_codec_isa_name(level), r.stochastic ? " stochastic" : "", n, shift, b,
                            got[b], want[b], k, k < n ? (double)in[k] : 0.0, k < n ? f2u(in[k]) : 0);
                break;
            }
        }
        fail();
    }
    assert_int_equal(fl_got, fl_want);
    /* and without the count (the loops skip counting then): the same bytes */
    uint8_t *uncounted = malloc(bytes + 2 * PAD);
    assert_non_null(uncounted);
    memset(uncounted, 0xA5, bytes + 2 * PAD);
    apsmpi_encode(t->c, fin + fs, n, first, sc, r, uncounted + off, NULL);
    if (memcmp(uncounted, got, bytes + 2 * PAD) != 0) {
        print_error("%s level %s encode%s n=%zu shift=%zu: other bytes without the flushed count\n", t->f.name,
                    apsmpi_codec_isa_name(level), r.stochastic ? " stochastic" : "", n, shift);
        fail();
    }
    free(uncounted);
    out_got[fs + n] = out_want[n] = 1234.0f;
    apsmpi_decode(t->c, got + off, n, first, sc, out_got + fs);
    apsmpi_decode(t->ref, want + off, n, first, sc, out_want);
    for (size_t k = 0; k <= n; k++) {
        if (f2u(out_got[fs + k]) != f2u(out_want[k])) {
            print_error("%s level %s decode n=%zu: element %zu is 0x%08x, scalar 0x%08x\n", t->f.name,
                        apsmpi_codec_isa_name(level), n, k, f2u(out_got[fs + k]), f2u(out_want[k]));
            fail();
        }
    }
    if (packed_out) {
        *packed_out = malloc(bytes + 1);
        assert_non_null(*packed_out);
        memcpy(*packed_out, got + off, bytes);
    }
    free(got);
    free(want);
    free(fin);
    free(out_got);
    free(out_want);
}

/* ---- decode: every code ---- */

static const int decode_scales[] = {0, 5, -7, 40, -40, 126, -127, 127, -128, 150, -150, 300, -300, 32767, -32768};

static void every_code(const char *name)
{
    fixture t;
    fixture_open(&t, name);
    size_t n = (size_t)1 << t.f.width;
    uint32_t *codes = malloc(n * sizeof *codes);
    uint8_t *packed = malloc(packed_bytes(&t.f, n) + PAD);
    float *out = malloc((n + 1) * sizeof *out);
    assert_true(codes && packed && out);
    for (size_t k = 0; k < n; k++)
        codes[k] = (uint32_t)k;
    ref_pack(codes, n, t.f.width, apsmpi_group_elems(&t.f), packed);
    for (size_t i = 0; i < sizeof decode_scales / sizeof decode_scales[0]; i++) {
        int16_t s = (int16_t)decode_scales[i];
        apsmpi_decode(t.c, packed, n, 0, (apsmpi_scales){&s, n}, out);
        for (size_t k = 0; k < n; k++) {
            float want = ref_decode(&t.r, (uint32_t)k, s);
            int ok = isnan(want) ? isnan(out[k]) && signbit(out[k]) == signbit(want) : f2u(out[k]) == f2u(want);
            if (!ok) {
                print_error("%s level %s decode code 0x%zx s=%d: 0x%08x, reference 0x%08x\n", name,
                            apsmpi_codec_isa_name(level), k, s, f2u(out[k]), f2u(want));
                fail();
            }
        }
    }
    free(codes);
    free(packed);
    free(out);
    fixture_close(&t);
}

static void test_every_code(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        every_code(all_formats[i]);
}

/* ---- encode: rounding boundaries and specials ---- */

/* Appends x to a growing array. */
typedef struct floats {
    float *v;
    size_t n, cap;
} floats;

static void push(floats *a, float x)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1024;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
        assert_non_null(a->v);
    }
    a->v[a->n++] = x;
}

/* Every neighbour pair's lower value, midpoint and the floats beside the midpoint, both
 * signs, for scale s; then the special inputs. */
static void boundary_inputs(const fixture *t, int s, floats *a)
{
    static const uint32_t special_bits[] = {
        0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFFBFFFFF, 0x00000000,
        0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00400000, 0x00400001, 0x00000003, 0x00012345,
        0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0x3FC00000, 0x0000FFFF, 0x00008000, 0x00010000,
    };
    for (uint32_t k = 0; k <= t->r.max_code; k++) {
        double lo = t->r.values[k];
        double hi = k < t->r.max_code ? t->r.values[k + 1] : t->r.beyond;
        double mid = ldexp((lo + hi) / 2, -s);
        float fm = (float)mid;
        float pts[4] = {(float)ldexp(lo, -s), fm, nextafterf(fm, 0.0f), nextafterf(fm, INFINITY)};
        for (int p = 0; p < 4; p++) {
            push(a, pts[p]);
            push(a, -pts[p]);
        }
    }
    for (size_t i = 0; i < sizeof special_bits / sizeof special_bits[0]; i++)
        push(a, u2f(special_bits[i]));
    /* float subnormals of every bit length */
    for (int len = 1; len <= 23; len++)
        for (int rep = 0; rep < 8; rep++)
            push(a, u2f(((uint32_t)rand64() & ((1u << len) - 1)) | (1u << (len - 1)) | (uint32_t)(rep & 1) << 31));
}

static void boundaries(const char *name)
{
    static const int scales[] = {0, 11, -13, 130, 126, 127, -126, -127, 149, 200, -300, 32767, -32768};
    fixture t;
    fixture_open(&t, name);
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
        floats a = {0};
        int16_t s = (int16_t)scales[si];
        boundary_inputs(&t, s, &a);
        apsmpi_scales sc = {&s, SIZE_MAX / 2}; /* one block */
        uint8_t *packed;
        compare_levels(&t, a.v, a.n, 0, sc, (apsmpi_rounding){0, 0, 0}, si, &packed);
        for (size_t k = 0; k < a.n; k++) {
            uint32_t got = ref_unpack_one(packed, k, t.f.width), want = ref_encode_nearest(&t.r, a.v[k], s);
            if (got != want) {
                print_error("%s level %s encode %a (0x%08x) s=%d: 0x%x, reference 0x%x\n", name,
                            apsmpi_codec_isa_name(level), (double)a.v[k], f2u(a.v[k]), s, got, want);
                fail();
            }
        }
        free(packed);
        apsmpi_rounding sr = {1, rand64(), rand64()};
        size_t first = (size_t)rand_int(0, 1000);
        compare_levels(&t, a.v, a.n, first, sc, sr, si + 1, &packed);
        for (size_t k = 0; k < a.n; k += 7) /* a sample against the reference itself */
            assert_int_equal(ref_unpack_one(packed, k, t.f.width),
                             ref_encode_stochastic(&t.r, a.v[k], s, ref_rng_bits(sr.seed, sr.call, first + k)));
        free(packed);
        free(a.v);
    }
    fixture_close(&t);
}

static void test_boundaries(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        boundaries(all_formats[i]);
}

/* ---- a million random inputs per format, per-block scales ---- */

static void random_inputs(const char *name)
{
    enum { N = 1000000, BLOCK = 997 };
    fixture t;
    fixture_open(&t, name);
    size_t nblocks = N / BLOCK + 1;
    int16_t *scale = malloc(nblocks * sizeof *scale);
    float *in = malloc(N * sizeof *in);
    assert_true(scale && in);
    for (size_t b = 0; b < nblocks; b++)
        scale[b] = (int16_t)(b % 13 == 12 ? rand_int(-400, 400) : rand_int(-30, 30));
    for (size_t i = 0; i < N; i++)
        in[i] = random_input_for(&t.f, scale[i / BLOCK]);
    apsmpi_scales sc = {scale, BLOCK};
    compare_levels(&t, in, N, 0, sc, (apsmpi_rounding){0, 0, 0}, 0, NULL);
    compare_levels(&t, in, N, 0, sc, (apsmpi_rounding){1, rand64(), rand64()}, 0, NULL);
    /* no scales at all */
    compare_levels(&t, in, N / 10, 0, (apsmpi_scales){NULL, 0}, (apsmpi_rounding){0, 0, 0}, 5, NULL);
    free(scale);
    free(in);
    fixture_close(&t);
}

static void test_random_inputs(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        random_inputs(all_formats[i]);
}

/* ---- odd lengths, offsets into the buffer, misaligned buffers ---- */

static void test_lengths_and_alignment(void **state)
{
    (void)state;
    enum { MAXN = 300 };
    for (size_t i = 0; i < NFORMATS; i++) {
        fixture t;
        fixture_open(&t, all_formats[i]);
        int16_t scale[64];
        float in[MAXN];
        for (size_t b = 0; b < 64; b++)
            scale[b] = (int16_t)rand_int(-20, 20);
        for (size_t n = 0; n < MAXN; n += n < 70 ? 1 : 37) {
            size_t first = (size_t)rand_int(0, 2000);
            apsmpi_scales sc = {scale, 61};
            for (size_t k = 0; k < n; k++)
                in[k] = random_input_for(&t.f, scale[(first + k) / 61 % 64]);
            compare_levels(&t, in, n, first, sc, (apsmpi_rounding){(int)(n & 1), 77, n}, n, NULL);
        }
        fixture_close(&t);
    }
}

/* ---- the packed sum ---- */

static void sums(const char *name)
{
    fixture t;
    fixture_open(&t, name);
    int w = t.f.width;
    size_t g = apsmpi_group_elems(&t.f);
    size_t n = w <= 8 ? (size_t)1 << (2 * w) : 300001;
    uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    size_t bytes = packed_bytes(&t.f, n);
    uint8_t *pa = malloc(bytes + PAD), *pb = malloc(bytes + PAD), *pw = malloc(bytes + PAD);
    assert_true(a && b && pa && pb && pw);
    /* w <= 8: every pair of codes once, a changing from each element to the next as b does (so
     * that a loop taking an operand from the wrong lane or the wrong vector is seen) */
    for (size_t k = 0; k < n; k++) {
        a[k] = w <= 8 ? (uint32_t)(((k >> w) + k) & ((1u << w) - 1)) : random_code(&t.f, &t.r);
        b[k] = w <= 8 ? (uint32_t)(k & ((1u << w) - 1)) : random_code(&t.f, &t.r);
    }
    size_t off = w == 16 ? 2 : 1; /* off alignment */
    ref_pack(a, n, w, g, pa + off);
    ref_pack(b, n, w, g, pb + off);
    memcpy(pw, pb, bytes + off);
    pb[off + bytes] = pw[off + bytes] = 0xC3;
    apsmpi_sum_packed(t.c, pa + off, pb + off, apsmpi_groups_for(&t.f, n));
    apsmpi_sum_packed(t.ref, pa + off, pw + off, apsmpi_groups_for(&t.f, n));
    assert_int_equal(pb[off + bytes], 0xC3);
    uint32_t magmask = (1u << (w - 1)) - 1;
    for (size_t k = 0; k < n; k++) {
        uint32_t got = ref_unpack_one(pb + off, k, w), want = ref_unpack_one(pw + off, k, w);
        float sum = (float)(ref_value(&t.r, a[k]) + ref_value(&t.r, b[k]));
        /* a NaN sum: the format's NaN code, the sign is the hardware's choice */
        int ok = isnan(sum) ? (got & magmask) == t.r.nan_code && (want & magmask) == t.r.nan_code
                            : got == want && got == ref_encode_nearest(&t.r, sum, 0);
        if (!ok) {
            print_error("%s level %s sum 0x%x + 0x%x: 0x%x, scalar 0x%x, reference 0x%x\n", name,
                        apsmpi_codec_isa_name(level), a[k], b[k], got, want, ref_encode_nearest(&t.r, sum, 0));
            fail();
        }
    }
    free(a);
    free(b);
    free(pa);
    free(pb);
    free(pw);
    fixture_close(&t);
}

static void test_sums(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFORMATS; i++)
        sums(all_formats[i]);
}

/* ---- the caller's flush-to-zero modes ---- */

#if defined(__SSE2__)
static unsigned get_fp_mode(void) { return _mm_getcsr(); }

static void set_fp_mode(unsigned m) { _mm_setcsr(m); }

enum { FLUSHING = 0x8040 }; /* MXCSR FTZ | DAZ */
#elif defined(HAVE_FLUSH_MODES)
static unsigned get_fp_mode(void) { return __builtin_aarch64_get_fpcr(); }

static void set_fp_mode(unsigned m) { __builtin_aarch64_set_fpcr(m); }

enum { FLUSHING = 1 << 24 | 1 << 25 }; /* FPCR FZ | DN (default NaN) */
#endif

/* With FTZ and DAZ (aarch64: FZ and DN) set by the caller (as some frameworks do), every level still
 * gives the IEEE results (float subnormal inputs and outputs kept), and the caller's mode is
 * back after each call. */
static void test_flush_modes(void **state)
{
    (void)state;
#if defined(HAVE_FLUSH_MODES)
    static const char *const names[] = {"fp16", "bf16", "e4m3", "e8m3", "e5m7", "e8m0"};
    unsigned saved = get_fp_mode(), flushing = saved | FLUSHING;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fixture t;
        fixture_open(&t, names[i]);
        enum { N = 4000 };
        float in[N];
        int16_t scale[N / 50 + 1];
        for (size_t b = 0; b < N / 50 + 1; b++)
            scale[b] = (int16_t)rand_int(-20, 150);
        /* float subnormals and values that scale into them; quiet NaNs of either sign with
         * payloads (a default-NaN mode, aarch64's DN, would make them all the positive one) */
        for (size_t k = 0; k < N; k++)
            in[k] = k % 14 == 3 ? u2f(0x7FC00000u | ((uint32_t)rand64() & 0x803FFFFFu))
                    : k % 2     ? u2f((uint32_t)rand64() & 0x807FFFFFu)
                                : random_input_for(&t.f, scale[k / 50]);
        set_fp_mode(flushing);
        uint8_t packed[2 * N + 64];
        float out[N];
        apsmpi_scales sc = {scale, 50};
        apsmpi_encode(t.c, in, N, 0, sc, (apsmpi_rounding){0, 0, 0}, packed, NULL);
        apsmpi_decode(t.c, packed, N, 0, sc, out);
        assert_int_equal(get_fp_mode(), flushing);
        set_fp_mode(saved);
        for (size_t k = 0; k < N; k++) {
            int s = scale[k / 50];
            uint32_t code = ref_unpack_one(packed, k, t.f.width);
            assert_int_equal(code, ref_encode_nearest(&t.r, in[k], s));
            float want = ref_decode(&t.r, code, s);
            assert_true(isnan(want) ? isnan(out[k]) && signbit(out[k]) == signbit(want) : f2u(out[k]) == f2u(want));
        }
        fixture_close(&t);
    }
#else
    skip();
#endif
}

/* ---- levels and their names ---- */

static void test_level_names(void **state)
{
    (void)state;
    for (int i = 0; i < APSMPI_ISA_COUNT; i++)
        assert_int_equal(apsmpi_codec_isa_parse(apsmpi_codec_isa_name(i)), i);
    assert_int_equal(apsmpi_codec_isa_parse("sse"), -1);
    assert_int_equal(apsmpi_codec_isa_parse(""), -1);
    assert_true(apsmpi_codec_isa_supported(APSMPI_ISA_SCALAR) && apsmpi_codec_isa_supported(APSMPI_ISA_AUTO));
    assert_true(apsmpi_codec_isa_supported(apsmpi_codec_isa_best()));
    apsmpi_format f;
    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    apsmpi_codec *c = apsmpi_codec_create(&f);
    assert_string_equal(apsmpi_codec_isa_of(c), apsmpi_codec_isa_name(apsmpi_codec_isa_best()));
    apsmpi_codec_free(c);
    for (int i = APSMPI_ISA_SCALAR; i < APSMPI_ISA_COUNT; i++) {
        c = apsmpi_codec_create_isa(&f, i);
        assert_true((c != NULL) == (apsmpi_codec_isa_supported(i) != 0));
        apsmpi_codec_free(c);
    }
}

static int set_level(void **state)
{
    level = *(int *)*state;
    return 0;
}

int main(void)
{
    const struct CMUnitTest names[] = {cmocka_unit_test(test_level_names)};
    int failed = cmocka_run_group_tests_name("levels", names, NULL, NULL);
    for (int isa = APSMPI_ISA_SCALAR; isa < APSMPI_ISA_COUNT; isa++) {
        if (!apsmpi_codec_isa_supported(isa)) {
            printf("[  SKIPPED ] level %s: not in this build or not on this CPU\n", apsmpi_codec_isa_name(isa));
            continue;
        }
        static int levels[APSMPI_ISA_COUNT];
        levels[isa] = isa;
        void *st = &levels[isa];
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_prestate_setup_teardown(test_every_code, set_level, NULL, st),
            cmocka_unit_test_prestate_setup_teardown(test_boundaries, set_level, NULL, st),
            cmocka_unit_test_prestate_setup_teardown(test_random_inputs, set_level, NULL, st),
            cmocka_unit_test_prestate_setup_teardown(test_lengths_and_alignment, set_level, NULL, st),
            cmocka_unit_test_prestate_setup_teardown(test_sums, set_level, NULL, st),
            cmocka_unit_test_prestate_setup_teardown(test_flush_modes, set_level, NULL, st),
        };
        char group[32];
        snprintf(group, sizeof group, "level %s", apsmpi_codec_isa_name(isa));
        failed += _cmocka_run_group_tests(group, tests, sizeof tests / sizeof tests[0], NULL, NULL);
    }
    return failed;
}
