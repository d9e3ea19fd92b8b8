/* reference.c: the codec tests' independent reference: value tables in double, nearest search, bitwise packing. */
#include <math.h>
#include <stdlib.h>
#include "reference.h"

int ref_format_init(ref_format *r, int ebits, int mbits, int fn)
{
    r->ebits = ebits;
    r->mbits = mbits;
    r->fn = fn;
    r->width = 1 + ebits + mbits;
    uint32_t top = (1u << ebits) - 1, mcount = 1u << mbits;
    int bias = (1 << (ebits - 1)) - 1;
    /* fn: every code but all-ones is finite; IEEE: the top exponent is not finite */
    r->max_code = fn ? (top << mbits) + mcount - 2 : (top << mbits) - 1;
    r->ovf_code = fn ? r->max_code + 1 : top << mbits;
    r->nan_code = fn ? r->max_code + 1 : (mbits > 0 ? (top << mbits) + mcount / 2 : top << mbits);
    r->values = malloc(((size_t)r->max_code + 1) * sizeof(double));
    if (r->values == NULL)
        return -1;
    for (uint32_t c = 0; c <= r->max_code; c++) {
        uint32_t e = c >> mbits, mant = c & (mcount - 1);
        r->values[c] =
            e == 0 ? ldexp((double)mant, 1 - bias - mbits) : ldexp((double)(mcount + mant), (int)e - bias - mbits);
    }
    int top_exp = (int)(r->max_code >> mbits) - bias;
    r->beyond = r->values[r->max_code] + ldexp(1.0, top_exp - mbits);
    return 0;
}

void ref_format_free(ref_format *r)
{
    free(r->values);
    r->values = NULL;
}

double ref_value(const ref_format *r, uint32_t code)
{
    uint32_t sign = (code >> (r->width - 1)) & 1, mag = code & ((1u << (r->width - 1)) - 1);
    double v;
    if (mag <= r->max_code)
        v = r->values[mag];
    else if (!r->fn && mag == (((1u << r->ebits) - 1) << r->mbits))
        v = INFINITY;
    else
        v = NAN;
    return sign ? -v : v;
}

float ref_decode(const ref_format *r, uint32_t code, int s) { return (float)ldexp(ref_value(r, code), -s); }

/* Largest magnitude code whose value is <= v (v finite, >= 0). */
static uint32_t floor_code(const ref_format *r, double v)
{
    uint32_t lo = 0, hi = r->max_code;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (r->values[mid] <= v)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static double value_or_beyond(const ref_format *r, uint32_t c) { return c <= r->max_code ? r->values[c] : r->beyond; }

/* The signed code of x's special values (inf, NaN), or of a magnitude code with x's sign;
 * magnitudes past max_code become ovf_code. */
static uint32_t with_sign(const ref_format *r, float x, uint32_t mag)
{
    if (isnan(x))
        mag = r->nan_code;
    else if (isinf(x) || mag > r->max_code)
        mag = r->ovf_code;
    return mag | ((uint32_t)(signbit(x) != 0) << (r->width - 1));
}

double ref_round_up_probability(const ref_format *r, float x, int s, uint32_t *lo, uint32_t *hi)
{
    double v = ldexp(fabs((double)x), s);
    if (v >= r->beyond) {
        *lo = *hi = r->max_code + 1;
        return 0.0;
    }
    *lo = floor_code(r, v);
    if (r->values[*lo] == v) {
        *hi = *lo;
        return 0.0;
    }
    *hi = *lo + 1;
    double a = r->values[*lo], b = value_or_beyond(r, *hi);
    return (v - a) / (b - a);
}

uint32_t ref_encode_nearest(const ref_format *r, float x, int s)
{
    if (isnan(x) || isinf(x))
        return with_sign(r, x, 0);
    uint32_t lo, hi;
    double p = ref_round_up_probability(r, x, s, &lo, &hi);
    uint32_t mag = (p > 0.5 || (p == 0.5 && (hi & 1) == 0)) ? hi : lo;
    return with_sign(r, x, mag);
}

uint32_t ref_encode_stochastic(const ref_format *r, float x, int s, uint32_t rnd)
{
    if (isnan(x) || isinf(x))
        return with_sign(r, x, 0);
    uint32_t lo, hi;
    double p = ref_round_up_probability(r, x, s, &lo, &hi);
    uint64_t threshold = (uint64_t)floor(ldexp(p, 32));
    uint32_t mag = (uint64_t)rnd + threshold >= ((uint64_t)1 << 32) ? hi : lo;
    return with_sign(r, x, mag);
}

static uint64_t splitmix_finaliser(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t ref_rng_bits(uint64_t seed, uint64_t call, uint64_t index)
{
    const uint64_t gamma = 0x9E3779B97F4A7C15ull;
    uint64_t key = splitmix_finaliser(seed ^ splitmix_finaliser(call + gamma));
    return (uint32_t)(splitmix_finaliser(key + (index + 1) * gamma) >> 32);
}

size_t ref_pack(const uint32_t *codes, size_t n, int w, size_t group_elems, uint8_t *out)
{
    size_t total = (n + group_elems - 1) / group_elems * group_elems;
    size_t bytes = total * (size_t)w / 8;
    for (size_t b = 0; b < bytes; b++)
        out[b] = 0;
    for (size_t k = 0; k < n; k++)
        for (int bit = 0; bit < w; bit++)
            if ((codes[k] >> bit) & 1) {
                size_t pos = k * (size_t)w + (size_t)bit;
                out[pos / 8] |= (uint8_t)(1u << (pos % 8));
            }
    return bytes;
}

uint32_t ref_unpack_one(const uint8_t *in, size_t k, int w)
{
    uint32_t code = 0;
    for (int bit = 0; bit < w; bit++) {
        size_t pos = k * (size_t)w + (size_t)bit;
        code |= (uint32_t)((in[pos / 8] >> (pos % 8)) & 1) << bit;
    }
    return code;
}
