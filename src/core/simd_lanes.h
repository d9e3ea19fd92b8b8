/* simd_lanes.h: what the x86 vector levels' loops share (codec_simd.c, codec_mx_simd.c): gcc vector types of VB bytes and the vector form of fpconv.h's random stream. */
#ifndef APSMPI_SIMD_LANES_H
#define APSMPI_SIMD_LANES_H

#include <stdint.h>
#include "core/fpconv.h"

/* VB, the vector's bytes: 32 (avx2) or 64 (avx512), defined by the including file. */
#if !defined(VB) || (VB != 32 && VB != 64)
#error "simd_lanes.h needs VB defined as 32 or 64"
#endif

enum { NL = VB / 4 }; /* 32-bit lanes per vector */

typedef uint32_t vu __attribute__((vector_size(VB)));
typedef int32_t vi __attribute__((vector_size(VB)));
typedef float vf __attribute__((vector_size(VB)));
typedef uint64_t vq __attribute__((vector_size(VB)));

#define INLINE static inline __attribute__((always_inline))

INLINE vu splat(uint32_t x) { return (vu){0} + x; }

/* the high halves of 2 x NL/2 64-bit lanes, in lane order */
#if VB == 64
#define HIGH_HALVES 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#else
#define HIGH_HALVES 1, 3, 5, 7, 9, 11, 13, 15
#endif

/* The random bits of NL consecutive elements (fpconv.h's stream): the high halves of
 * splitmix64 of key + (index + 1) * gamma, two vectors of 64-bit counters advanced by NL. */
typedef struct rng_lanes {
    vq c0, c1, step;
} rng_lanes;

INLINE rng_lanes rng_start(uint64_t key, uint64_t idx)
{
    rng_lanes r;
    for (int i = 0; i < NL / 2; i++) {
        r.c0[i] = key + (idx + 1 + (uint64_t)i) * APSMPI_RNG_GAMMA;
        r.c1[i] = key + (idx + 1 + (uint64_t)(i + NL / 2)) * APSMPI_RNG_GAMMA;
    }
    r.step = (vq){0} + (uint64_t)NL * APSMPI_RNG_GAMMA;
    return r;
}

INLINE vq mix64_vec(vq z)
{
    APSMPI_MIX64_STEPS(z);
    return z;
}

INLINE vu rng_next(rng_lanes *r)
{
    vu lo = (vu)mix64_vec(r->c0), hi = (vu)mix64_vec(r->c1);
    r->c0 += r->step;
    r->c1 += r->step;
    return __builtin_shufflevector(lo, hi, HIGH_HALVES);
}

#endif
