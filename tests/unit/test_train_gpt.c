/* test_train_gpt.c: every backward step of the transformer (embeddings, LayerNorm, GELU, attention, the loss, the whole model) against central finite differences, and its bit-repeatability. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "gpt.h"
#include "gpt_ops.h"
#include "rng.h"

/* Central differences of a float computation with step H: the truncation error is O(H^2)
 * and the rounding error about 1e-7 |L| / H, so an analytic gradient must match to
 * ABS_TOL + REL_TOL |g| for one step, and to twice that through the whole model (whose
 * loss is larger and whose curvature, through several layers, is too). Every test also
 * checks that its gradients are far larger than MODEL_ABS_TOL, so that a gradient of zero
 * (or of the wrong sign) cannot pass; a gradient 1% off fails the steps' tests. */
#define H 1e-2f
#define ABS_TOL 5e-4
#define REL_TOL 5e-3
#define MODEL_ABS_TOL 2e-3
#define MODEL_REL_TOL 1e-2

static float *random_floats(struct rng *r, size_t n, float lo, float hi)
{
    float *p = malloc(n * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = rng_uniform(r, lo, hi);
    return p;
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * (double)b[i];
    return s;
}

/* Compares the analytic gradient g of one input with the finite differences of loss(ctx)
 * over every element of that input x (perturbed in place); returns the largest |g|. */
static double check_gradient(const char *what, float *x, const float *g, size_t n, double (*loss)(void *), void *ctx)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++) {
        float keep = x[i];
        double up, down, fd;
        x[i] = keep + H;
        up = loss(ctx);
        x[i] = keep - H;
        down = loss(ctx);
        x[i] = keep;
        fd = (up - down) / (2.0 * H);
        if (fabs(fd - g[i]) > ABS_TOL + REL_TOL * fabs(g[i]))
            fail_msg("%s[%zu]: analytic %.6g, finite differences %.6g", what, i, (double)g[i], fd);
        if (fabs(g[i]) > largest)
            largest = fabs(g[i]);
    }
    return largest;
}

static void assert_not_trivial(const char *what, double largest)
{
    if (largest < 50 * MODEL_ABS_TOL)
        fail_msg("%s: largest gradient %.3g is too small to test anything", what, largest);
}

/* ---- embeddings ---- */
enum { E_VOCAB = 5, E_CTX = 4, E_D = 3, E_ROWS = 8 };
struct embed_case {
    int tok[E_ROWS];
    float *wte, *wpe, *r, x[E_ROWS * E_D];
};

static double embed_loss(void *p)
{
    struct embed_case *c = p;
    embed_forward(c->x, c->tok, c->wte, c->wpe, E_ROWS, E_CTX, E_D);
    return dot(c->x, c->r, E_ROWS * E_D);
}

static void test_embedding_backward(void **state)
{
    struct rng r;
    struct embed_case c;
    float dwte[E_VOCAB * E_D], dwpe[E_CTX * E_D];
    int tok[E_ROWS] = {0, 3, 3, 1, 4, 0, 3, 2};

    rng_init(&r, 11, 0);
    memcpy(c.tok, tok, sizeof tok);
    c.wte = random_floats(&r, E_VOCAB * E_D, -1, 1);
    c.wpe = random_floats(&r, E_CTX * E_D, -1, 1);
    c.r = random_floats(&r, E_ROWS * E_D, -1, 1);
    embed_backward(dwte, dwpe, c.r, c.tok, E_ROWS, E_CTX, E_D, E_VOCAB);
    assert_not_trivial("wte", check_gradient("wte", c.wte, dwte, E_VOCAB * E_D, embed_loss, &c));
    assert_not_trivial("wpe", check_gradient("wpe", c.wpe, dwpe, E_CTX * E_D, embed_loss, &c));
    free(c.wte);
    free(c.wpe);
    free(c.r);
}

