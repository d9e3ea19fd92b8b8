/* fpconv.h: per-element float <-> low-precision conversion and the counter-based random bits, for host and CUDA. */
#ifndef APSMPI_FPCONV_H
#define APSMPI_FPCONV_H

/* Written once as plain C for the host and for CUDA device code: no libc calls but ldexpf,
 * no global tables, no branches on the common path (so that gcc vectorises loops over it).
 *
 * Codes: a code of format f is its width-bit pattern, sign bit at bit width-1, then the
 * ebits exponent bits, then the mbits mantissa bits. A magnitude code is the code without
 * the sign bit. The functions here require f->mbits <= 22, which every format that
 * apsmpi_format_parse accepts satisfies (mbits <= 13). */

#include <stdint.h>
#include "core/format.h"

#ifdef __CUDACC__
#define APSMPI_HD __host__ __device__
#else
#define APSMPI_HD
#endif

#ifndef __CUDA_ARCH__
#include <math.h>
#include <string.h>
#endif

APSMPI_HD static inline uint32_t apsmpi_f2u(float x)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

APSMPI_HD static inline float apsmpi_u2f(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* The number of leading zero bits of v (v != 0), on the host and the device. */
APSMPI_HD static inline int apsmpi_clz32(uint32_t v)
{
#ifdef __CUDA_ARCH__
    return __clz((int)v);
#elif defined(__GNUC__)
    return __builtin_clz(v);
#else
    int n = 0;
    while (!(v & 0x80000000u)) {
        v <<= 1;
        n++;
    }
    return n;
#endif
}

/* ---- the APS exponent of a magnitude ----
 * ceil(log2(x)) for the float x whose bits without the sign are abs_bits (a non-zero finite
 * value), INT16_MIN for zero and INT16_MAX for inf or NaN (aps.h names these two markers
 * APSMPI_EXP_ZERO and APSMPI_EXP_NONFINITE). Non-decreasing in abs_bits, so the exponent of
 * the largest magnitude of a block is also the largest exponent of its elements. */
APSMPI_HD static inline int16_t apsmpi_exponent_of_bits(uint32_t abs_bits)
{
    uint32_t field = abs_bits >> 23, mant = abs_bits & 0x7fffffu;

    if (abs_bits == 0)
        return INT16_MIN;
    if (field == 0xff)
        return INT16_MAX;
    if (field == 0) { /* subnormal: value = mant * 2^-149, mant != 0 */
        int floor_log2 = 31 - apsmpi_clz32(mant) - 149;
        return (int16_t)(floor_log2 + ((mant & (mant - 1)) != 0));
    }
    return (int16_t)((int)field - 127 + (mant != 0));
}

/* ---- counter-based random bits ----
 * The 32 random bits of element `index` of call `call` under `seed` are
 *     key  = mix64(seed ^ mix64(call + 0x9E3779B97F4A7C15))          (once per call)
 *     bits = (uint32_t)(mix64(key + (index + 1) * 0x9E3779B97F4A7C15) >> 32)
 * where mix64 is the splitmix64 finaliser (Stafford's "Mix13"):
 *     z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31.
 * So the bits of one call are the high halves of the splitmix64 stream seeded with key,
 * and the element's stream position is its index in the whole buffer. All arithmetic is
 * modulo 2^64, identical on CPU and GPU. */
#define APSMPI_RNG_GAMMA 0x9E3779B97F4A7C15ull

/* mix64's steps on z in place: a uint64_t, or a vector of 64-bit lanes (simd_lanes.h) */
#define APSMPI_MIX64_STEPS(z) \
    ((z) ^= (z) >> 30, (z) *= 0xBF58476D1CE4E5B9ull, (z) ^= (z) >> 27, (z) *= 0x94D049BB133111EBull, (z) ^= (z) >> 31)

APSMPI_HD static inline uint64_t apsmpi_mix64(uint64_t z)
{
    APSMPI_MIX64_STEPS(z);
    return z;
}

APSMPI_HD static inline uint64_t apsmpi_rng_key(uint64_t seed, uint64_t call)
{
    return apsmpi_mix64(seed ^ apsmpi_mix64(call + APSMPI_RNG_GAMMA));
}

APSMPI_HD static inline uint32_t apsmpi_rng_bits(uint64_t key, uint64_t index)
{
    return (uint32_t)(apsmpi_mix64(key + (index + 1) * APSMPI_RNG_GAMMA) >> 32);
}

/* mask ? a : b for a mask of all ones or all zeros: a select that compilers do not turn
 * back into a branch (which would stop the vectorisation of the loops around it). */
APSMPI_HD static inline uint32_t apsmpi_sel(uint32_t mask, uint32_t a, uint32_t b) { return (a & mask) | (b & ~mask); }

/* All ones if cond, else zero. */
APSMPI_HD static inline uint32_t apsmpi_mask(int cond) { return 0u - (uint32_t)(cond != 0); }

/* ---- encode ----
 * The code of value(x) * 2^s in format f, s applied exactly by exponent arithmetic.
 * Rounding: to nearest, ties to even (stochastic == 0), or stochastic (stochastic != 0):
 * rounds up with probability (v - a) / (b - a), to 32-bit resolution, using rnd.
 * Method: |x| = m * 2^(E-23) with m the normalised 24-bit significand; e = E + s; the target
 * quantum is 2^(q) with q = max(e, emin) - mbits; n = round(m / 2^sh), sh = q - e + 23; the
 * magnitude code is (max(e - emin, 0) << mbits) + n (a carry from n moves into the exponent
 * field by itself). A magnitude code above max_code becomes ovf_code (inf, or NaN for FN) as
 * after a cast; inf becomes ovf_code, NaN nan_code, zero zero; the sign is always kept. */
APSMPI_HD static inline uint32_t apsmpi_encode_one(uint32_t x, int s, const apsmpi_format *f, int stochastic,
                                                   uint32_t rnd)
{
    uint32_t sign = x >> 31;
    uint32_t ax = x & 0x7FFFFFFFu;
    uint32_t bexp = ax >> 23;
    uint32_t frac = ax & 0x7FFFFFu;
    /* a float subnormal is normalised through the exact conversion of its integer mantissa */
    uint32_t nb = apsmpi_f2u((float)(int32_t)frac);
    uint32_t sub = apsmpi_mask(bexp == 0);
    int32_t E = (int32_t)apsmpi_sel(sub, (nb >> 23) - 127u - 149u, bexp - 127u);
    uint32_t m = (apsmpi_sel(sub, nb, ax) & 0x7FFFFFu) | 0x800000u;
    /* beyond +-300 every format overflows or rounds to zero: the clamp changes nothing */
    int32_t e = E + s;
    e = e < -300 ? -300 : e;
    e = e > 300 ? 300 : e;
    int32_t d = f->emin - e; /* > 0: in the format's subnormal range */
    int32_t dz = d > 0 ? d : 0;
    int32_t sh = dz + 23 - f->mbits;                /* >= 1 */
    uint32_t base = (uint32_t)(dz - d) << f->mbits; /* dz - d = max(e - emin, 0) */
    uint32_t n;
    if (stochastic) {
        /* n = floor(m / 2^sh + rnd / 2^32): carry out of (fraction as 32 bits) + rnd */
        uint32_t n0 = m >> (sh < 31 ? sh : 31);
        uint32_t fhi = m << (sh < 32 ? 32 - sh : 0);
        uint32_t flo = m >> (sh - 32 < 31 ? (sh > 32 ? sh - 32 : 0) : 31);
        uint32_t fr = apsmpi_sel(apsmpi_mask(sh <= 32), fhi, flo);
        n = n0 + (uint32_t)(fr + rnd < fr);
    } else {
        /* n = m / 2^sh rounded to nearest, ties to the even code (with mbits == 0 the
         * code's parity is not n's); sh >= 25 always gives 0 as m < 2^24 */
        int32_t shc = sh < 25 ? sh : 25;
        uint32_t odd = (base + (m >> shc)) & 1u;
        n = (m + ((1u << (shc - 1)) - 1u) + odd) >> shc;
    }
    uint32_t code = base + n;
    code = apsmpi_sel(apsmpi_mask(code > f->max_code), f->ovf_code, code);
    uint32_t special = apsmpi_sel(apsmpi_mask(frac != 0), f->nan_code, f->ovf_code);
    code = apsmpi_sel(apsmpi_mask(bexp == 255), special, code);
    code &= apsmpi_mask(ax != 0);
    return code | (sign << (f->width - 1));
}

/* ---- decode ----
 * The float nearest to value(code) / 2^s (one rounding, ties to even; exact unless the
 * result is a float subnormal or beyond the float range). inf and NaN codes give inf and
 * the float quiet NaN with the code's sign; the FN NaN code gives NaN. Branch-free except
 * for results outside the float normal range (the only use of ldexpf). */
APSMPI_HD static inline float apsmpi_decode_one(uint32_t code, int s, const apsmpi_format *f)
{
    uint32_t sign = (code >> (f->width - 1)) & 1u;
    uint32_t c = code & ((1u << (f->width - 1)) - 1u);
    uint32_t mmask = (1u << f->mbits) - 1u;
    uint32_t ef = c >> f->mbits;
    uint32_t sig = ef ? (c & mmask) | (mmask + 1u) : c & mmask;
    /* value = sig * 2^k with sig < 2^24 exactly representable */
    int32_t k = (ef ? (int32_t)ef - f->bias : f->emin) - f->mbits - s;
    float fs = (float)sig;
    uint32_t fb = apsmpi_f2u(fs);
    int32_t rexp = (int32_t)(fb >> 23) + k;
    uint32_t bits;
    if (sig == 0 || (rexp >= 1 && rexp <= 254))
        bits = sig == 0 ? 0u : fb + ((uint32_t)k << 23);
    else if (rexp > 254)
        bits = 0x7F800000u;
    else
        bits = apsmpi_f2u(ldexpf(fs, k < -400 ? -400 : k));
    bits = c > f->max_code ? (c == f->ovf_code && f->kind == APSMPI_KIND_IEEE ? 0x7F800000u : 0x7FC00000u) : bits;
    return apsmpi_u2f(bits | (sign << 31));
}

#endif
