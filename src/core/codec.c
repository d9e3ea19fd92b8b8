/* codec.c: the codec's buffer API: dispatch to the loops of one instruction-set level, bit packing, runs of one scale. */
#include "build_config.h"
#include <stdlib.h>
#include <string.h>
#include "core/codec.h"
#include "core/codec_loops.h"
#include "core/codec_mx.h"
#include "core/fpconv.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "apsmpi's packed wire format is written with little-endian stores"
#endif

#define INLINE static inline __attribute__((always_inline))

/* The loops' float arithmetic needs IEEE subnormals: a caller's flush-to-zero and
 * denormals-are-zero modes (x86 MXCSR FTZ, DAZ; aarch64 FPCR FZ; some frameworks set them)
 * are cleared for the duration of a call and restored after it. */
#if defined(__SSE2__)
#include <immintrin.h>
enum { NON_IEEE_MODES = 0x8040 }; /* FTZ | DAZ */

static unsigned ieee_enter(void)
{
    unsigned m = _mm_getcsr();
    if (m & NON_IEEE_MODES)
        _mm_setcsr(m & ~(unsigned)NON_IEEE_MODES);
    return m;
}

static void ieee_leave(unsigned m)
{
    if (m & NON_IEEE_MODES)
        _mm_setcsr(m);
}
#elif defined(__aarch64__) && defined(__GNUC__)
/* FPCR.FZ: flush subnormal inputs and results of single precision; FPCR.DN: default NaN (a NaN
 * operand would lose its sign and payload) */
enum { NON_IEEE_MODES = 1u << 24 | 1u << 25 };

static unsigned ieee_enter(void)
{
    unsigned m = __builtin_aarch64_get_fpcr();
    if (m & NON_IEEE_MODES)
        __builtin_aarch64_set_fpcr(m & ~(unsigned)NON_IEEE_MODES);
    return m;
}

static void ieee_leave(unsigned m)
{
    if (m & NON_IEEE_MODES)
        __builtin_aarch64_set_fpcr(m);
}
#else
static unsigned ieee_enter(void) { return 0; }

static void ieee_leave(unsigned m) { (void)m; }
#endif

enum { UNPACKED_AT_ONCE = 1024 }; /* codes held unpacked (8- or 16-bit) at a time on the bit-packed paths */

/* ---- instruction-set levels ---- */

static const char *const isa_names[APSMPI_ISA_COUNT] = {"auto", "scalar", "avx2", "avx512"};

int apsmpi_codec_isa_parse(const char *name)
{
    for (int i = 0; i < APSMPI_ISA_COUNT; i++)
        if (strcmp(name, isa_names[i]) == 0)
            return i;
    return -1;
}

const char *apsmpi_codec_isa_name(int isa) { return isa >= 0 && isa < APSMPI_ISA_COUNT ? isa_names[isa] : "?"; }

/* The loops of a level, or NULL if this build or this CPU lacks it. */
static const codec_loops *loops_of(int isa)
{
    switch (isa) {
    case APSMPI_ISA_SCALAR:
        return &apsmpi_codec_loops_scalar;
#ifdef APSMPI_CODEC_X86
    case APSMPI_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma")
                   ? &apsmpi_codec_loops_avx2
                   : NULL;
    case APSMPI_ISA_AVX512:
        __builtin_cpu_init();
#ifdef APSMPI_EMULATE_AVX512
        /* make check-avx512-emulated: the avx512 loops built for AVX2, their AVX-512 intrinsics
         * emulated (core/avx512_emulated.h), on a CPU with or without AVX-512 */
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma")
                   ? &apsmpi_codec_loops_avx512
                   : NULL;
#endif
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                   ? &apsmpi_codec_loops_avx512
                   : NULL;
#endif
    default:
        return NULL;
    }
}

int apsmpi_codec_isa_supported(int isa) { return isa == APSMPI_ISA_AUTO || loops_of(isa) != NULL; }

int apsmpi_codec_isa_best(void)
{
    int best = APSMPI_ISA_SCALAR;
    for (int i = APSMPI_ISA_SCALAR; i < APSMPI_ISA_COUNT; i++)
        if (loops_of(i) != NULL)
            best = i;
    return best;
}

const char *apsmpi_codec_isa_of(const apsmpi_codec *c) { return c->loops->name; }

/* ---- the codec object ---- */

const apsmpi_format *apsmpi_codec_format(const apsmpi_codec *c) { return &c->f; }

void apsmpi_codec_free(apsmpi_codec *c)
{
    if (c == NULL)
        return;
    free(c->dec);
    free(c->sum);
    free(c);
}

/* The code of decode(a) + decode(b), the addition in float, rounded to nearest even. */
static uint32_t code_add(const apsmpi_codec *c, uint32_t a, uint32_t b)
{
    float x = c->dec[a] + c->dec[b];
    return apsmpi_encode_one(apsmpi_f2u(x), 0, &c->f, 0, 0);
}