/* ---- LayerNorm ---- */
enum { L_ROWS = 6, L_D = 5 };
struct ln_case {
    float *x, *g, *b, *r, y[L_ROWS * L_D], mean[L_ROWS], rstd[L_ROWS];
};

static double ln_loss(void *p)
{
    struct ln_case *c = p;
    layernorm_forward(c->y, c->mean, c->rstd, c->x, c->g, c->b, L_ROWS, L_D);
    return dot(c->y, c->r, L_ROWS * L_D);
}

static void test_layernorm_backward(void **state)
{
    struct rng r;
    struct ln_case c;
    float dx[L_ROWS * L_D], dg[L_D], db[L_D], start[L_ROWS * L_D];

    rng_init(&r, 12, 0);
    c.x = random_floats(&r, L_ROWS * L_D, -2, 2);
    c.g = random_floats(&r, L_D, 0.5f, 1.5f);
    c.b = random_floats(&r, L_D, -0.5f, 0.5f);
    c.r = random_floats(&r, L_ROWS * L_D, -1, 1);
    ln_loss(&c);
    /* backward adds to dx: start from something that is not zero and take it off again */
    for (int i = 0; i < L_ROWS * L_D; i++)
        dx[i] = start[i] = (float)i;
    layernorm_backward(dx, dg, db, c.r, c.x, c.mean, c.rstd, c.g, L_ROWS, L_D);
    for (int i = 0; i < L_ROWS * L_D; i++)
        dx[i] -= start[i];
    assert_not_trivial("ln x", check_gradient("ln x", c.x, dx, L_ROWS * L_D, ln_loss, &c));
    assert_not_trivial("ln gain", check_gradient("ln gain", c.g, dg, L_D, ln_loss, &c));
    assert_not_trivial("ln bias", check_gradient("ln bias", c.b, db, L_D, ln_loss, &c));
    /* each output row is normalized: (y - b) / g has mean 0 and unit variance */
    ln_loss(&c);
    for (int row = 0; row < L_ROWS; row++) {
        double m = 0, v = 0;
        for (int j = 0; j < L_D; j++)
            m += (c.y[row * L_D + j] - c.b[j]) / c.g[j];
        for (int j = 0; j < L_D; j++) {
            double z = (c.y[row * L_D + j] - c.b[j]) / c.g[j] - m / L_D;
            v += z * z;
        }
        assert_true(fabs(m / L_D) < 1e-5 && fabs(v / L_D - 1.0) < 1e-3);
    }
    free(c.x);
    free(c.g);
    free(c.b);
    free(c.r);
}

/* ---- GELU ---- */
enum { G_N = 24 };
struct gelu_case {
    float *x, *r, y[G_N];
};

static double gelu_loss(void *p)
{
    struct gelu_case *c = p;
    gelu_forward(c->y, c->x, G_N);
    return dot(c->y, c->r, G_N);
}

static void test_gelu_backward(void **state)
{
    struct rng r;
    struct gelu_case c;
    float dx[G_N], y;

    rng_init(&r, 13, 0);
    c.x = random_floats(&r, G_N, -4, 4);
    c.x[0] = 0.0f;
    c.r = random_floats(&r, G_N, -1, 1);
    gelu_backward(dx, c.r, c.x, G_N);
    assert_not_trivial("gelu", check_gradient("gelu", c.x, dx, G_N, gelu_loss, &c));
    /* known values: gelu(0) = 0, gelu(x) -> x for large x, -> 0 for very negative x */
    gelu_forward(&y, &(float){0.0f}, 1);
    assert_true(y == 0.0f);
    gelu_forward(&y, &(float){10.0f}, 1);
    assert_true(fabsf(y - 10.0f) < 1e-5f);
    gelu_forward(&y, &(float){-10.0f}, 1);
    assert_true(fabsf(y) < 1e-5f);
    free(c.x);
    free(c.r);
}

