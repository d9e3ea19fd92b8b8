/* gpt.c: builds the transformer (arena layout, initialization, activations) and runs its forward and backward passes. */
#include "gpt.h"

#include "gpt_ops.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define RNG_STREAM_INIT 1
#define INIT_STD 0.02f

const char *gpt_config_error(const struct gpt_config *c)
{
    if (c->layers < 1 || c->layers > GPT_MAX_LAYERS)
        return "the layers must be 1 to 4";
    if (c->ctx < 1 || c->ctx > GPT_MAX_CONTEXT)
        return "the context must be 1 to 1024 characters";
    if (c->d < 1 || c->heads < 1 || c->d % c->heads != 0)
        return "d_model must be a positive multiple of the heads";
    if (c->d > 4096 || c->vocab < 2)
        return "d_model must be at most 4096, the vocabulary at least 2";
    return NULL;
}

/* The tensors in the order backpropagation finishes them: the output projection, the
 * final LayerNorm, the blocks from the last (MLP before attention, bias before weights,
 * as each step of the backward pass completes them), the embeddings. */
static void declare_tensors(struct gpt *m)
{
    struct arena *a = &m->arena;
    int d = m->cfg.d;

    m->head_w = arena_add(a, (size_t)d * m->cfg.vocab, true, "head.w");
    m->lnf_b = arena_add(a, d, false, "lnf.b");
    m->lnf_g = arena_add(a, d, false, "lnf.g");
    for (int l = m->cfg.layers - 1; l >= 0; l--) {
        struct gpt_block *b = &m->blocks[l];
        b->fc2_b = arena_add(a, d, false, "block%d.fc2.b", l);
        b->fc2_w = arena_add(a, (size_t)4 * d * d, true, "block%d.fc2.w", l);
        b->fc_b = arena_add(a, (size_t)4 * d, false, "block%d.fc.b", l);
        b->fc_w = arena_add(a, (size_t)d * 4 * d, true, "block%d.fc.w", l);
        b->ln2_b = arena_add(a, d, false, "block%d.ln2.b", l);
        b->ln2_g = arena_add(a, d, false, "block%d.ln2.g", l);
        b->proj_b = arena_add(a, d, false, "block%d.attn.proj.b", l);
        b->proj_w = arena_add(a, (size_t)d * d, true, "block%d.attn.proj.w", l);
        b->qkv_b = arena_add(a, (size_t)3 * d, false, "block%d.attn.qkv.b", l);
        b->qkv_w = arena_add(a, (size_t)d * 3 * d, true, "block%d.attn.qkv.w", l);
        b->ln1_b = arena_add(a, d, false, "block%d.ln1.b", l);
        b->ln1_g = arena_add(a, d, false, "block%d.ln1.g", l);
    }
    m->wpe = arena_add(a, (size_t)m->cfg.ctx * d, true, "wpe");
    m->wte = arena_add(a, (size_t)m->cfg.vocab * d, true, "wte");
}

static void fill_normal(const struct gpt *m, int t, struct rng *r, float std)
{
    float *w = arena_param(&m->arena, t);
    for (size_t i = 0; i < m->arena.tensors[t].count; i++)
        w[i] = std * rng_normal(r);
}

static void fill_ones(const struct gpt *m, int t)
{
    float *w = arena_param(&m->arena, t);
    for (size_t i = 0; i < m->arena.tensors[t].count; i++)
        w[i] = 1.0f;
}

/* From the input on, whatever the arena order; biases stay 0. */
static void initialize(struct gpt *m, uint64_t seed)
{
    struct rng r;
    float residual_std = INIT_STD / sqrtf(2.0f * (float)m->cfg.layers);

    rng_init(&r, seed, RNG_STREAM_INIT);
    fill_normal(m, m->wte, &r, INIT_STD);
    fill_normal(m, m->wpe, &r, INIT_STD);
    for (int l = 0; l < m->cfg.layers; l++) {
        const struct gpt_block *b = &m->blocks[l];
        fill_ones(m, b->ln1_g);
        fill_normal(m, b->qkv_w, &r, INIT_STD);
        fill_normal(m, b->proj_w, &r, residual_std);
        fill_ones(m, b->ln2_g);
        fill_normal(m, b->fc_w, &r, INIT_STD);
        fill_normal(m, b->fc2_w, &r, residual_std);
    }
    fill_ones(m, m->lnf_g);
    fill_normal(m, m->head_w, &r, INIT_STD);
}

static float *floats(const struct gpt *m, size_t count) { return m->be->alloc(count * sizeof(float)); }

