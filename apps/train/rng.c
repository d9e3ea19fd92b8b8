/* rng.c: splitmix64, a small counter-based generator; identical on every rank and every run for one seed. */
#include "rng.h"

#include <math.h>

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_init(struct rng *r, uint64_t seed, uint64_t stream)
{
    r->state = mix(seed ^ mix(stream + 0x9e3779b97f4a7c15ULL));
}

static uint64_t rng_next(struct rng *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    return mix(r->state);
}

float rng_uniform(struct rng *r, float lo, float hi)
{
    float u = (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

float rng_normal(struct rng *r)
{
    /* 1 - u is in (0, 1]: the logarithm stays finite */
    float u = 1.0f - rng_uniform(r, 0.0f, 1.0f), v = rng_uniform(r, 0.0f, 1.0f);
    return sqrtf(-2.0f * logf(u)) * cosf(6.2831853071795865f * v);
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
    /* Lemire's multiply-shift with rejection of the few biased low products */
    uint64_t m = (rng_next(r) >> 32) * (uint64_t)n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)-n % n;
        while (low < threshold) {
            m = (rng_next(r) >> 32) * (uint64_t)n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

void rng_shuffle(struct rng *r, uint32_t *idx, uint32_t n)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = rng_below(r, i);
        uint32_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}
