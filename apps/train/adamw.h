/* adamw.h: AdamW over a parameter arena (bias-corrected, decoupled weight decay on the tensors that take it), its learning-rate schedule, and clipping by the global gradient norm. */
#ifndef TRAIN_ADAMW_H
#define TRAIN_ADAMW_H

#include "arena.h"

struct adamw {
    const struct backend *be;
    float beta1, beta2, eps, weight_decay;
    long t;       /* steps taken */
    float *m, *v; /* first and second moments, nparams floats each (host memory) */
};

/* Moments zeroed; the usual constants (beta1 0.9, beta2 0.99, eps 1e-8). */
void adamw_init(struct adamw *o, const struct arena *a, float weight_decay);
void adamw_free(struct adamw *o);

/* The L2 norm of scale * the gradient arena (summed in double, in arena order). */
double grad_norm(const struct arena *a, float scale);
/* scale * the clipping factor: the gradient, times scale, has a norm of at most max_norm
 * (max_norm 0: no clipping). norm is grad_norm(a, scale). */
float clipped_scale(double norm, float scale, float max_norm);

/* One step with the gradient g = grad_scale * the gradient arena:
 *   t += 1; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 *   w -= lr wd w (the tensors with decay only); w -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps). */
void adamw_step(struct adamw *o, const struct arena *a, float lr, float grad_scale);

/* Linear warm-up to lr over warmup steps (step 0 gets lr / warmup), then cosine decay to
 * lr / 10 at step steps - 1; step counts from 0. */
float lr_at(long step, long steps, long warmup, float lr);

#endif
