/* test_train_adamw.c: AdamW against two steps computed by hand (bias correction, decoupled decay only where it applies), the learning-rate schedule, and global-norm clipping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "adamw.h"
#include "backend.h"

static void assert_close(double got, double want, const char *what)
{
    if (fabs(got - want) > 2e-6 * fabs(want) + 1e-7)
        fail_msg("%s: got %.9g, want %.9g", what, got, want);
}

/* Two tensors: w = (1, -2) with weight decay, b = (0.5) without; lr 0.1, weight decay 0.5,
 * beta1 0.9, beta2 0.99, eps 1e-8; the arena's gradients scaled by 0.5 on the way in.
 *
 * Step 1, g = 0.5 (0.2, -0.4, 0.6) = (0.1, -0.2, 0.3):
 *   m = 0.1 g = (0.01, -0.02, 0.03), v = 0.01 g^2 = (1e-4, 4e-4, 9e-4);
 *   mhat = m / (1 - 0.9) = g, vhat = v / (1 - 0.99) = g^2, so the step is lr g / (|g| + eps);
 *   w0 = 1 (1 - 0.1 * 0.5) - 0.1 * 0.1 / (0.1 + 1e-8)   = 0.95 - 0.09999999  = 0.85000001
 *   w1 = -2 (0.95) + 0.1 * 0.2 / (0.2 + 1e-8)          = -1.9 + 0.099999995 = -1.800000005
 *   b  = 0.5 (no decay) - 0.1 * 0.3 / (0.3 + 1e-8)      = 0.400000003
 * Step 2, g = 0.5 (-0.2, 0.2, 0.2) = (-0.1, 0.1, 0.1); 1 - 0.9^2 = 0.19, 1 - 0.99^2 = 0.0199:
 *   w0: m = 0.9 * 0.01 - 0.01 = -0.001, v = 0.99e-4 + 1e-4 = 1.99e-4; mhat = -0.00526316,
 *       vhat = 0.01; w0 = 0.85000001 * 0.95 + 0.1 * 0.00526316 / 0.1 = 0.812763167
 *   w1: m = -0.018 + 0.01 = -0.008, v = 3.96e-4 + 1e-4 = 4.96e-4; mhat = -0.0421053,
 *       vhat = 0.0249246, sqrt 0.157875; w1 = -1.800000005 * 0.95 + 0.1 * 0.266699 = -1.683330064
 *   b:  m = 0.027 + 0.01 = 0.037, v = 8.91e-4 + 1e-4 = 9.91e-4; mhat = 0.194737,
 *       vhat = 0.0497990, sqrt 0.223157; b = 0.400000003 - 0.1 * 0.872643 = 0.312735461 */
static void test_two_steps_by_hand(void **state)
{
    struct arena a;
    struct adamw o;
    float g1[] = {0.2f, -0.4f, 0.6f}, g2[] = {-0.2f, 0.2f, 0.2f};

    arena_init(&a, &backend_cpu);
    arena_add(&a, 2, true, "w");
    arena_add(&a, 1, false, "b");
    arena_alloc(&a);
    a.params[0] = 1.0f;
    a.params[1] = -2.0f;
    a.params[2] = 0.5f;
    adamw_init(&o, &a, 0.5f);
    for (int i = 0; i < 3; i++)
        a.grads[i] = g1[i];
    adamw_step(&o, &a, 0.1f, 0.5f);
    assert_int_equal(o.t, 1);
    assert_close(a.params[0], 0.85000001, "step 1 w0");
    assert_close(a.params[1], -1.800000005, "step 1 w1");
    assert_close(a.params[2], 0.400000003, "step 1 b");
    assert_close(o.m[2], 0.03, "step 1 m of b");
    assert_close(o.v[1], 4e-4, "step 1 v of w1");
    for (int i = 0; i < 3; i++)
        a.grads[i] = g2[i];
    adamw_step(&o, &a, 0.1f, 0.5f);
    assert_close(a.params[0], 0.812763167, "step 2 w0");
    assert_close(a.params[1], -1.683330064, "step 2 w1");
    assert_close(a.params[2], 0.312735461, "step 2 b");
    adamw_free(&o);
    arena_free(&a);
}

/* A zero gradient moves only the decayed tensors, by the decay alone. */
static void test_decay_alone(void **state)
{
    struct arena a;
    struct adamw o;

    arena_init(&a, &backend_cpu);
    arena_add(&a, 1, true, "w");
    arena_add(&a, 1, false, "gain");
    arena_alloc(&a);
    a.params[0] = 2.0f;
    a.params[1] = 3.0f;
    adamw_init(&o, &a, 0.1f);
    adamw_step(&o, &a, 0.01f, 1.0f);
    assert_close(a.params[0], 2.0 * (1 - 0.01 * 0.1), "decayed");
    assert_true(a.params[1] == 3.0f);
    adamw_free(&o);
    arena_free(&a);
}

static void test_schedule(void **state)
{
    /* warm-up: step k of 10 gets (k + 1) / 10 of lr */
    assert_close(lr_at(0, 22, 10, 2.0f), 0.2, "first warm-up step");
    assert_close(lr_at(9, 22, 10, 2.0f), 2.0, "last warm-up step");
    /* cosine from lr at step 10 to lr / 10 at step 21; with one warm-up step, half way (0.55 lr) at step 11 */
    assert_close(lr_at(10, 22, 10, 2.0f), 2.0, "first decay step");
    assert_close(lr_at(21, 22, 10, 2.0f), 0.2, "last step");
    assert_close(lr_at(11, 22, 1, 2.0f), 1.1, "half way");
    for (long s = 11; s < 22; s++)
        assert_true(lr_at(s, 22, 10, 2.0f) < lr_at(s - 1, 22, 10, 2.0f));
}

static void test_clipping(void **state)
{
    struct arena a;

    arena_init(&a, &backend_cpu);
    arena_add(&a, 1, true, "x");
    arena_add(&a, 1, false, "y");
    arena_alloc(&a);
    a.grads[0] = 6.0f;
    a.grads[1] = -8.0f;
    assert_close(grad_norm(&a, 0.5f), 5.0, "norm of the scaled gradient");
    assert_close(clipped_scale(5.0, 0.5f, 1.0f), 0.1, "clipped to norm 1");
    assert_close(clipped_scale(5.0, 0.5f, 10.0f), 0.5, "under the limit: unchanged");
    assert_close(clipped_scale(5.0, 0.5f, 0.0f), 0.5, "no clipping");
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_steps_by_hand),
        cmocka_unit_test(test_decay_alone),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_clipping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
