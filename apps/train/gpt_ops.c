/* gpt_ops.c: embeddings, LayerNorm, GELU and causal multi-head self-attention on the host, forward and backward, in plain C with fixed summation orders. */
#include "gpt_ops.h"

#include <math.h>
#include <string.h>

void embed_forward(float *x, const int *tok, const float *wte, const float *wpe, int n, int ctx, int d)
{
    for (int r = 0; r < n; r++) {
        const float *e = wte + (size_t)tok[r] * d, *p = wpe + (size_t)(r % ctx) * d;
        float *o = x + (size_t)r * d;
        for (int c = 0; c < d; c++)
            o[c] = e[c] + p[c];
    }
}

void embed_backward(float *dwte, float *dwpe, const float *dx, const int *tok, int n, int ctx, int d, int vocab)
{
    memset(dwte, 0, (size_t)vocab * d * sizeof(float));
    memset(dwpe, 0, (size_t)ctx * d * sizeof(float));
    for (int r = 0; r < n; r++) {
        const float *g = dx + (size_t)r * d;
        float *e = dwte + (size_t)tok[r] * d, *p = dwpe + (size_t)(r % ctx) * d;
        for (int c = 0; c < d; c++) {
            e[c] += g[c];
            p[c] += g[c];
        }
    }
}

void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *g, const float *b, int n, int d)
{
    for (int r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * d;
        float *yr = y + (size_t)r * d, m = 0.0f, v = 0.0f, s;
        for (int c = 0; c < d; c++)
            m += xr[c];
        m /= (float)d;
        for (int c = 0; c < d; c++)
            v += (xr[c] - m) * (xr[c] - m);
        v /= (float)d;
        s = 1.0f / sqrtf(v + LN_EPS);
        for (int c = 0; c < d; c++)
            yr[c] = (xr[c] - m) * s * g[c] + b[c];
        mean[r] = m;
        rstd[r] = s;
    }
}

void layernorm_backward(float *dx, float *dg, float *db, const float *dy, const float *x, const float *mean,
                        const float *rstd, const float *g, int n, int d)
{
    memset(dg, 0, (size_t)d * sizeof(float));
    memset(db, 0, (size_t)d * sizeof(float));
    for (int r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * d, *dyr = dy + (size_t)r * d;
        float *dxr = dx + (size_t)r * d, m = mean[r], s = rstd[r], sum_dxhat = 0.0f, sum_dxhat_xhat = 0.0f;
        for (int c = 0; c < d; c++) {
            float xhat = (xr[c] - m) * s, dxhat = dyr[c] * g[c];
            dg[c] += dyr[c] * xhat;
            db[c] += dyr[c];
            sum_dxhat += dxhat;
            sum_dxhat_xhat += dxhat * xhat;
        }
        sum_dxhat /= (float)d;
        sum_dxhat_xhat /= (float)d;
        for (int c = 0; c < d; c++) {
            float xhat = (xr[c] - m) * s, dxhat = dyr[c] * g[c];
            dxr[c] += s * (dxhat - sum_dxhat - xhat * sum_dxhat_xhat);
        }
    }
}

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_C 0.044715f

/* tanh(u) = 1 - 2 / (e^2u + 1), through expf: several times faster than tanhf here, and
 * within a few units of 1e-7 of it (e^2u overflows to inf for large u: 1 exactly). */
static inline float fast_tanh(float u) { return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f); }

void gelu_forward(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + fast_tanh(GELU_K * (v + GELU_C * v * v * v)));
    }
}

void gelu_backward(float *dx, const float *dy, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i], t = fast_tanh(GELU_K * (v + GELU_C * v * v * v));
        float dt = (1.0f - t * t) * GELU_K * (1.0f + 3.0f * GELU_C * v * v);
        dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * dt);
    }
}

void attention_forward(float *out, float *probs, const float *qkv, int n, int ctx, int d, int heads)
{
    int hd = d / heads, stride = 3 * d;
    float scale = 1.0f / sqrtf((float)hd);

    for (int s0 = 0; s0 < n; s0 += ctx)
        for (int h = 0; h < heads; h++) {
            float *p = probs + ((size_t)(s0 / ctx) * heads + h) * ctx * ctx;
            for (int i = 0; i < ctx; i++) {
                const float *q = qkv + (size_t)(s0 + i) * stride + h * hd;
                float *pi = p + (size_t)i * ctx, *o = out + (size_t)(s0 + i) * d + h * hd, top = -INFINITY, sum = 0.0f;
                for (int j = 0; j <= i; j++) {
                    const float *k = qkv + (size_t)(s0 + j) * stride + d + h * hd;
                    float dot = 0.0f;
                    for (int c = 0; c < hd; c++)
                        dot += q[c] * k[c];
                    pi[j] = dot * scale;
                    if (pi[j] > top)
                        top = pi[j];
                }
                for (int j = 0; j <= i; j++) {
                    pi[j] = expf(pi[j] - top);
                    sum += pi[j];
                }
                for (int j = 0; j <= i; j++)
                    pi[j] /= sum;
                for (int j = i + 1; j < ctx; j++)
                    pi[j] = 0.0f;
                for (int c = 0; c < hd; c++)
                    o[c] = 0.0f;
                for (int j = 0; j <= i; j++) {
                    const float *v = qkv + (size_t)(s0 + j) * stride + 2 * d + h * hd;
                    for (int c = 0; c < hd; c++)
                        o[c] += pi[j] * v[c];
                }
            }
        }
}

void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *probs, int n, int ctx, int d,
                        int heads)
{
    int hd = d / heads, stride = 3 * d;
    float scale = 1.0f / sqrtf((float)hd), dp[ctx];

    memset(dqkv, 0, (size_t)n * stride * sizeof(float));
    for (int s0 = 0; s0 < n; s0 += ctx)
        for (int h = 0; h < heads; h++) {
            const float *p = probs + ((size_t)(s0 / ctx) * heads + h) * ctx * ctx;
            for (int i = 0; i < ctx; i++) {
                const float *pi = p + (size_t)i * ctx, *doi = dout + (size_t)(s0 + i) * d + h * hd;
                const float *q = qkv + (size_t)(s0 + i) * stride + h * hd;
                float *dq = dqkv + (size_t)(s0 + i) * stride + h * hd, dot_pd = 0.0f;
                /* dP[j] = dout_i . v_j; dv_j += P[i][j] dout_i */
                for (int j = 0; j <= i; j++) {
                    const float *v = qkv + (size_t)(s0 + j) * stride + 2 * d + h * hd;
                    float *dv = dqkv + (size_t)(s0 + j) * stride + 2 * d + h * hd, dot = 0.0f;
                    for (int c = 0; c < hd; c++) {
                        dot += doi[c] * v[c];
                        dv[c] += pi[j] * doi[c];
                    }
                    dp[j] = dot;
                    dot_pd += pi[j] * dot;
                }
                /* through the softmax: dS[j] = P[i][j] (dP[j] - sum_k P[i][k] dP[k]), then the scaled product */
                for (int j = 0; j <= i; j++) {
                    const float *k = qkv + (size_t)(s0 + j) * stride + d + h * hd;
                    float *dk = dqkv + (size_t)(s0 + j) * stride + d + h * hd, ds = pi[j] * (dp[j] - dot_pd) * scale;
                    for (int c = 0; c < hd; c++) {
                        dq[c] += ds * k[c];
                        dk[c] += ds * q[c];
                    }
                }
            }
        }
}
