/* test_format.c: cmocka tests of format name parsing, the derived fields and the packing group sizes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/format.h"

static apsmpi_format parse_ok(const char *name)
{
    apsmpi_format f;
    memset(&f, 0xEE, sizeof f);
    assert_int_equal(apsmpi_format_parse(name, &f), 0);
    return f;
}

/* Every field of one format. */
static void check_fields(const char *name, int ebits, int mbits, int kind, int emax, uint32_t max_code,
                         uint32_t ovf_code, uint32_t nan_code, float max_finite)
{
    apsmpi_format f = parse_ok(name);
    assert_string_equal(f.name, name);
    assert_int_equal(f.ebits, ebits);
    assert_int_equal(f.mbits, mbits);
    assert_int_equal(f.width, 1 + ebits + mbits);
    assert_int_equal(f.bias, (1 << (ebits - 1)) - 1);
    assert_int_equal(f.emin, 1 - f.bias);
    assert_int_equal(f.emax, emax);
    assert_int_equal(f.kind, kind);
    assert_int_equal(f.max_code, max_code);
    assert_int_equal(f.ovf_code, ovf_code);
    assert_int_equal(f.nan_code, nan_code);
    assert_true(f.max_finite == max_finite);
}

static void test_named_formats(void **state)
{
    (void)state;
    check_fields("fp16", 5, 10, APSMPI_KIND_IEEE, 15, 0x7BFF, 0x7C00, 0x7E00, 65504.0f);
    check_fields("bf16", 8, 7, APSMPI_KIND_IEEE, 127, 0x7F7F, 0x7F80, 0x7FC0, 0x1.FEp127f);
    check_fields("e5m2", 5, 2, APSMPI_KIND_IEEE, 15, 0x7B, 0x7C, 0x7E, 57344.0f);
    check_fields("e4m3", 4, 3, APSMPI_KIND_FN, 8, 0x7E, 0x7F, 0x7F, 448.0f);
    check_fields("e4m3ieee", 4, 3, APSMPI_KIND_IEEE, 7, 0x77, 0x78, 0x7C, 240.0f);
    apsmpi_format bf = parse_ok("bf16");
    assert_true(fabsf(bf.max_finite - 3.3895314e38f) <= 1e32f);
}

/* IEEE-like eXmY: largest finite (2 - 2^-Y) * 2^emax, emax = 2^X - 2 - bias; with Y = 0 it is
 * 2^emax and the top exponent holds only inf (which then also stands for NaN). */
static void test_custom_formats(void **state)
{
    (void)state;
    check_fields("e3m2", 3, 2, APSMPI_KIND_IEEE, 3, 0x1B, 0x1C, 0x1E, 14.0f);
    check_fields("e2m1", 2, 1, APSMPI_KIND_IEEE, 1, 0x5, 0x6, 0x7, 3.0f);
    check_fields("e2m0", 2, 0, APSMPI_KIND_IEEE, 1, 0x2, 0x3, 0x3, 2.0f);
    check_fields("e8m0", 8, 0, APSMPI_KIND_IEEE, 127, 0xFE, 0xFF, 0xFF, 0x1p127f);
    check_fields("e5m10", 5, 10, APSMPI_KIND_IEEE, 15, 0x7BFF, 0x7C00, 0x7E00, 65504.0f);
    check_fields("e8m7", 8, 7, APSMPI_KIND_IEEE, 127, 0x7F7F, 0x7F80, 0x7FC0, 0x1.FEp127f);
    check_fields("e2m13", 2, 13, APSMPI_KIND_IEEE, 1, 0x5FFF, 0x6000, 0x7000, 0x1.FFF8p1f);
    check_fields("e7m8", 7, 8, APSMPI_KIND_IEEE, 63, 0x7EFF, 0x7F00, 0x7F80, 0x1.FFp63f);
    check_fields("e6m1", 6, 1, APSMPI_KIND_IEEE, 31, 0x7D, 0x7E, 0x7F, 0x1.8p31f);
}

/* Every name eXmY in the valid range parses, with its own fields; names are case-blind. */
static void test_every_custom_name(void **state)
{
    (void)state;
    char name[16];
    int count = 0;
    for (int x = 2; x <= 8; x++) {
        for (int y = 0; y <= 23; y++) {
            apsmpi_format f;
            snprintf(name, sizeof name, "e%dm%d", x, y);
            int ok = x + y <= 15;
            assert_int_equal(apsmpi_format_parse(name, &f), ok ? 0 : -1);
            if (ok) {
                count++;
                assert_int_equal(f.ebits, x);
                assert_int_equal(f.mbits, y);
                assert_int_equal(f.kind, x == 4 && y == 3 ? APSMPI_KIND_FN : APSMPI_KIND_IEEE); /* e4m3 is FN */
                assert_true(f.width >= 3 && f.width <= 16);
            }
        }
    }
    assert_int_equal(count, 7 * 14 - (1 + 2 + 3 + 4 + 5 + 6)); /* y <= 15 - x for x = 2..8 */
    apsmpi_format f = parse_ok("E4M3");
    assert_string_equal(f.name, "e4m3");
    assert_int_equal(f.kind, APSMPI_KIND_FN);
    f = parse_ok("FP16");
    assert_string_equal(f.name, "fp16");
}

static void test_rejected_names(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",         "fp32",   "fp8",   "bf8",   "e4m3x", "e4m3fn", "e4m3ieee ", " e4m3", "e9m2",
        "e1m2",     "e0m3",   "e2m14", "e8m8",  "e3m13", "e16m0",  "e4",        "m3",    "e4m",
        "em3",      "e-4m3",  "e4m-3", "e4m+3", "e04m3", "e4m03",  "e4m3\n",    "fp16x", "xfp16",
        "e5m2e5m2", "e4m300", "4m3",   "e 4m3", "e4 m3", "bf16 ",  "e12m3",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        apsmpi_format f;
        if (apsmpi_format_parse(bad[i], &f) != -1) {
            print_error("\"%s\" was accepted\n", bad[i]);
            fail();
        }
    }
    apsmpi_format f;
    assert_int_equal(apsmpi_format_parse(NULL, &f), -1);
}

static void check_group(const char *name, size_t elems, size_t bytes)
{
    apsmpi_format f = parse_ok(name);
    assert_int_equal(apsmpi_group_elems(&f), elems);
    assert_int_equal(apsmpi_group_bytes(&f), bytes);
}

static void test_group_sizes(void **state)
{
    (void)state;
    check_group("e3m2", 4, 3);  /* w = 6 */
    check_group("e4m2", 8, 7);  /* w = 7 */
    check_group("e5m6", 2, 3);  /* w = 12 */
    check_group("fp16", 1, 2);  /* w = 16 */
    check_group("e4m3", 1, 1);  /* w = 8 */
    check_group("e2m0", 8, 3);  /* w = 3 */
    check_group("e2m1", 2, 1);  /* w = 4 */
    check_group("e5m7", 8, 13); /* w = 13 */
    check_group("e5m4", 4, 5);  /* w = 10 */
    apsmpi_format f = parse_ok("e3m2");
    assert_int_equal(apsmpi_groups_for(&f, 0), 0);
    assert_int_equal(apsmpi_groups_for(&f, 1), 1);
    assert_int_equal(apsmpi_groups_for(&f, 4), 1);
    assert_int_equal(apsmpi_groups_for(&f, 5), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named_formats),     cmocka_unit_test(test_custom_formats),
        cmocka_unit_test(test_every_custom_name), cmocka_unit_test(test_rejected_names),
        cmocka_unit_test(test_group_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
