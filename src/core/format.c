/* format.c: parses a format name (fp16, bf16, e5m2, e4m3, e4m3ieee, eXmY, the MX formats) into its bit layout. */
#include <string.h>
#include <math.h>
#include "core/format.h"
#include "core/mx_format.h"

/* Parses a decimal number of 1 or 2 digits without a leading zero at *p, advancing *p;
 * -1 if there is none. */
static int parse_small_uint(const char **p)
{
    const char *s = *p;
    int v = 0, digits = 0;
    while (*s >= '0' && *s <= '9' && digits < 2) {
        v = v * 10 + (*s - '0');
        s++;
        digits++;
    }
    if (digits == 0 || (*s >= '0' && *s <= '9') || (digits == 2 && (*p)[0] == '0'))
        return -1;
    *p = s;
    return v;
}

/* Copies name in lower case into buf (size n); -1 if it does not fit. */
static int lower_copy(const char *name, char *buf, size_t n)
{
    size_t i = 0;
    for (; name[i] != '\0'; i++) {
        if (i + 1 >= n)
            return -1;
        char ch = name[i];
        buf[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    buf[i] = '\0';
    return 0;
}

/* Fills every field of *out from the layout (mx = 0); name is copied (already in lower case). */
static void format_fill(apsmpi_format *out, const char *name, int ebits, int mbits, int kind)
{
    memset(out, 0, sizeof *out);
    strncpy(out->name, name, sizeof out->name - 1);
    out->ebits = ebits;
    out->mbits = mbits;
    out->width = 1 + ebits + mbits;
    out->bias = (1 << (ebits - 1)) - 1;
    out->emin = 1 - out->bias;
    out->kind = kind;
    uint32_t top_exp = (1u << ebits) - 1; /* the all-ones exponent field */
    uint32_t mant_all = (1u << mbits) - 1;
    if (kind == APSMPI_KIND_FINITE) {
        /* every code is finite; a conversion saturates (no code for inf or NaN) */
        out->max_code = (top_exp << mbits) | mant_all;
        out->ovf_code = out->max_code;
        out->nan_code = out->max_code;
        out->emax = (int)top_exp - out->bias;
    } else if (kind == APSMPI_KIND_FN) {
        /* all codes are finite but S.1...1.1...1, which is NaN */
        out->nan_code = (top_exp << mbits) | mant_all;
        out->max_code = out->nan_code - 1;
        out->ovf_code = out->nan_code;
        out->emax = (int)top_exp - out->bias;
    } else {
        out->max_code = (top_exp << mbits) - 1;
        out->ovf_code = top_exp << mbits; /* inf */
        /* quiet NaN: top mantissa bit; with no mantissa bits there is no NaN, only inf */
        out->nan_code = mbits > 0 ? out->ovf_code | (1u << (mbits - 1)) : out->ovf_code;
        out->emax = (int)top_exp - 1 - out->bias;
    }
    uint32_t max_mant = out->max_code & mant_all;
    out->max_finite = (float)ldexp(1.0 + ldexp((double)max_mant, -mbits), out->emax);
}

/* Names are matched regardless of case; out->name is the lower-case spelling. */
int apsmpi_format_parse(const char *name, apsmpi_format *out)
{
    static const struct {
        const char *name;
        int ebits, mbits, kind;
    } named[] = {
        {"fp16", 5, 10, APSMPI_KIND_IEEE},
        {"bf16", 8, 7, APSMPI_KIND_IEEE},
        {"e4m3", 4, 3, APSMPI_KIND_FN},
        {"e4m3ieee", 4, 3, APSMPI_KIND_IEEE},
    };
    char lc[sizeof out->name];
    if (name == NULL || lower_copy(name, lc, sizeof lc) != 0)
        return -1;
    name = lc;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (strcmp(name, named[i].name) == 0) {
            format_fill(out, name, named[i].ebits, named[i].mbits, named[i].kind);
            return 0;
        }
    }
    const char *mx_name;
    int ebits, mbits, kind;
    if (apsmpi_mx_format_lookup(name, &mx_name, &ebits, &mbits, &kind) == 0) {
        format_fill(out, mx_name, ebits, mbits, kind);
        out->mx = 1;
        return 0;
    }
    const char *p = name;
    if (*p++ != 'e')
        return -1;
    int x = parse_small_uint(&p);
    if (x < 0 || *p++ != 'm')
        return -1;
    int y = parse_small_uint(&p);
    if (y < 0 || *p != '\0')
        return -1;
    if (x < 2 || x > 8 || y > 23 || x + y > 15)
        return -1;
    format_fill(out, name, x, y, APSMPI_KIND_IEEE);
    return 0;
}
