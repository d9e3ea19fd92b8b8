/* issue_rate.c: how many independent 256- and 512-bit vector operations this core issues a cycle, against a dependent chain's one a cycle (the clock), to tell a shared core from a free one. */
/* Build and run: gcc -O2 -mavx512f scripts/bench/issue_rate.c -o /tmp/issue_rate && /tmp/issue_rate (x86-64 with AVX-512F). */
#include <stdio.h>
#include <time.h>

#define STEPS 100000000L

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds for STEPS iterations of one dependent integer add (one cycle each). */
static double chain(void)
{
    double t0 = now_s();
    __asm__ volatile("mov %0, %%rcx\n\t"
                     "vpxor %%ymm0, %%ymm0, %%ymm0\n"
                     "1:\n\t"
                     "vpaddd %%ymm0, %%ymm0, %%ymm0\n\t"
                     "vpaddd %%ymm0, %%ymm0, %%ymm0\n\t"
                     "vpaddd %%ymm0, %%ymm0, %%ymm0\n\t"
                     "vpaddd %%ymm0, %%ymm0, %%ymm0\n\t"
                     "sub $4, %%rcx\n\t"
                     "jnz 1b\n"
                     :
                     : "r"(STEPS)
                     : "rcx", "xmm0", "cc");
    return now_s() - t0;
}

/* Seconds for STEPS adds spread over 8 independent chains in registers `reg` (ymm or zmm). */
#define INDEPENDENT(name, reg)                                                                           \
    static double name(void)                                                                             \
    {                                                                                                    \
        double t0 = now_s();                                                                             \
        __asm__ volatile("mov %0, %%rcx\n"                                                               \
                         "1:\n\t"                                                                        \
                         "vpaddd %%" reg "1, %%" reg "1, %%" reg "1\n\t"                                 \
                         "vpaddd %%" reg "2, %%" reg "2, %%" reg "2\n\t"                                 \
                         "vpaddd %%" reg "3, %%" reg "3, %%" reg "3\n\t"                                 \
                         "vpaddd %%" reg "4, %%" reg "4, %%" reg "4\n\t"                                 \
                         "vpaddd %%" reg "5, %%" reg "5, %%" reg "5\n\t"                                 \
                         "vpaddd %%" reg "6, %%" reg "6, %%" reg "6\n\t"                                 \
                         "vpaddd %%" reg "7, %%" reg "7, %%" reg "7\n\t"                                 \
                         "vpaddd %%" reg "8, %%" reg "8, %%" reg "8\n\t"                                 \
                         "sub $8, %%rcx\n\t"                                                             \
                         "jnz 1b\n"                                                                      \
                         :                                                                               \
                         : "r"(STEPS)                                                                    \
                         : "rcx", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "cc"); \
        return now_s() - t0;                                                                             \
    }
INDEPENDENT(wide256, "ymm")
INDEPENDENT(wide512, "zmm")

int main(void)
{
    for (int round = 0; round < 5; round++) {
        double c = chain(), y = wide256(), z = wide512();
        printf("round %d: clock %.2f GHz, 256-bit adds %.2f a cycle, 512-bit adds %.2f a cycle\n", round,
               STEPS / c * 1e-9, c / y, c / z);
    }
    return 0;
}