/* ---- attention ---- */
enum { A_CTX = 4, A_SEQ = 2, A_ROWS = A_CTX * A_SEQ, A_D = 6, A_HEADS = 2 };
struct attn_case {
    float *qkv, *r, out[A_ROWS * A_D], probs[A_SEQ * A_HEADS * A_CTX * A_CTX];
};

static double attn_loss(void *p)
{
    struct attn_case *c = p;
    attention_forward(c->out, c->probs, c->qkv, A_ROWS, A_CTX, A_D, A_HEADS);
    return dot(c->out, c->r, A_ROWS * A_D);
}

static void test_attention_backward(void **state)
{
    struct rng r;
    struct attn_case c;
    float dqkv[A_ROWS * 3 * A_D];

    rng_init(&r, 14, 0);
    c.qkv = random_floats(&r, A_ROWS * 3 * A_D, -1.5f, 1.5f);
    c.r = random_floats(&r, A_ROWS * A_D, -1, 1);
    attn_loss(&c);
    attention_backward(dqkv, c.r, c.qkv, c.probs, A_ROWS, A_CTX, A_D, A_HEADS);
    assert_not_trivial("qkv", check_gradient("qkv", c.qkv, dqkv, A_ROWS * 3 * A_D, attn_loss, &c));
    /* causal: each row of probabilities sums to 1 over the positions up to its own, and
     * the first position of a sequence sees only itself */
    for (int m = 0; m < A_SEQ * A_HEADS; m++)
        for (int i = 0; i < A_CTX; i++) {
            const float *p = c.probs + (m * A_CTX + i) * A_CTX;
            double sum = 0.0;
            for (int j = 0; j < A_CTX; j++) {
                if (j > i)
                    assert_true(p[j] == 0.0f);
                sum += p[j];
            }
            assert_true(fabs(sum - 1.0) < 1e-6);
        }
    /* the keys and values of position 0 of sequence 1 reach its output: the first output
     * of a sequence is its own value vector */
    for (int h = 0; h < A_HEADS; h++)
        for (int j = 0; j < A_D / A_HEADS; j++) {
            int col = h * (A_D / A_HEADS) + j;
            assert_true(c.out[A_CTX * A_D + col] == c.qkv[A_CTX * 3 * A_D + 2 * A_D + col]);
        }
    free(c.qkv);
    free(c.r);
}

/* ---- the loss: softmax cross-entropy of the host backend ---- */
enum { X_ROWS = 5, X_CLASSES = 7 };
struct xent_case {
    float *z, d[X_ROWS * X_CLASSES];
    int labels[X_ROWS];
};

static double xent_loss(void *p)
{
    struct xent_case *c = p;
    return backend_cpu.softmax_xent(c->d, c->z, c->labels, X_ROWS, X_CLASSES);
}

static void test_loss_backward(void **state)
{
    struct rng r;
    struct xent_case c = {.labels = {0, 6, 3, 3, 1}};
    float dz[X_ROWS * X_CLASSES];

    rng_init(&r, 15, 0);
    c.z = random_floats(&r, X_ROWS * X_CLASSES, -3, 3);
    xent_loss(&c);
    memcpy(dz, c.d, sizeof dz);
    assert_not_trivial("logits", check_gradient("logits", c.z, dz, X_ROWS * X_CLASSES, xent_loss, &c));
    free(c.z);
}

/* ---- the whole model: every tensor, through residuals, blocks and the output layer ---- */
static const struct gpt_config tiny = {.vocab = 7, .ctx = 5, .layers = 2, .d = 8, .heads = 2};
enum { M_BATCH = 2 };

static double model_loss(void *p)
{
    struct gpt *m = p;
    gpt_forward(m, M_BATCH);
    return gpt_loss(m, M_BATCH);
}

