/* simd_bytes.h: 32 codes of at most 8 bits as the 32 bytes of a 256-bit register: narrowed from and widened to 32-bit lanes, bit-packed to and from 4 * w bytes (codec_simd.c, codec_mx_simd.c). */
#ifndef APSMPI_SIMD_BYTES_H
#define APSMPI_SIMD_BYTES_H

/* Included after simd_lanes.h and <immintrin.h>, by a file compiled for one level (VB). 32
 * codes are 32 / NL vectors of 32-bit lanes; the bytes are in code order, LSB first when
 * packed (the order of every bit-packed format, format.h). */
#include <stdint.h>
#include <string.h>
#include "core/simd_lanes.h"

/* 32 / NL vectors of codes (each below 2^w) into their 32 bytes, in order. */
INLINE __m256i narrow(const vu *code)
{
#if VB == 64
    return _mm256_set_m128i(_mm512_cvtepi32_epi8((__m512i)code[1]), _mm512_cvtepi32_epi8((__m512i)code[0]));
#else
    /* packs work within 128-bit halves: a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7, put in order */
    __m256i ab = _mm256_packus_epi32((__m256i)code[0], (__m256i)code[1]);
    __m256i cd = _mm256_packus_epi32((__m256i)code[2], (__m256i)code[3]);
    __m256i bytes = _mm256_packus_epi16(ab, cd);
    return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
#endif
}

/* The 32 code bytes into 32 / NL vectors of 32-bit lanes. */
INLINE void widen(__m256i b, vu *code)
{
    __m128i lo = _mm256_castsi256_si128(b), hi = _mm256_extracti128_si256(b, 1);
#if VB == 64
    code[0] = (vu)_mm512_cvtepu8_epi32(lo);
    code[1] = (vu)_mm512_cvtepu8_epi32(hi);
#else
    code[0] = (vu)_mm256_cvtepu8_epi32(lo);
    code[1] = (vu)_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8));
    code[2] = (vu)_mm256_cvtepu8_epi32(hi);
    code[3] = (vu)_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8));
#endif
}

/* The 32 code bytes (each below 2^w) bit-packed LSB first into exactly the 4 * w bytes at
 * out (the bytes after them may not be written yet). */
INLINE void pack_bytes(__m256i b, int w, uint8_t *out)
{
    if (w == 8) {
        _mm256_storeu_si256((__m256i *)out, b);
    } else if (w == 4) {
        /* byte 2k + 16 * byte 2k+1 in each 16-bit lane (an unsigned-by-signed multiply-add) */
        __m256i h = _mm256_maddubs_epi16(b, _mm256_set1_epi16(0x1001));
        _mm_storeu_si128((__m128i *)out, _mm_packus_epi16(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
    } else if (w == 5) { /* 8 codes into the low 5 bytes of each 64-bit lane, then those 20 bytes */
        /* c0 + 32 * c1 in each 16-bit lane, that pair + 1024 * the next in each 32-bit lane (4
         * codes, 20 bits), the high one of each 64-bit lane moved down to bit 20 (8 codes) */
        __m256i d =
            _mm256_madd_epi16(_mm256_maddubs_epi16(b, _mm256_set1_epi16(0x2001)), _mm256_set1_epi32(0x04000001));
        __m256i q = _mm256_or_si256(_mm256_and_si256(d, _mm256_set1_epi64x(0xFFFFF)),
                                    _mm256_slli_epi64(_mm256_srli_epi64(d, 32), 20));
        __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
        __m128i first =
            _mm_or_si128(_mm_shuffle_epi8(lo, _mm_setr_epi8(0, 1, 2, 3, 4, 8, 9, 10, 11, 12, -1, -1, -1, -1, -1, -1)),
                         _mm_shuffle_epi8(hi, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2, 3, 4, 8)));
        uint32_t last = (uint32_t)((uint64_t)_mm_extract_epi64(hi, 1) >> 8); /* the last 8 codes' bytes 1-4 */
        _mm_storeu_si128((__m128i *)out, first);
        memcpy(out + 16, &last, 4);
    } else { /* w == 6: 4 codes into the low 3 bytes of each 32-bit lane, then those 24 bytes */
        /* c0 + 64 * c1 in each 16-bit lane, then that pair + 4096 * the next in each 32-bit
         * lane: c0 | c1 << 6 | c2 << 12 | c3 << 18 (below 2^24, nothing saturates) */
        __m256i x =
            _mm256_madd_epi16(_mm256_maddubs_epi16(b, _mm256_set1_epi16(0x4001)), _mm256_set1_epi32(0x10000001));
        __m256i three = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9,
                                         10, 12, 13, 14, -1, -1, -1, -1);
        __m256i y =
            _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(x, three), _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
        _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(y));
        _mm_storel_epi64((__m128i *)(out + 16), _mm256_extracti128_si256(y, 1));
    }
}

/* The 32 codes of width w (8, 6 or 4) from exactly the 4 * w bytes at in, one byte each. */
INLINE __m256i unpack_bytes(const uint8_t *in, int w)
{
    if (w == 8)
        return _mm256_loadu_si256((const __m256i *)in);
    if (w == 4) {
        __m128i p = _mm_loadu_si128((const __m128i *)in), m = _mm_set1_epi8(0x0F);
        __m128i lo = _mm_and_si128(p, m), hi = _mm_and_si128(_mm_srli_epi16(p, 4), m);
        return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
    }
    /* w == 6: 3 bytes hold 4 codes; bytes 0-11 to the low half, 12-23 to the high one, each
     * 3 bytes spread over a 32-bit lane and its 4 codes moved one into each byte */
    __m256i p = _mm256_set_m128i(_mm_loadl_epi64((const __m128i *)(in + 16)), _mm_loadu_si128((const __m128i *)in));
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 1, 2, 7, 3, 4, 5, 7));
    __m256i four = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, 0, 1, 2, -1, 3, 4, 5, -1, 6,
                                    7, 8, -1, 9, 10, 11, -1);
    __m256i t = _mm256_shuffle_epi8(p, four), m = _mm256_set1_epi32(0x3F);
    return _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(t, m), _mm256_and_si256(_mm256_slli_epi32(t, 2), _mm256_slli_epi32(m, 8))),
        _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi32(t, 4), _mm256_slli_epi32(m, 16)),
                        _mm256_and_si256(_mm256_slli_epi32(t, 6), _mm256_slli_epi32(m, 24))));
}

#endif
