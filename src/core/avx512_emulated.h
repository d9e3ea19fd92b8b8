/* avx512_emulated.h: the AVX-512 intrinsics of the codec's avx512 level emulated on AVX2 (SIMDe, and here what SIMDe lacks), for make check-avx512-emulated. */
#ifndef APSMPI_AVX512_EMULATED_H
#define APSMPI_AVX512_EMULATED_H

/* Included by codec_simd.c and codec_mx_simd.c, and only when they are compiled with
 * -DAPSMPI_EMULATE_AVX512 and -mavx2 -mf16c -mfma instead of -mavx512f (scripts/ci/check_avx512_emulated.sh):
 * the avx512 level (VB 64) then runs, bit for bit, on a CPU without AVX-512, so its tests run
 * where the CI has none. SIMDe (Debian's libsimde-dev, header-only) gives the _mm512_* names,
 * __m512i, __m512 and __mmask16 as its own functions and types (its native aliases are macros,
 * so gcc's AVX-512 functions in <immintrin.h> are not called; a name that neither SIMDe nor this
 * file defines stops the build: "inlining failed ... target specific option mismatch").
 * SIMDe 0.7.4 lacks the eight below: written here from Intel's definitions, lane by lane, or
 * as two of the 256-bit instruction that does the same to each lane (F16C's conversions). */
#if defined(__AVX512F__)
#error "avx512_emulated.h is for builds without -mavx512f"
#endif
#include <stdint.h>
#include <string.h>
#include <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#define APSMPI_EMU_INLINE static inline __attribute__((always_inline))

/* a 512-bit register's 16 32-bit lanes, and back */
typedef struct apsmpi_emu_lanes {
    int32_t i[16];
} apsmpi_emu_lanes;

APSMPI_EMU_INLINE apsmpi_emu_lanes apsmpi_emu_lanes_of(__m512i a)
{
    apsmpi_emu_lanes l;
    memcpy(l.i, &a, sizeof l.i);
    return l;
}

APSMPI_EMU_INLINE __m512i apsmpi_emu_from_lanes(const uint32_t u[16])
{
    __m512i r;
    memcpy(&r, u, sizeof r);
    return r;
}

/* k[i] = TEST, of a's and b's lanes x.i[i] and y.i[i] */
#define APSMPI_EMU_MASK(NAME, TEST)                                              \
    APSMPI_EMU_INLINE __mmask16 apsmpi_emu_##NAME(__m512i a, __m512i b)          \
    {                                                                            \
        apsmpi_emu_lanes x = apsmpi_emu_lanes_of(a), y = apsmpi_emu_lanes_of(b); \
        unsigned k = 0;                                                          \
        for (int i = 0; i < 16; i++)                                             \
            k |= (unsigned)(TEST) << i;                                          \
        return (__mmask16)k;                                                     \
    }

/* 16 values of type T (in a VT) zero-extended to 16 32-bit lanes */
#define APSMPI_EMU_WIDEN(NAME, T, VT)                 \
    APSMPI_EMU_INLINE __m512i apsmpi_emu_##NAME(VT a) \
    {                                                 \
        T v[16];                                      \
        uint32_t u[16];                               \
        memcpy(v, &a, sizeof v);                      \
        for (int i = 0; i < 16; i++)                  \
            u[i] = v[i];                              \
        return apsmpi_emu_from_lanes(u);              \
    }

/* 16 32-bit lanes truncated to 16 values of type T (in a VT) */
#define APSMPI_EMU_NARROW(NAME, T, VT)                \
    APSMPI_EMU_INLINE VT apsmpi_emu_##NAME(__m512i a) \
    {                                                 \
        apsmpi_emu_lanes x = apsmpi_emu_lanes_of(a);  \
        T v[16];                                      \
        VT r;                                         \
        for (int i = 0; i < 16; i++)                  \
            v[i] = (T)x.i[i];                         \
        memcpy(&r, v, sizeof r);                      \
        return r;                                     \
    }

#ifndef _mm512_cmplt_epi32_mask /* a[i] < b[i], signed */
APSMPI_EMU_MASK(cmplt_epi32_mask, x.i[i] < y.i[i])
#define _mm512_cmplt_epi32_mask(a, b) apsmpi_emu_cmplt_epi32_mask(a, b)
#endif

#ifndef _mm512_testn_epi32_mask /* (a[i] & b[i]) == 0 */
APSMPI_EMU_MASK(testn_epi32_mask, (x.i[i] & y.i[i]) == 0)
#define _mm512_testn_epi32_mask(a, b) apsmpi_emu_testn_epi32_mask(a, b)
#endif

#ifndef _mm512_cvtepu8_epi32 /* vpmovzxbd */
APSMPI_EMU_WIDEN(cvtepu8_epi32, uint8_t, __m128i)
#define _mm512_cvtepu8_epi32(a) apsmpi_emu_cvtepu8_epi32(a)
#endif

#ifndef _mm512_cvtepu16_epi32 /* vpmovzxwd */
APSMPI_EMU_WIDEN(cvtepu16_epi32, uint16_t, __m256i)
#define _mm512_cvtepu16_epi32(a) apsmpi_emu_cvtepu16_epi32(a)
#endif

#ifndef _mm512_cvtepi32_epi8 /* vpmovdb */
APSMPI_EMU_NARROW(cvtepi32_epi8, uint8_t, __m128i)
#define _mm512_cvtepi32_epi8(a) apsmpi_emu_cvtepi32_epi8(a)
#endif

#ifndef _mm512_cvtepi32_epi16 /* vpmovdw */
APSMPI_EMU_NARROW(cvtepi32_epi16, uint16_t, __m256i)
#define _mm512_cvtepi32_epi16(a) apsmpi_emu_cvtepi32_epi16(a)
#endif

/* binary16 <-> binary32: vcvtph2ps and vcvtps2ph do the same to each lane at every width, so
 * two 256-bit ones (F16C) on the low and high 8 lanes */
#ifndef _mm512_cvtph_ps
APSMPI_EMU_INLINE __m512 apsmpi_emu_cvtph_ps(__m256i a)
{
    __m256 lo = _mm256_cvtph_ps(_mm256_castsi256_si128(a)), hi = _mm256_cvtph_ps(_mm256_extracti128_si256(a, 1));
    __m512 r;
    memcpy(&r, &lo, sizeof lo);
    memcpy((char *)&r + sizeof lo, &hi, sizeof hi);
    return r;
}
#define _mm512_cvtph_ps(a) apsmpi_emu_cvtph_ps(a)
#endif

#ifndef _mm512_cvtps_ph
APSMPI_EMU_INLINE __m256 apsmpi_emu_half_ps(__m512 a, int high)
{
    __m256 h;
    memcpy(&h, (const char *)&a + (high ? sizeof h : 0), sizeof h);
    return h;
}

APSMPI_EMU_INLINE __m256i apsmpi_emu_join_ph(__m128i lo, __m128i hi) { return _mm256_set_m128i(hi, lo); }

/* a macro: the rounding control is an immediate */
#define _mm512_cvtps_ph(a, rounding)                                                           \
    __extension__({                                                                            \
        __m512 apsmpi_emu_a_ = (a);                                                            \
        apsmpi_emu_join_ph(_mm256_cvtps_ph(apsmpi_emu_half_ps(apsmpi_emu_a_, 0), (rounding)),  \
                           _mm256_cvtps_ph(apsmpi_emu_half_ps(apsmpi_emu_a_, 1), (rounding))); \
    })
#endif

#endif
