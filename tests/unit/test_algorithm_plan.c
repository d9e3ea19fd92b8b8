/* test_algorithm_plan.c: unit tests of the algorithm interface's planning (algo/algorithm.c): an algorithm's own input reaches its plan only, through the opaque algo_in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "algo/algorithm.h"

/* A made-up algorithm's own input and what its plan saw of it. */
typedef struct fake_in {
    size_t extra;
} fake_in;

typedef struct fake_plan {
    const void *seen;
    size_t extra;
} fake_plan;

static void fake_plan_fn(apsmpi_plan *p)
{
    const fake_in *in = p->in.algo_in;
    fake_plan *own = apsmpi_plan_own(p, fake_plan);

    own->seen = p->in.algo_in;
    own->extra = in ? in->extra : 0;
    p->packed_bytes = p->in.n;
    p->memory_bytes = 100 + own->extra;
}

static const apsmpi_algorithm fake = {.name = "fake", .state = 70, .plan = fake_plan_fn};

/* The algorithm reads its own input while planning; the plan keeps no pointer to it (it may
 * be the caller's local); the state comes first in the memory, 64-aligned; addends default to
 * the rank count. */
static void test_own_input(void **state)
{
    fake_in own_in = {.extra = 28};
    apsmpi_plan_in in = {.nranks = 5, .rank = 2, .n = 1000, .algo_in = &own_in};
    apsmpi_plan p;

    (void)state;
    apsmpi_plan_make(&p, &fake, &in);
    assert_ptr_equal(apsmpi_plan_own(&p, fake_plan)->seen, &own_in);
    assert_int_equal(apsmpi_plan_own(&p, fake_plan)->extra, 28);
    assert_null(p.in.algo_in);
    assert_ptr_equal(in.algo_in, &own_in); /* the caller's copy is the caller's */
    assert_ptr_equal(p.algo, &fake);
    assert_int_equal(p.state_bytes, 128);
    assert_int_equal(p.memory_bytes, 128 + 100 + 28);
    assert_int_equal(p.packed_bytes, 1000);
    assert_int_equal(p.addends, 5);
}

/* Without an own input the algorithm plans on its defaults. */
static void test_no_own_input(void **state)
{
    apsmpi_plan_in in = {.nranks = 3, .n = 10};
    apsmpi_plan p;

    (void)state;
    apsmpi_plan_make(&p, &fake, &in);
    assert_null(apsmpi_plan_own(&p, fake_plan)->seen);
    assert_int_equal(p.memory_bytes, 128 + 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_input),
        cmocka_unit_test(test_no_own_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