static void make_model(struct gpt *m, uint64_t seed)
{
    struct rng r;
    gpt_build(m, &tiny, M_BATCH, seed);
    /* away from the initialization (gains 1, biases 0, small weights), so that every path
     * carries a gradient of its own size */
    rng_init(&r, seed, 99);
    for (size_t i = 0; i < m->arena.nparams; i++)
        m->arena.params[i] += rng_uniform(&r, -0.4f, 0.4f);
    for (int i = 0; i < M_BATCH * tiny.ctx; i++) {
        m->tok[i] = (int)rng_below(&r, (uint32_t)tiny.vocab);
        m->tgt[i] = (int)rng_below(&r, (uint32_t)tiny.vocab);
    }
}

static void test_model_backward(void **state)
{
    struct gpt m;
    const struct arena *a = &m.arena;
    double largest = 0.0;

    make_model(&m, 3);
    model_loss(&m);
    gpt_backward(&m, M_BATCH);
    assert_int_equal(a->ntensors, 3 + 12 * tiny.layers + 2);
    for (int t = 0; t < a->ntensors; t++) {
        /* every element of the small tensors, a spread of the large ones; the forward passes
         * of the finite differences leave the gradient arena as backward made it */
        size_t n = a->tensors[t].count, stride = n > 40 ? n / 17 : 1;
        float *w = arena_param(a, t);
        const float *g = arena_grad(a, t);
        double tensor_largest = 0.0;
        for (size_t i = 0; i < n; i += stride) {
            float keep = w[i];
            double up, down, fd;
            w[i] = keep + H;
            up = model_loss(&m);
            w[i] = keep - H;
            down = model_loss(&m);
            w[i] = keep;
            fd = (up - down) / (2.0 * H);
            if (fabs(fd - g[i]) > MODEL_ABS_TOL + MODEL_REL_TOL * fabs(g[i]))
                fail_msg("%s[%zu]: analytic %.6g, finite differences %.6g", a->tensors[t].name, i, (double)g[i], fd);
            if (fabs(g[i]) > tensor_largest)
                tensor_largest = fabs(g[i]);
        }
        if (tensor_largest == 0.0)
            fail_msg("%s: no gradient at all", a->tensors[t].name);
        if (tensor_largest > largest)
            largest = tensor_largest;
    }
    assert_not_trivial("model", largest);
    gpt_free(&m);
}

/* ---- a seed repeats its bits ---- */
static void test_model_repeats(void **state)
{
    struct gpt a, b;
    double la, lb;

    make_model(&a, 5);
    make_model(&b, 5);
    assert_memory_equal(a.arena.params, b.arena.params, a.arena.nparams * sizeof(float));
    la = model_loss(&a);
    gpt_backward(&a, M_BATCH);
    lb = model_loss(&b);
    gpt_backward(&b, M_BATCH);
    assert_memory_equal(&la, &lb, sizeof la);
    assert_memory_equal(a.arena.grads, b.arena.grads, a.arena.nparams * sizeof(float));
    gpt_free(&b);
    make_model(&b, 6);
    assert_true(memcmp(a.arena.params, b.arena.params, a.arena.nparams * sizeof(float)) != 0);
    gpt_free(&a);
    gpt_free(&b);
}

static void test_config_errors(void **state)
{
    struct gpt_config c = tiny;
    assert_null(gpt_config_error(&c));
    c.heads = 3;
    assert_non_null(gpt_config_error(&c));
    c = tiny;
    c.layers = GPT_MAX_LAYERS + 1;
    assert_non_null(gpt_config_error(&c));
    c = tiny;
    c.ctx = GPT_MAX_CONTEXT + 1;
    assert_non_null(gpt_config_error(&c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedding_backward), cmocka_unit_test(test_layernorm_backward),
        cmocka_unit_test(test_gelu_backward),      cmocka_unit_test(test_attention_backward),
        cmocka_unit_test(test_loss_backward),      cmocka_unit_test(test_model_backward),
        cmocka_unit_test(test_model_repeats),      cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
