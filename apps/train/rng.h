/* rng.h: the seeded random generator behind weight initialization and data shuffling (same seed, same numbers). */
#ifndef TRAIN_RNG_H
#define TRAIN_RNG_H

#include <stdint.h>

struct rng {
    uint64_t state;
};

/* A generator for one purpose (stream) of one run (seed): weight init and the shuffle of
 * each epoch draw from streams of their own, so changing one never moves the other. */
void rng_init(struct rng *r, uint64_t seed, uint64_t stream);
/* Uniform in [lo, hi), from the top 24 bits of one draw. */
float rng_uniform(struct rng *r, float lo, float hi);
/* Standard normal (Box-Muller over two uniform draws). */
float rng_normal(struct rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint32_t rng_below(struct rng *r, uint32_t n);
/* Fisher-Yates shuffle of idx[0..n). */
void rng_shuffle(struct rng *r, uint32_t *idx, uint32_t n);

#endif