apsmpi_codec *apsmpi_codec_create_isa(const apsmpi_format *f, int isa)
{
    int level = isa == APSMPI_ISA_AUTO ? apsmpi_codec_isa_best() : isa;
    const codec_loops *loops = loops_of(level);
    if (loops == NULL)
        return NULL;
    apsmpi_codec *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->f = *f;
    c->loops = loops;
    c->mx = f->mx ? apsmpi_mx_loops_of(level) : NULL;
    unsigned mode = ieee_enter();
    size_t ncodes = (size_t)1 << f->width;
    c->dec = malloc(ncodes * sizeof *c->dec);
    if (c->dec == NULL)
        goto fail;
    for (size_t i = 0; i < ncodes; i++)
        c->dec[i] = apsmpi_decode_one((uint32_t)i, 0, f);
    if (f->width <= 8 && !f->mx) {
        c->sum = malloc(ncodes * ncodes);
        if (c->sum == NULL)
            goto fail;
        for (size_t a = 0; a < ncodes; a++)
            for (size_t b = 0; b < ncodes; b++)
                c->sum[(a << f->width) | b] = (uint8_t)code_add(c, (uint32_t)a, (uint32_t)b);
    }
    ieee_leave(mode);
    return c;
fail:
    ieee_leave(mode);
    apsmpi_codec_free(c);
    return NULL;
}

apsmpi_codec *apsmpi_codec_create(const apsmpi_format *f) { return apsmpi_codec_create_isa(f, APSMPI_ISA_AUTO); }

/* ---- bit packing: groups of g codes of w bits in g*w/8 bytes, LSB first ---- */

/* Code k of the unpacked codes: one byte each for widths up to 8, else a uint16_t. */
INLINE uint32_t unpacked_code(const void *codes, size_t k, int w)
{
    return w <= 8 ? ((const uint8_t *)codes)[k] : ((const uint16_t *)codes)[k];
}

INLINE void set_unpacked_code(void *codes, size_t k, int w, uint32_t v)
{
    if (w <= 8)
        ((uint8_t *)codes)[k] = (uint8_t)v;
    else
        ((uint16_t *)codes)[k] = (uint16_t)v;
}

/* Packs ngroups groups of codes (g = 8 / 4 / 2 / 1 per group) of width w into out. A group
 * of up to 64 bits is assembled in a uint64_t, a wider one (9 to 15 bits, 8 codes) in two. */
INLINE void pack_w(const void *codes, size_t ngroups, uint8_t *out, int w, int g)
{
    int gb = g * w / 8;
    for (size_t k = 0; k < ngroups; k++) {
        uint64_t lo = 0, hi = 0;
        for (int j = 0; j < g; j++) {
            int at = j * w;
            uint64_t cd = unpacked_code(codes, k * g + (size_t)j, w);
            if (at < 64)
                lo |= cd << at;
            if (at + w > 64)
                hi |= cd >> (at < 64 ? 64 - at : 0) << (at > 64 ? at - 64 : 0);
        }
        memcpy(out + k * gb, &lo, gb < 8 ? gb : 8);
        if (gb > 8)
            memcpy(out + k * gb + 8, &hi, gb - 8);
    }
}

/* The little-endian number in the nbytes (at most 8) bytes at p, built in a register (a
 * memcpy into a wider variable would stall on store forwarding). */
INLINE uint64_t load_le(const uint8_t *p, int nbytes)
{
    uint64_t v = 0;
    for (int b = 0; b < nbytes; b++)
        v |= (uint64_t)p[b] << (8 * b);
    return v;
}

/* Unpacks ngroups groups of width w from in into codes. */
INLINE void unpack_w(const uint8_t *in, size_t ngroups, void *codes, int w, int g)
{
    int gb = g * w / 8;
    uint64_t mask = (1u << w) - 1u;
    for (size_t k = 0; k < ngroups; k++) {
        uint64_t lo = load_le(in + k * gb, gb < 8 ? gb : 8);
        uint64_t hi = gb > 8 ? load_le(in + k * gb + 8, gb - 8) : 0;
        for (int j = 0; j < g; j++) {
            int at = j * w;
            uint64_t v = at < 64 ? lo >> at : 0;
            if (at + w > 64)
                v |= at < 64 ? hi << (64 - at) : hi >> (at - 64);
            set_unpacked_code(codes, k * g + (size_t)j, w, (uint32_t)(v & mask));
        }
    }
}

/* Instantiates pack/unpack with the width and group size as constants for every width 3..16
 * (the group size as apsmpi_group_elems computes it). */
