/* runtime_state.c: the one instance of the job's runtime state, and the per-call counter. */
#include "state/runtime_state.h"

#include <stdatomic.h>

apsmpi_runtime apsmpi_rt;
static _Atomic uint64_t call_number;

uint64_t apsmpi_next_call_number(void) { return atomic_fetch_add_explicit(&call_number, 1, memory_order_relaxed); }
