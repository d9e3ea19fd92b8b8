/* gpt.h: a decoder-only character-level transformer (GPT-style, pre-LayerNorm) on the host, its parameters in one arena. */
#ifndef TRAIN_GPT_H
#define TRAIN_GPT_H

#include "arena.h"
#include "backend.h"

#include <stdint.h>

#define GPT_MAX_LAYERS 4
#define GPT_MAX_CONTEXT 1024

/* Token and position embeddings; layers blocks of x += attention(LN1(x)), x += MLP(LN2(x))
 * with causal multi-head self-attention (heads heads, biased q/k/v and output projections)
 * and a GELU MLP of 4 d; a final LayerNorm; an output projection of its own (not tied to
 * the token embedding, no bias) to vocab logits; softmax cross-entropy. */
struct gpt_config {
    int vocab, ctx, layers, d, heads;
};

/* One block's parameter tensors (arena indices) and activations (capacity x ctx rows). */
struct gpt_block {
    int ln1_g, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_g, ln2_b, fc_w, fc_b, fc2_w, fc2_b;
    const float *x;                    /* the block's input: the embeddings or the previous block's out */
    float *h1, *mean1, *rstd1, *qkv;   /* LN1 and the q, k, v of every row */
    float *probs, *att, *mid;          /* attention probabilities, heads' outputs, x + attention */
    float *h2, *mean2, *rstd2, *f, *g; /* LN2, the MLP's hidden layer before and after GELU */
    float *out;                        /* mid + MLP */
};

struct gpt {
    struct gpt_config cfg;
    const struct backend *be; /* the host backend: its sgemm, bias and loss primitives */
    struct arena arena;
    int capacity; /* sequences per forward pass */
    int wte, wpe, lnf_g, lnf_b, head_w;
    struct gpt_block blocks[GPT_MAX_LAYERS];
    int *tok, *tgt;                  /* the batch: input and next character of every row */
    float *x0, *hf, *meanf, *rstdf;  /* embeddings; the final LayerNorm */
    float *logits, *dlogits;         /* rows x vocab */
    float *dx, *dh, *dqkv, *dhidden; /* backward scratch: rows x d, d, 3d, 4d */
};

/* Checks cfg: NULL if it can be built, else why not (one line). */
const char *gpt_config_error(const struct gpt_config *cfg);
/* Lays out and initializes the model for up to capacity sequences from seed: weights
 * normal(0, 0.02) (the residual projections 0.02 / sqrt(2 layers)), biases 0, gains 1. */
void gpt_build(struct gpt *m, const struct gpt_config *cfg, int capacity, uint64_t seed);
void gpt_free(struct gpt *m);
/* The logits (batch x ctx rows of vocab) of the sequences in m->tok. */
const float *gpt_forward(struct gpt *m, int batch);
/* Softmax cross-entropy of the last forward's logits against m->tgt: the summed loss,
 * and m->dlogits for backward. */
double gpt_loss(struct gpt *m, int batch);
/* The gradients of the summed loss, from m->dlogits, into the gradient arena. */
void gpt_backward(struct gpt *m, int batch);

#endif
