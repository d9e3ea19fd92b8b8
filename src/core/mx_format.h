/* mx_format.h: the OCP Microscaling (MX v1.0) formats apsmpi sends, and its 5-bit one in their layout: names, elements, block layout. */
#ifndef APSMPI_MX_FORMAT_H
#define APSMPI_MX_FORMAT_H

#include "core/format.h"

/* An MX format sends blocks of APSMPI_MX_BLOCK (32) consecutive elements that share one
 * scale X = 2^(E - 127), E the block's E8M0 byte (0..254; 255 is NaN), chosen from the block's
 * own values as the specification says: E - 127 = floor(log2 max|v|) - emax, emax the
 * exponent of the element format's largest normal (clamped to -127 below; an all-zero block
 * gets E = 0, a block holding inf or NaN E = 255). Each element is v / X converted to the
 * element format, to nearest (ties to even) or stochastically, saturating at the largest
 * finite value (core/mxconv.h).
 *
 *   name                  element                              bits  block bytes
 *   mxfp8 (mxfp8e4m3)     FP8 E4M3 (OCP E4M3FN: max 448, NaN)     8   33
 *   mxfp8e5m2             FP8 E5M2 (IEEE-like: inf, NaN, 57344)   8   33
 *   mxfp6 (mxfp6e3m2)     FP6 E3M2 (no inf/NaN: max 28)           6   25
 *   mxfp6e2m3             FP6 E2M3 (no inf/NaN: max 7.5)          6   25
 *   mxfp5 (mxfp5e3m1)     FP5 E3M1 (no inf/NaN: max 24)           5   21
 *   mxfp4 (mxfp4e2m1)     FP4 E2M1 (no inf/NaN: 0 0.5 1 1.5 2 3 4 6)  4   17
 *
 * mxfp5 is not one of OCP's: apsmpi's element between FP4 and FP6 (auto's ladder,
 * core/width_controller.h), made as OCP makes FP6 E3M2 with one mantissa bit fewer (bias 3,
 * no inf/NaN, subnormals 0.125 and 0.375, largest 24), in the same block layout: it keeps
 * E3M2's range below the block's largest value (it flushes from 2^-7.x of it, E3M2 from
 * 2^-8.x) in 5.25 bits an element instead of 6.25.
 *
 * Layout on the wire: one packing group per block, the E8M0 byte first, then the 32 codes
 * bit-packed LSB first exactly as the packing groups of the other formats lay codes end to
 * end (core/codec.c): 4 * width bytes. A buffer of n elements is ceil(n / 32) such groups,
 * the tail of the last one zero codes; encoded data carries its own scales, so nothing about
 * them is agreed between ranks. The apsmpi_format of an MX format describes its element
 * (ebits, mbits, bias, emax, kind, codes) and has mx = 1. */

/* The element of an MX format name (lower case), as listed above: its canonical name, exponent
 * and mantissa bits and kind (enum apsmpi_format_kind); 0, or -1 if it is none (format.c
 * makes the apsmpi_format of it). */
int apsmpi_mx_format_lookup(const char *name, const char **canonical, int *ebits, int *mbits, int *kind);

/* The canonical MX names, NULL-terminated (for tests, benchmarks and messages). */
extern const char *const apsmpi_mx_format_names[];

#endif
