/* format.h: the low-precision floating-point formats apsmpi can send, described by their bit layout. */
#ifndef APSMPI_FORMAT_H
#define APSMPI_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* How the top exponent code is used. */
enum apsmpi_format_kind {
    APSMPI_KIND_IEEE = 0,  /* IEEE-like: top exponent holds inf (mantissa 0) and NaN */
    APSMPI_KIND_FN = 1,    /* OCP "FN" (E4M3FN): no inf, only the all-ones code is NaN */
    APSMPI_KIND_FINITE = 2 /* no inf or NaN code: every code is finite (OCP FP6, FP4) */
};

/* Elements of an OCP MX block: they share one E8M0 scale (core/mx_format.h). */
#define APSMPI_MX_BLOCK 32

/* A format: 1 sign bit, ebits exponent bits, mbits mantissa bits, subnormals. */
typedef struct apsmpi_format {
    char name[16];     /* canonical name as the user spells it: "e4m3", "fp16", "e3m2" */
    int ebits;         /* 2..8 */
    int mbits;         /* 0..23 */
    int width;         /* 1 + ebits + mbits: bits per element on the wire (3..32) */
    int bias;          /* 2^(ebits-1) - 1 */
    int emin;          /* unbiased exponent of the smallest normal: 1 - bias */
    int emax;          /* unbiased exponent of the largest finite value */
    int kind;          /* enum apsmpi_format_kind */
    uint32_t max_code; /* magnitude code (no sign bit) of the largest finite value */
    uint32_t ovf_code; /* magnitude code a too-large value becomes: inf, NaN for FN, max_code for FINITE */
    uint32_t nan_code; /* magnitude code of the canonical (quiet) NaN; max_code for FINITE */
    float max_finite;  /* the largest finite value as a float */
    int mx;            /* 1: an OCP MX format (mx_format.h): these are its elements, and each packing group
                        * is one block, its E8M0 scale byte followed by APSMPI_MX_BLOCK bit-packed codes */
    int ladder;        /* 1: APSMPI_FORMAT=auto (core/width_controller.h): the fields are those of its ladder's
                        * widest rung (mxfp8 by default), which sizes every call's plan; each call goes on
                        * the rung agreed */
} apsmpi_format;

/* Fills *out from a name: fp16, bf16, e5m2, e4m3 (OCP E4M3FN), e4m3ieee, eXmY with
 * 2<=X<=8, 0<=Y<=13, X+Y<=15, or an MX format (mx_format.h). Returns 0, or -1 if the name
 * is not a format. "fp32" is not a format here: it means "no compression" and is handled by
 * the configuration. */
int apsmpi_format_parse(const char *name, apsmpi_format *out);

/* Elements in one packing group: the smallest count whose bits fill whole bytes; an MX block. */
static inline size_t apsmpi_group_elems(const apsmpi_format *f)
{
    if (f->mx)
        return APSMPI_MX_BLOCK;
    size_t g = 8;
    while (g > 1 && ((g / 2) * (size_t)f->width) % 8 == 0)
        g /= 2;
    return g;
}

/* Bytes of one packing group (with an MX block's scale byte). */
static inline size_t apsmpi_group_bytes(const apsmpi_format *f)
{
    return (f->mx ? 1 : 0) + apsmpi_group_elems(f) * (size_t)f->width / 8;
}

/* Number of packing groups that hold n elements (the last one padded with zero codes). */
static inline size_t apsmpi_groups_for(const apsmpi_format *f, size_t n)
{
    size_t g = apsmpi_group_elems(f);
    return (n + g - 1) / g;
}

#endif
