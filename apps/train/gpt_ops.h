/* gpt_ops.h: the transformer's own steps on the host, forward and backward: embeddings, LayerNorm, GELU, causal multi-head self-attention. */
#ifndef TRAIN_GPT_OPS_H
#define TRAIN_GPT_OPS_H

#include <stddef.h>

/* Rows are tokens: n = sequences x context, each row d floats; row r is position r % ctx
 * of sequence r / ctx. Every "backward" that produces a parameter gradient overwrites it
 * (summed over the rows in row order); the gradient of an input is added (+=) to dx, since
 * the residual stream sums the gradients of its branches. Sums run in a fixed order, so
 * equal inputs give equal bits. */

/* x[r] = wte[tok[r]] + wpe[r % ctx]. */
void embed_forward(float *x, const int *tok, const float *wte, const float *wpe, int n, int ctx, int d);
/* dwte[v] = sum of dx[r] over the rows with tok[r] = v; dwpe[p] = sum over the rows at
 * position p (both overwritten; vocab rows of wte). */
void embed_backward(float *dwte, float *dwpe, const float *dx, const int *tok, int n, int ctx, int d, int vocab);

/* y = (x - mean) / sqrt(var + LN_EPS) * g + b per row; mean and rstd (1/sqrt(var + eps))
 * of every row are kept for the backward step. */
#define LN_EPS 1e-5f
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *g, const float *b, int n,
                       int d);
/* dg, db overwritten; dx += the gradient through the normalization. */
void layernorm_backward(float *dx, float *dg, float *db, const float *dy, const float *x, const float *mean,
                        const float *rstd, const float *g, int n, int d);

/* GELU, tanh form (GPT-2): y = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
void gelu_forward(float *y, const float *x, size_t n);
/* dx = dy gelu'(x) (overwritten: the GELU's input feeds nothing else). */
void gelu_backward(float *dx, const float *dy, const float *x, size_t n);

/* Causal self-attention of heads heads over qkv (n x 3d: the queries, keys and values of
 * every row, head h in columns h*hd .. of each third, hd = d / heads): out (n x d) holds
 * each head's softmax(q k^T / sqrt(hd)) v over the positions up to its own; probs (per
 * sequence and head a ctx x ctx matrix, zero above the diagonal) is kept for backward. */
void attention_forward(float *out, float *probs, const float *qkv, int n, int ctx, int d, int heads);
/* dqkv (n x 3d) overwritten from dout, qkv and probs. */
void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *probs, int n, int ctx, int d,
                        int heads);

#endif
