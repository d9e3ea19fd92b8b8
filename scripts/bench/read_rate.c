/* read_rate.c: how fast one thread reads N floats with 512-bit loads and nothing else between them, beside memcpy of the same floats: the memory speed a loop that does work between its loads can at best reach. */
/* Build and run: gcc -O2 -mavx512f scripts/bench/read_rate.c -o /tmp/read_rate && /tmp/read_rate [N] (x86-64 with AVX-512F; N floats, default 134217728). */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const size_t n = (argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)128 << 20) / 32 * 32;
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    if (n == 0 || !a || !b) {
        fprintf(stderr, "read_rate: N a multiple of 32, and memory for 2 N floats\n");
        return 2;
    }
    memset(a, 1, n * sizeof(float)), memset(b, 0, n * sizeof(float)); /* touched before timing */
    /* round 0 moves the pages in; read the others */
    for (int round = 0; round < 5; round++) {
        double t0 = now_s();
        memcpy(b, a, n * sizeof(float));
        const double copy = now_s() - t0;
        t0 = now_s();
        __m512 s0 = _mm512_setzero_ps(), s1 = s0;
        for (size_t i = 0; i < n; i += 32) {
            s0 = _mm512_add_ps(s0, _mm512_loadu_ps(a + i));
            s1 = _mm512_add_ps(s1, _mm512_loadu_ps(a + i + 16));
        }
        const double read = now_s() - t0;
        const float sink = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
        printf("round %d: %zu floats: memcpy %.2f G floats/s, read %.2f (%.2f x memcpy; their sum %g)\n", round, n,
               1e-9 * (double)n / copy, 1e-9 * (double)n / read, copy / read, (double)sink);
    }
    free(a), free(b);
    return 0;
}
