/* codec_loops.h: the codec's inner loops per instruction-set level, and the codec object they work on (internal to codec*.c). */
#ifndef APSMPI_CODEC_LOOPS_H
#define APSMPI_CODEC_LOOPS_H

#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/format.h"

/* The loops of one level. Before bit packing, codes are held unpacked: those of at most 8 bits one per byte, wider
 * ones one per uint16_t. Every loop of every level gives the bits of apsmpi_encode_one /
 * apsmpi_decode_one of fpconv.h applied element by element (the portable level, codec_portable.c,
 * calls them where its vectorisable loops do not apply). */
typedef struct codec_loops {
    const char *name;
    /* n floats with one scale s into codes; with count, returns how many non-zero inputs gave
     * a zero magnitude code (the statistics' flushed values); without, the result means
     * nothing (the vector levels skip the counting, the portable one counts anyway). key, idx:
     * the random stream (stochastic) and the buffer index of in[0]. */
    uint64_t (*encode8)(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key,
                        uint64_t idx, uint8_t *out, int count);
    uint64_t (*encode16)(const apsmpi_codec *c, const float *in, size_t n, int s, int stochastic, uint64_t key,
                         uint64_t idx, uint16_t *out, int count);
    /* n codes with one scale s into floats */
    void (*decode8)(const apsmpi_codec *c, const uint8_t *in, size_t n, int s, float *out);
    void (*decode16)(const apsmpi_codec *c, const uint16_t *in, size_t n, int s, float *out);
    /* io[k] = encode_nearest(decode(a[k]) + decode(io[k])) */
    void (*sum8)(const apsmpi_codec *c, const uint8_t *a, uint8_t *io, size_t n);
    void (*sum16)(const apsmpi_codec *c, const uint16_t *a, uint16_t *io, size_t n);
    /* Bit packing of n unpacked codes of width w (3..15 but 8; n a multiple of 8) from or to
     * n * w / 8 bytes; each returns how many codes it did from the start, a multiple of 8,
     * the rest being left to the caller. NULL: none. */
    size_t (*pack)(const void *codes, size_t n, uint8_t *out, int w);
    size_t (*unpack)(const uint8_t *in, size_t n, void *codes, int w);
    /* The packed sum of n bit-packed codes (a multiple of 8) from the start, in place;
     * returns how many it did (a multiple of 8). NULL: none. */
    size_t (*sum_packed)(const apsmpi_codec *c, const uint8_t *a, uint8_t *io, size_t n);
} codec_loops;

struct apsmpi_codec {
    apsmpi_format f;
    const codec_loops *loops;         /* the loops of its instruction-set level */
    float *dec;                       /* 2^width entries: the float of every code, unscaled */
    uint8_t *sum;                     /* width <= 8: 2^(2 width) entries, sum[(a << width) | b] = a (+) b */
    const struct apsmpi_mx_loops *mx; /* an MX format's loops (codec_mx.h), else NULL */
};

extern const codec_loops apsmpi_codec_loops_scalar;
#ifdef APSMPI_CODEC_X86
extern const codec_loops apsmpi_codec_loops_avx2;
extern const codec_loops apsmpi_codec_loops_avx512;
#endif

#endif