static void alloc_activations(struct gpt *m)
{
    size_t rows = (size_t)m->capacity * m->cfg.ctx, d = (size_t)m->cfg.d;
    size_t probs = (size_t)m->capacity * m->cfg.heads * m->cfg.ctx * m->cfg.ctx;

    m->tok = m->be->alloc(rows * sizeof(int));
    m->tgt = m->be->alloc(rows * sizeof(int));
    m->x0 = floats(m, rows * d);
    for (int l = 0; l < m->cfg.layers; l++) {
        struct gpt_block *b = &m->blocks[l];
        b->x = l ? m->blocks[l - 1].out : m->x0;
        b->h1 = floats(m, rows * d);
        b->mean1 = floats(m, rows);
        b->rstd1 = floats(m, rows);
        b->qkv = floats(m, rows * 3 * d);
        b->probs = floats(m, probs);
        b->att = floats(m, rows * d);
        b->mid = floats(m, rows * d);
        b->h2 = floats(m, rows * d);
        b->mean2 = floats(m, rows);
        b->rstd2 = floats(m, rows);
        b->f = floats(m, rows * 4 * d);
        b->g = floats(m, rows * 4 * d);
        b->out = floats(m, rows * d);
    }
    m->hf = floats(m, rows * d);
    m->meanf = floats(m, rows);
    m->rstdf = floats(m, rows);
    m->logits = floats(m, rows * m->cfg.vocab);
    m->dlogits = floats(m, rows * m->cfg.vocab);
    m->dx = floats(m, rows * d);
    m->dh = floats(m, rows * d);
    m->dqkv = floats(m, rows * 3 * d);
    m->dhidden = floats(m, rows * 4 * d);
}

void gpt_build(struct gpt *m, const struct gpt_config *cfg, int capacity, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->be = &backend_cpu;
    m->capacity = capacity;
    arena_init(&m->arena, m->be);
    declare_tensors(m);
    arena_alloc(&m->arena);
    initialize(m, seed);
    alloc_activations(m);
}

void gpt_free(struct gpt *m)
{
    const struct backend *be = m->be;
    for (int l = 0; l < m->cfg.layers; l++) {
        struct gpt_block *b = &m->blocks[l];
        float *bufs[] = {b->h1, b->mean1, b->rstd1, b->qkv, b->probs, b->att, b->mid,
                         b->h2, b->mean2, b->rstd2, b->f,   b->g,     b->out};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            be->release(bufs[i]);
    }
    {
        void *bufs[] = {m->tok,    m->tgt,     m->x0, m->hf, m->meanf, m->rstdf,
                        m->logits, m->dlogits, m->dx, m->dh, m->dqkv,  m->dhidden};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            be->release(bufs[i]);
    }
    arena_free(&m->arena);
}

/* y (rows x out) = x (rows x in) W (in x out) + bias, added to y when accumulate. */
static void linear(const struct gpt *m, float *y, const float *x, int t_w, int t_b, int rows, int in, int out,
                   bool accumulate)
{
    m->be->sgemm(false, false, rows, out, in, 1.0f, x, in, arena_param(&m->arena, t_w), out, accumulate ? 1.0f : 0.0f,
                 y, out);
    m->be->add_bias(y, arena_param(&m->arena, t_b), rows, out);
}

static void block_forward(const struct gpt *m, struct gpt_block *b, int rows)
{
    const struct arena *a = &m->arena;
    int d = m->cfg.d;

    layernorm_forward(b->h1, b->mean1, b->rstd1, b->x, arena_param(a, b->ln1_g), arena_param(a, b->ln1_b), rows, d);
    linear(m, b->qkv, b->h1, b->qkv_w, b->qkv_b, rows, d, 3 * d, false);
    attention_forward(b->att, b->probs, b->qkv, rows, m->cfg.ctx, d, m->cfg.heads);
    memcpy(b->mid, b->x, (size_t)rows * d * sizeof(float));
    linear(m, b->mid, b->att, b->proj_w, b->proj_b, rows, d, d, true);
    layernorm_forward(b->h2, b->mean2, b->rstd2, b->mid, arena_param(a, b->ln2_g), arena_param(a, b->ln2_b), rows, d);
    linear(m, b->f, b->h2, b->fc_w, b->fc_b, rows, d, 4 * d, false);
    gelu_forward(b->g, b->f, (size_t)rows * 4 * d);
    memcpy(b->out, b->mid, (size_t)rows * d * sizeof(float));
    linear(m, b->out, b->g, b->fc2_w, b->fc2_b, rows, 4 * d, d, true);
}

