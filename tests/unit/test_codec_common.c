/* test_codec_common.c: the codec tests' shared random numbers, inputs and codes, and float bits. */
#include <math.h>
#include <string.h>
#include "test_codec_common.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

uint64_t rand64(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

int rand_int(int lo, int hi) { return lo + (int)(rand64() % (uint64_t)(hi - lo + 1)); }

uint32_t f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

float u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

float random_input_for(const apsmpi_format *f, int s)
{
    if (rand64() % 4 == 0)
        return u2f((uint32_t)rand64());
    int e = rand_int(f->emin - f->mbits - 3, f->emax + 2); /* exponent of x * 2^s */
    float m = (float)(((uint32_t)rand64() & 0x7FFFFFu) | 0x800000u) * 0x1p-23f;
    float x = ldexpf(m, e - s);
    return rand64() & 1 ? -x : x;
}

uint32_t random_code(const apsmpi_format *f, const ref_format *r)
{
    uint32_t sign = (uint32_t)(rand64() & 1) << (f->width - 1);
    if (rand64() % 10 == 0) {
        uint32_t sp[] = {0, r->max_code, r->ovf_code, r->nan_code, 1};
        return sign | sp[rand64() % 5];
    }
    return (uint32_t)rand64() & ((1u << f->width) - 1);
}
