/* mxconv.h: the OCP MX conversions of one block's E8M0 scale and of one element, for host and CUDA (on fpconv.h). */
#ifndef APSMPI_MXCONV_H
#define APSMPI_MXCONV_H

/* Written once, like fpconv.h, for the host codec (core/codec_mx*.c) and the CUDA kernels
 * (kernels/codec_mx_device.h): every loop over MX blocks gives the bits of these functions.
 * f is the apsmpi_format of an MX format (mx_format.h): it describes the element. */

#include <stdint.h>
#include "core/format.h"
#include "core/fpconv.h"

/* The E8M0 code of a NaN scale: every element of its block decodes to NaN. */
#define APSMPI_MX_SCALE_NAN 255u

/* floor(log2 x) of the non-zero finite float whose bits without the sign are abs_bits. */
APSMPI_HD static inline int apsmpi_floor_log2_bits(uint32_t abs_bits)
{
    uint32_t field = abs_bits >> 23;
    return field ? (int)field - 127 : 31 - apsmpi_clz32(abs_bits) - 149;
}

/* The E8M0 scale byte of a block whose largest magnitude has the float bits amax_bits (sign
 * cleared; inf and NaN order above every finite value): E - 127 = floor(log2 amax) - emax,
 * clamped to -127 below (it cannot pass 127 - emax above); 0 for an all-zero block (as if
 * its maximum were the smallest normal float: the clamp gives the same); NaN (255) for a
 * block holding inf or NaN. emax: the element format's (apsmpi_format.emax). */
APSMPI_HD static inline uint32_t apsmpi_mx_scale_of(uint32_t amax_bits, int emax)
{
    if (amax_bits >= 0x7F800000u)
        return APSMPI_MX_SCALE_NAN;
    if (amax_bits == 0)
        return 0;
    int e = apsmpi_floor_log2_bits(amax_bits) - emax + 127;
    return e < 0 ? 0u : (uint32_t)e;
}

/* The code of the element x (float bits) in a block of scale byte E (not NaN): x / 2^(E-127)
 * converted as apsmpi_encode_one converts (exactly scaled, rounded once, to nearest even or
 * stochastically with the random bits rnd), except that a finite value beyond the largest
 * finite element saturates to it: MX elements never overflow to inf or NaN. */
APSMPI_HD static inline uint32_t apsmpi_mx_encode_one(uint32_t x, uint32_t E, const apsmpi_format *f, int stochastic,
                                                      uint32_t rnd)
{
    uint32_t code = apsmpi_encode_one(x, 127 - (int)E, f, stochastic, rnd);
    uint32_t sign = code & (1u << (f->width - 1)), mag = code ^ sign;
    uint32_t finite = apsmpi_mask((x & 0x7FFFFFFFu) < 0x7F800000u);
    return apsmpi_sel(apsmpi_mask(mag > f->max_code) & finite, f->max_code, mag) | sign;
}

/* The float of element code `code` in a block of scale byte E: value(code) * 2^(E-127)
 * rounded once, as apsmpi_decode_one rounds (a float subnormal below 2^-126); the element's
 * own inf and NaN codes give inf and NaN; every element of a NaN scale gives the quiet NaN
 * 0x7FC00000. */
APSMPI_HD static inline float apsmpi_mx_decode_one(uint32_t code, uint32_t E, const apsmpi_format *f)
{
    return E == APSMPI_MX_SCALE_NAN ? apsmpi_u2f(0x7FC00000u) : apsmpi_decode_one(code, 127 - (int)E, f);
}

/* 2^(E-127) as a float for E < 255: E is the float's exponent field, and E = 0 is the
 * subnormal 2^-127. value(code) times it, in float, rounds as apsmpi_mx_decode_one does: both
 * factors are exact, so the product is the exact value rounded once (subnormals must not be
 * flushed: the codec clears FTZ and DAZ, CUDA builds with -ftz=false). */
APSMPI_HD static inline float apsmpi_mx_scale_value(uint32_t E) { return apsmpi_u2f(E ? E << 23 : 0x00400000u); }

#endif
