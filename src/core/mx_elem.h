/* mx_elem.h: the constants of an MX element format's conversions, shared by the MX loops of every level (codec_mx_simd.c, codec_mx_portable.c). */
#ifndef APSMPI_MX_ELEM_H
#define APSMPI_MX_ELEM_H

#include <stdint.h>
#include "core/format.h"

/* An element format of width W, M mantissa bits and kind (enum apsmpi_format_kind), as the
 * loops convert it: a magnitude y = |x| / X (a float) encodes as its bits rounded at sh bits
 * minus k2 when y >= 2^emin (thr), else as the bits of y + magic minus magic's; a code c
 * decodes as the float of c << sh plus rebias (for a subnormal code: with the exponent
 * field taken as 1, then 2^emin taken off). */
typedef struct apsmpi_mx_elem {
    int w1;               /* W - 1: the sign bit's position */
    int mbits, sh;        /* M; 23 - M */
    int emax, emin;       /* unbiased exponents of the largest finite value and smallest normal */
    int specials;         /* the format has inf or NaN codes (E4M3, E5M2) */
    uint32_t max_code;    /* the largest finite magnitude code: saturation */
    uint32_t half;        /* 2^(sh - 1) - 1: rounding to nearest even at sh bits */
    uint32_t k2;          /* (126 + emin) << M: float exponent field to the code's */
    uint32_t thr;         /* float bits of 2^emin */
    uint32_t magic;       /* float bits of 2^(emin - M + 23): y + magic rounds y to the quantum */
    uint32_t special_ovf; /* what the code above max_code decodes to: inf (IEEE) or NaN */
    uint32_t ovf_code;    /* that code (the others above max_code are NaN) */
    uint32_t rebias;      /* (127 - bias) << 23 */
    uint32_t signbit;     /* 1 << (W - 1) */
    uint32_t magmask;     /* signbit - 1 */
} apsmpi_mx_elem;

/* Inlined where W, M and kind are constants, so that every field is one. */
static inline __attribute__((always_inline)) apsmpi_mx_elem apsmpi_mx_elem_of(int W, int M, int kind)
{
    apsmpi_mx_elem k;
    int ebits = W - 1 - M, bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, top = (1 << ebits) - 1;
    uint32_t max_code = kind == APSMPI_KIND_FINITE ? (1u << (W - 1)) - 1u
                        : kind == APSMPI_KIND_FN   ? (1u << (W - 1)) - 2u
                                                   : ((uint32_t)top << M) - 1u;
    k.w1 = W - 1;
    k.mbits = M;
    k.sh = 23 - M;
    k.emin = emin;
    k.emax = kind == APSMPI_KIND_IEEE ? top - 1 - bias : top - bias;
    k.specials = kind != APSMPI_KIND_FINITE;
    k.max_code = max_code;
    k.half = (1u << (k.sh - 1)) - 1u;
    k.k2 = (uint32_t)(126 + emin) << M;
    k.thr = (uint32_t)(emin + 127) << 23;
    k.magic = (uint32_t)(emin - M + 23 + 127) << 23;
    k.special_ovf = kind == APSMPI_KIND_IEEE ? 0x7F800000u : 0x7FC00000u;
    k.ovf_code = kind == APSMPI_KIND_IEEE ? (uint32_t)top << M : max_code + 1u;
    k.rebias = (uint32_t)(127 - bias) << 23;
    k.signbit = 1u << (W - 1);
    k.magmask = (1u << (W - 1)) - 1u;
    return k;
}

#endif
