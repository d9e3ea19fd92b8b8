/* mx_reference.c: the OCP MX reference for the tests: element values from their definition, nearest search, bit-by-bit layout. */
#include "mx_reference.h"

#include <math.h>
#include <string.h>

/* As the specification (section 5.3) describes each element: fields, bias, special codes,
 * the largest normal and the smallest subnormal it states. */
#define ELEM(NAME, E, M, BIAS, NAN_ALL_ONES, IEEE, MAX, MIN_SUB)                                                    \
    {                                                                                                               \
        .mx_name = NAME, .ebits = E, .mbits = M, .bias = BIAS, .nan_all_ones = NAN_ALL_ONES, .ieee_specials = IEEE, \
        .stated_max = MAX, .stated_min_subnormal = MIN_SUB                                                          \
    }
static mxref_elem formats[MXREF_NFORMATS] = {
    ELEM("mxfp8", 4, 3, 7, 1, 0, 448.0, 0x1p-9),
    ELEM("mxfp8e5m2", 5, 2, 15, 0, 1, 57344.0, 0x1p-16),
    ELEM("mxfp6", 3, 2, 3, 0, 0, 28.0, 0.0625),
    ELEM("mxfp6e2m3", 2, 3, 1, 0, 0, 7.5, 0.125),
    ELEM("mxfp4", 2, 1, 1, 0, 0, 6.0, 0.5),
    /* not OCP's: apsmpi's FP5 E3M1, made as OCP makes FP6 E3M2 (core/mx_format.h) */
    ELEM("mxfp5", 3, 1, 3, 0, 0, 24.0, 0.125),
};

/* The value of a magnitude code from the definition: exponent field E and mantissa field M
 * read as integers; E = 0: 2^(1 - bias) * (M / 2^mbits), else 2^(E - bias) * (1 + M / 2^mbits). */
static double definition_value(const mxref_elem *e, uint32_t mag)
{
    uint32_t E = mag >> e->mbits, M = mag & ((1u << e->mbits) - 1);
    double frac = (double)M / (double)(1u << e->mbits);
    if (e->nan_all_ones && E == (1u << e->ebits) - 1 && M == (1u << e->mbits) - 1)
        return NAN;
    if (e->ieee_specials && E == (1u << e->ebits) - 1)
        return M == 0 ? INFINITY : NAN;
    return E == 0 ? pow(2.0, 1 - e->bias) * frac : pow(2.0, (double)E - e->bias) * (1.0 + frac);
}

const mxref_elem *mxref_format(int i)
{
    mxref_elem *e = &formats[i];
    if (e->width == 0) {
        e->width = 1 + e->ebits + e->mbits;
        uint32_t n = 1u << (e->width - 1);
        e->max_mag = 0;
        for (uint32_t c = 0; c < n; c++) {
            e->value[c] = definition_value(e, c);
            if (isfinite(e->value[c]))
                e->max_mag = c;
        }
        e->emax = (int)floor(log2(e->value[e->max_mag]));
    }
    return e;
}

double mxref_value(const mxref_elem *e, uint32_t code)
{
    double v = e->value[code & ((1u << (e->width - 1)) - 1)];
    return (code >> (e->width - 1)) & 1 ? -v : v;
}

uint8_t mxref_scale(const mxref_elem *e, const float *block)
{
    double amax = 0;
    for (int j = 0; j < 32; j++) {
        if (!isfinite(block[j]))
            return 255;
        amax = fabs((double)block[j]) > amax ? fabs((double)block[j]) : amax;
    }
    if (amax == 0)
        amax = 0x1p-126;
    int exp;
    frexp(amax, &exp); /* amax = m * 2^exp, 0.5 <= m < 1: floor(log2 amax) = exp - 1 */
    int shared = exp - 1 - e->emax;
    if (shared < -127)
        shared = -127;
    return (uint8_t)(shared + 127);
}

uint32_t mxref_quantize(const mxref_elem *e, float v, uint8_t scale, int rnd_valid, uint32_t rnd)
{
    uint32_t sign = signbit(v) ? 1u << (e->width - 1) : 0;
    double a = ldexp(fabs((double)v), 127 - (int)scale); /* exact: a power-of-two scaling of a float */
    uint32_t lo = 0;
    for (uint32_t c = 0; c <= e->max_mag; c++)
        if (e->value[c] <= a)
            lo = c;
    if (lo == e->max_mag || e->value[lo] == a) /* saturation, or exact */
        return lo | sign;
    uint32_t hi = lo + 1;
    double p = (a - e->value[lo]) / (e->value[hi] - e->value[lo]);
    uint32_t mag;
    if (rnd_valid)
        mag = (uint64_t)rnd + (uint64_t)floor(ldexp(p, 32)) >= ((uint64_t)1 << 32) ? hi : lo;
    else
        mag = p > 0.5 ? hi : p < 0.5 ? lo : (lo & 1) ? hi : lo;
    return mag | sign;
}

float mxref_decode(const mxref_elem *e, uint32_t code, uint8_t scale)
{
    if (scale == 255)
        return NAN;
    return (float)ldexp(mxref_value(e, code), (int)scale - 127); /* exact in double, rounded once */
}

size_t mxref_encode(const mxref_elem *e, const float *in, size_t n, const uint32_t *rnd, uint8_t *out)
{
    size_t nblocks = (n + 31) / 32, gb = 1 + 4 * (size_t)e->width;
    memset(out, 0, nblocks * gb);
    for (size_t b = 0; b < nblocks; b++) {
        float block[32] = {0};
        for (size_t j = 0; j < 32 && b * 32 + j < n; j++)
            block[j] = in[b * 32 + j];
        uint8_t *g = out + b * gb;
        g[0] = mxref_scale(e, block);
        for (int j = 0; j < 32; j++) {
            size_t i = b * 32 + (size_t)j;
            uint32_t code = 0;
            if (g[0] != 255 && i < n)
                code = mxref_quantize(e, block[j], g[0], rnd != NULL, rnd ? rnd[i] : 0);
            for (int bit = 0; bit < e->width; bit++) {
                size_t pos = (size_t)j * (size_t)e->width + (size_t)bit;
                if ((code >> bit) & 1)
                    g[1 + pos / 8] |= (uint8_t)(1u << (pos % 8));
            }
        }
    }
    return nblocks * gb;
}

uint32_t mxref_code(const mxref_elem *e, const uint8_t *block, int j)
{
    uint32_t code = 0;
    for (int bit = 0; bit < e->width; bit++) {
        size_t pos = (size_t)j * (size_t)e->width + (size_t)bit;
        code |= (uint32_t)((block[1 + pos / 8] >> (pos % 8)) & 1) << bit;
    }
    return code;
}