#define WIDTH_CASES(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)
#define GROUP_OF(W) ((W) % 8 == 0 ? 1 : (W) % 4 == 0 ? 2 : (W) % 2 == 0 ? 4 : 8)

static void pack_codes_scalar(const void *codes, size_t ngroups, uint8_t *out, int w)
{
    switch (w) {
#define PACK_CASE(W)                                 \
    case W:                                          \
        pack_w(codes, ngroups, out, W, GROUP_OF(W)); \
        return;
        WIDTH_CASES(PACK_CASE)
#undef PACK_CASE
    }
}

static void unpack_codes_scalar(const uint8_t *in, size_t ngroups, void *codes, int w)
{
    switch (w) {
#define UNPACK_CASE(W)                                \
    case W:                                           \
        unpack_w(in, ngroups, codes, W, GROUP_OF(W)); \
        return;
        WIDTH_CASES(UNPACK_CASE)
#undef UNPACK_CASE
    }
}

/* Packs ngroups groups of unpacked codes: the level's loop first, the rest here. */
static void pack_codes(const apsmpi_codec *c, const void *codes, size_t ngroups, uint8_t *out)
{
    int w = c->f.width;
    size_t g = apsmpi_group_elems(&c->f), gb = apsmpi_group_bytes(&c->f);
    size_t done = c->loops->pack ? c->loops->pack(codes, ngroups * g / 8 * 8, out, w) / g : 0;
    pack_codes_scalar((const uint8_t *)codes + done * g * (w <= 8 ? 1 : 2), ngroups - done, out + done * gb, w);
}

static void unpack_codes(const apsmpi_codec *c, const uint8_t *in, size_t ngroups, void *codes)
{
    int w = c->f.width;
    size_t g = apsmpi_group_elems(&c->f), gb = apsmpi_group_bytes(&c->f);
    size_t done = c->loops->unpack ? c->loops->unpack(in, ngroups * g / 8 * 8, codes, w) / g : 0;
    unpack_codes_scalar(in + done * gb, ngroups - done, (uint8_t *)codes + done * g * (w <= 8 ? 1 : 2), w);
}

/* ---- encode ---- */

/* Scale of the block that holds buffer index i. */
static inline int scale_at(apsmpi_scales sc, size_t i) { return sc.scale ? sc.scale[i / sc.block_len] : 0; }

/* Number of elements from buffer index i, at most n, that share i's block. */
static inline size_t run_len(apsmpi_scales sc, size_t i, size_t n)
{
    if (sc.scale == NULL)
        return n;
    size_t left = sc.block_len - i % sc.block_len;
    return left < n ? left : n;
}

/* Encodes n floats into codes of one or two bytes each, run by run of equal scale. */
static uint64_t encode_codes(const apsmpi_codec *c, const float *in, size_t n, size_t first, apsmpi_scales sc,
                             int stochastic, uint64_t key, void *out, int count)
{
    uint64_t flushed = 0;
    for (size_t i = 0; i < n;) {
        size_t len = run_len(sc, first + i, n - i);
        int s = scale_at(sc, first + i);
        if (c->f.width <= 8)
            flushed += c->loops->encode8(c, in + i, len, s, stochastic, key, first + i, (uint8_t *)out + i, count);
        else
            flushed += c->loops->encode16(c, in + i, len, s, stochastic, key, first + i, (uint16_t *)out + i, count);
        i += len;
    }
    return flushed;
}

static void encode_buffer(const apsmpi_codec *c, const float *in, size_t n, size_t first_index, apsmpi_scales sc,
                          apsmpi_rounding r, void *out, uint64_t *flushed)
{
    int w = c->f.width;
    uint64_t key = apsmpi_rng_key(r.seed, r.call);
    size_t g = apsmpi_group_elems(&c->f);
    size_t padded = apsmpi_groups_for(&c->f, n) * g;
    uint64_t nflushed = 0;
    if (w == 8 || w == 16) {
        nflushed = encode_codes(c, in, n, first_index, sc, r.stochastic, key, out, flushed != NULL);
        if (padded > n)
            memset((uint8_t *)out + n * (size_t)(w / 8), 0, (padded - n) * (size_t)(w / 8));
    } else {
        uint16_t codes[UNPACKED_AT_ONCE];
        for (size_t i = 0; i < padded; i += UNPACKED_AT_ONCE) {
            size_t len = padded - i < UNPACKED_AT_ONCE ? padded - i : UNPACKED_AT_ONCE;
            size_t real = i < n ? (n - i < len ? n - i : len) : 0;
            nflushed += encode_codes(c, in + i, real, first_index + i, sc, r.stochastic, key, codes, flushed != NULL);
            if (w < 8)
                memset((uint8_t *)codes + real, 0, len - real);
            else
                memset(codes + real, 0, (len - real) * sizeof codes[0]);
            pack_codes(c, codes, len / g, (uint8_t *)out + i / g * apsmpi_group_bytes(&c->f));
        }
    }
    if (flushed)
        *flushed += nflushed;
}

