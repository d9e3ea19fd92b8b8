/* algorithm.c: what every algorithm shares: making its plan. */
#include "algo/algorithm.h"

#include "core/units.h"

void apsmpi_plan_make(apsmpi_plan *p, const apsmpi_algorithm *a, const apsmpi_plan_in *in)
{
    *p = (apsmpi_plan){.algo = a, .in = *in, .addends = in->nranks};
    p->state_bytes = apsmpi_align_up(a->state);
    a->plan(p); /* sets packed_bytes, result_bytes, memory_bytes (its own region) and addends */
    /* the algorithm's own input is read while planning only: it may be the caller's local */
    p->in.algo_in = NULL;
    p->memory_bytes += p->state_bytes;
}
