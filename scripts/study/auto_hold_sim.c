/* auto_hold_sim.c: APSMPI_FORMAT=auto's hysteresis measured on a simulated bucket whose mxfp4 flush share hovers near the budget (results/training/auto/README.md). */
/* build and run: gcc -O2 -Isrc scripts/study/auto_hold_sim.c src/core/width_controller.c src/core/format.c src/core/mx_format.c -lpthread -o /tmp/hold && /tmp/hold
 * (the ladder mxfp4, mxfp6, mxfp8, fp32: APSMPI_AUTO_LADDER=mxfp4,mxfp6,mxfp8, four rungs) */
#include <stdio.h>
#include <stdint.h>
#include "core/width_controller.h"
static uint64_t s = 88172645463325252ull;
static double u(void)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (double)(s >> 11) / 9007199254740992.0;
}
int main(void)
{
    double budget = 0.2;
    double means[] = {0.15, 0.18, 0.19, 0.2, 0.21, 0.25};
    int holds[] = {1, 2, 4, 8};
    printf("mean_share sd hold calls switches calls_over_budget bits_per_elem\n");
    for (int mi = 0; mi < 6; mi++)
        for (int hi = 0; hi < 4; hi++) {
            apsmpi_width_state st = {.rung = 0};
            int sw = 0, over = 0, T = 10000;
            double bits = 0;
            s = 88172645463325252ull;
            for (int t = 0; t < T; t++) {
                double share4 = means[mi] + 0.02 * (u() + u() + u() - 1.5) * 2; /* noise sd ~0.02 */
                double pred[4] = {share4, 0.005, 0, 0};
                int agreed = st.rung, prev = st.rung;
                double measured = agreed == 0 ? share4 : pred[agreed];
                over += measured > budget;
                bits += agreed == 0 ? 4.25 : agreed == 1 ? 6.25 : agreed == 2 ? 8.25 : 32;
                apsmpi_width_decide(&st, 4, agreed, measured, pred, budget, holds[hi]);
                sw += st.rung != prev;
            }
            printf("%.2f 0.02 %d %d %d %d %.3f\n", means[mi], holds[hi], T, sw, over, bits / T);
        }
    return 0;
}