void apsmpi_encode(const apsmpi_codec *c, const float *in, size_t n, size_t first_index, apsmpi_scales sc,
                   apsmpi_rounding r, void *out, uint64_t *flushed)
{
    unsigned mode = ieee_enter();
    if (c->mx)
        apsmpi_mx_encode(c->mx, &c->f, in, n, first_index, r, out, flushed);
    else
        encode_buffer(c, in, n, first_index, sc, r, out, flushed);
    ieee_leave(mode);
}

void apsmpi_encode_measured(const apsmpi_codec *c, const float *in, size_t n, size_t first_index, apsmpi_rounding r,
                            void *out, apsmpi_mx_measure *m)
{
    unsigned mode = ieee_enter();
    apsmpi_mx_encode_measured(c->mx ? c->mx : &apsmpi_mx_loops_scalar, &c->f, in, n, first_index, r, out, m);
    ieee_leave(mode);
}

/* ---- decode ---- */

/* Decodes n codes of one or two bytes each, run by run of equal scale. */
static void decode_codes(const apsmpi_codec *c, const void *in, size_t n, size_t first, apsmpi_scales sc, float *out)
{
    for (size_t i = 0; i < n;) {
        size_t len = run_len(sc, first + i, n - i);
        int s = scale_at(sc, first + i);
        if (c->f.width <= 8)
            c->loops->decode8(c, (const uint8_t *)in + i, len, s, out + i);
        else
            c->loops->decode16(c, (const uint16_t *)in + i, len, s, out + i);
        i += len;
    }
}

static void decode_buffer(const apsmpi_codec *c, const void *in, size_t n, size_t first_index, apsmpi_scales sc,
                          float *out)
{
    int w = c->f.width;
    if (w == 8 || w == 16) {
        decode_codes(c, in, n, first_index, sc, out);
        return;
    }
    size_t g = apsmpi_group_elems(&c->f);
    uint16_t codes[UNPACKED_AT_ONCE];
    for (size_t i = 0; i < n; i += UNPACKED_AT_ONCE) {
        size_t len = n - i < UNPACKED_AT_ONCE ? n - i : UNPACKED_AT_ONCE;
        size_t ng = (len + g - 1) / g;
        unpack_codes(c, (const uint8_t *)in + i / g * apsmpi_group_bytes(&c->f), ng, codes);
        decode_codes(c, codes, len, first_index + i, sc, out + i);
    }
}

void apsmpi_decode(const apsmpi_codec *c, const void *in, size_t n, size_t first_index, apsmpi_scales sc, float *out)
{
    unsigned mode = ieee_enter();
    if (c->mx)
        apsmpi_mx_decode(c->mx, &c->f, in, n, out);
    else
        decode_buffer(c, in, n, first_index, sc, out);
    ieee_leave(mode);
}

/* ---- the packed sum ---- */

static void sum_buffer(const apsmpi_codec *c, const void *in, void *inout, size_t ngroups)
{
    int w = c->f.width;
    if (w == 8) {
        c->loops->sum8(c, in, inout, ngroups);
        return;
    }
    if (w == 16) {
        c->loops->sum16(c, in, inout, ngroups);
        return;
    }
    size_t g = apsmpi_group_elems(&c->f), gb = apsmpi_group_bytes(&c->f);
    size_t groups_at_once = UNPACKED_AT_ONCE / g;
    uint16_t a[UNPACKED_AT_ONCE], b[UNPACKED_AT_ONCE];
    size_t done = c->loops->sum_packed ? c->loops->sum_packed(c, in, inout, ngroups * g / 8 * 8) / g : 0;
    for (size_t k = done; k < ngroups; k += groups_at_once) {
        size_t ng = ngroups - k < groups_at_once ? ngroups - k : groups_at_once;
        const uint8_t *pa = (const uint8_t *)in + k * gb;
        uint8_t *pb = (uint8_t *)inout + k * gb;
        unpack_codes(c, pa, ng, a);
        unpack_codes(c, pb, ng, b);
        if (w < 8)
            c->loops->sum8(c, (const uint8_t *)a, (uint8_t *)b, ng * g);
        else
            c->loops->sum16(c, a, b, ng * g);
        pack_codes(c, b, ng, pb);
    }
}

void apsmpi_sum_packed(const apsmpi_codec *c, const void *in, void *inout, size_t ngroups)
{
    unsigned mode = ieee_enter();
    if (c->mx)
        apsmpi_mx_sum_packed(c->mx, &c->f, in, inout, ngroups);
    else
        sum_buffer(c, in, inout, ngroups);
    ieee_leave(mode);
}