const float *gpt_forward(struct gpt *m, int batch)
{
    const struct arena *a = &m->arena;
    int rows = batch * m->cfg.ctx, d = m->cfg.d, last = m->cfg.layers - 1;

    embed_forward(m->x0, m->tok, arena_param(a, m->wte), arena_param(a, m->wpe), rows, m->cfg.ctx, d);
    for (int l = 0; l <= last; l++)
        block_forward(m, &m->blocks[l], rows);
    layernorm_forward(m->hf, m->meanf, m->rstdf, m->blocks[last].out, arena_param(a, m->lnf_g),
                      arena_param(a, m->lnf_b), rows, d);
    m->be->sgemm(false, false, rows, m->cfg.vocab, d, 1.0f, m->hf, d, arena_param(a, m->head_w), m->cfg.vocab, 0.0f,
                 m->logits, m->cfg.vocab);
    return m->logits;
}

double gpt_loss(struct gpt *m, int batch)
{
    return m->be->softmax_xent(m->dlogits, m->logits, m->tgt, batch * m->cfg.ctx, m->cfg.vocab);
}

/* Backward through y = x W + bias: dW = x^T dy, dbias = column sums of dy, dx = dy W^T
 * (overwritten). */
static void linear_backward(const struct gpt *m, float *dx, const float *dy, const float *x, int t_w, int t_b, int rows,
                            int in, int out)
{
    const struct arena *a = &m->arena;
    m->be->sgemm(true, false, in, out, rows, 1.0f, x, in, dy, out, 0.0f, arena_grad(a, t_w), out);
    m->be->sum_rows(arena_grad(a, t_b), dy, rows, out);
    m->be->sgemm(false, true, rows, in, out, 1.0f, dy, out, arena_param(a, t_w), out, 0.0f, dx, in);
}

/* m->dx holds the gradient at the block's output; leaves the gradient at its input. */
static void block_backward(const struct gpt *m, const struct gpt_block *b, int rows)
{
    const struct arena *a = &m->arena;
    int d = m->cfg.d;

    /* out = mid + fc2(gelu(fc(LN2(mid)))) */
    linear_backward(m, m->dhidden, m->dx, b->g, b->fc2_w, b->fc2_b, rows, 4 * d, d);
    gelu_backward(m->dhidden, m->dhidden, b->f, (size_t)rows * 4 * d);
    linear_backward(m, m->dh, m->dhidden, b->h2, b->fc_w, b->fc_b, rows, d, 4 * d);
    layernorm_backward(m->dx, arena_grad(a, b->ln2_g), arena_grad(a, b->ln2_b), m->dh, b->mid, b->mean2, b->rstd2,
                       arena_param(a, b->ln2_g), rows, d);
    /* mid = x + proj(attention(qkv(LN1(x)))) */
    linear_backward(m, m->dh, m->dx, b->att, b->proj_w, b->proj_b, rows, d, d);
    attention_backward(m->dqkv, m->dh, b->qkv, b->probs, rows, m->cfg.ctx, d, m->cfg.heads);
    linear_backward(m, m->dh, m->dqkv, b->h1, b->qkv_w, b->qkv_b, rows, d, 3 * d);
    layernorm_backward(m->dx, arena_grad(a, b->ln1_g), arena_grad(a, b->ln1_b), m->dh, b->x, b->mean1, b->rstd1,
                       arena_param(a, b->ln1_g), rows, d);
}

void gpt_backward(struct gpt *m, int batch)
{
    const struct arena *a = &m->arena;
    int rows = batch * m->cfg.ctx, d = m->cfg.d, v = m->cfg.vocab, last = m->cfg.layers - 1;

    m->be->sgemm(true, false, d, v, rows, 1.0f, m->hf, d, m->dlogits, v, 0.0f, arena_grad(a, m->head_w), v);
    m->be->sgemm(false, true, rows, d, v, 1.0f, m->dlogits, v, arena_param(a, m->head_w), v, 0.0f, m->dh, d);
    memset(m->dx, 0, (size_t)rows * d * sizeof(float));
    layernorm_backward(m->dx, arena_grad(a, m->lnf_g), arena_grad(a, m->lnf_b), m->dh, m->blocks[last].out, m->meanf,
                       m->rstdf, arena_param(a, m->lnf_g), rows, d);
    for (int l = last; l >= 0; l--)
        block_backward(m, &m->blocks[l], rows);
    embed_backward(arena_grad(a, m->wte), arena_grad(a, m->wpe), m->dx, m->tok, rows, m->cfg.ctx, d, m->cfg.vocab);
}
