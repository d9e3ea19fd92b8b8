/* aps.h: Auto-Precision Scaling: per-block exponents of the largest magnitude, and the scales they give. */
#ifndef APSMPI_APS_H
#define APSMPI_APS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "core/format.h"

/* Exponents are int16: ceil(log2(max|x|)) for a block with a non-zero finite maximum, or one
 * of these two markers. Both order correctly under MAX: any non-finite value anywhere wins,
 * and an all-zero block loses to every real exponent. */
#define APSMPI_EXP_ZERO INT16_MIN
#define APSMPI_EXP_NONFINITE INT16_MAX

/* The exponent for a magnitude given by its float bits without the sign. */
int16_t apsmpi_exponent_of(uint32_t abs_bits);

/* exps[b] = exponent of max|x[i]| over block b = [b*block_len, (b+1)*block_len) of x[0..n). */
void apsmpi_block_exponents(const float *x, size_t n, size_t block_len, int16_t *exps);

/* Number of blocks of block_len elements that cover n elements. */
static inline size_t apsmpi_block_count(size_t n, size_t block_len) { return (n + block_len - 1) / block_len; }

/* The count of the agreement's one MPI reduction over nblocks exponents and two flags, or -1
 * when it does not fit an MPI count (an int): such a call cannot be agreed on in one
 * reduction and is sent in FP32, which every rank decides alike from the same arguments. */
static inline int apsmpi_agreement_count(size_t nblocks)
{
    return nblocks <= (size_t)INT_MAX - 2 ? (int)nblocks + 2 : -1;
}

/* ceil(log2(nranks)): the headroom, in binary orders of magnitude, that a sum over nranks needs. */
int apsmpi_rank_headroom(int nranks);

/* The largest agreed exponent that leaves nranks addends below FLT_MAX: 127 - ceil(log2 nranks).
 * A block whose exponent e is at most this has values of at most 2^e on every rank, so that
 * no decoded contribution (at most 2^e, whatever the rounding), no FP32 sum of nranks of them,
 * no partial sum in the wire format (the ring's headroom) and no decoded result can pass
 * 2^127: nothing overflows that plain MPI's sum would not. */
int apsmpi_max_safe_exponent(int nranks);

/* Why the ranks send a call in FP32 instead of compressing it, decided alike on every rank
 * from the agreed exponents of its n blocks. */
enum apsmpi_fp32_reason {
    APSMPI_FP32_NO = 0,        /* compress it */
    APSMPI_FP32_NONFINITE = 1, /* an inf or NaN on some rank: plain MPI's inf/NaN */
    /* a block above apsmpi_max_safe_exponent: its FP32 sum may overflow, and whether plain MPI's
     * does depends on the exact values, which rounded contributions cannot tell (one rounded
     * up could overflow where the exact sum does not, one rounded down miss an inf); sent as
     * it is, the job gets plain MPI's inf where plain MPI overflows and its sum elsewhere */
    APSMPI_FP32_NEAR_FLT_MAX = 2
};
enum apsmpi_fp32_reason apsmpi_fp32_reason(const int16_t *exps, size_t n, int nranks);

/* Replaces each agreed exponent by the power-of-two scale that maps it to the format's
 * largest exponent with room for nranks addends: s = emax - e - ceil(log2 nranks), so that
 * every partial sum, and its rounding, stays at or below 2^emax (no overflow), and nothing
 * underflows that a larger safe scale would keep. An all-zero block gets scale 0. */
void apsmpi_exponents_to_scales(int16_t *exps, size_t n, const apsmpi_format *f, int nranks);

#endif
