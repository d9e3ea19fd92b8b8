/* adamw.c: the AdamW update, the warm-up and cosine learning-rate schedule, and global-norm gradient clipping, on host arenas. */
#include "adamw.h"

#include <math.h>

void adamw_init(struct adamw *o, const struct arena *a, float weight_decay)
{
    o->be = a->be;
    o->beta1 = 0.9f;
    o->beta2 = 0.99f;
    o->eps = 1e-8f;
    o->weight_decay = weight_decay;
    o->t = 0;
    o->m = a->be->alloc(a->nparams * sizeof(float));
    o->v = a->be->alloc(a->nparams * sizeof(float));
}

void adamw_free(struct adamw *o)
{
    o->be->release(o->m);
    o->be->release(o->v);
    o->m = o->v = NULL;
}

double grad_norm(const struct arena *a, float scale)
{
    double sum = 0.0;
    for (size_t i = 0; i < a->nparams; i++) {
        double g = (double)(scale * a->grads[i]);
        sum += g * g;
    }
    return sqrt(sum);
}

float clipped_scale(double norm, float scale, float max_norm)
{
    if (max_norm > 0.0f && norm > max_norm)
        return (float)(scale * (max_norm / norm));
    return scale;
}

void adamw_step(struct adamw *o, const struct arena *a, float lr, float grad_scale)
{
    float b1 = o->beta1, b2 = o->beta2;
    float c1, c2;

    o->t++;
    c1 = 1.0f - powf(b1, (float)o->t);
    c2 = 1.0f - powf(b2, (float)o->t);
    for (int t = 0; t < a->ntensors; t++) {
        size_t lo = a->tensors[t].offset, hi = lo + a->tensors[t].count;
        float decay = a->tensors[t].decay ? 1.0f - lr * o->weight_decay : 1.0f;
        for (size_t i = lo; i < hi; i++) {
            float g = grad_scale * a->grads[i], mhat, vhat;
            o->m[i] = b1 * o->m[i] + (1.0f - b1) * g;
            o->v[i] = b2 * o->v[i] + (1.0f - b2) * g * g;
            mhat = o->m[i] / c1;
            vhat = o->v[i] / c2;
            a->params[i] = a->params[i] * decay - lr * mhat / (sqrtf(vhat) + o->eps);
        }
    }
}

float lr_at(long step, long steps, long warmup, float lr)
{
    double progress;
    if (step < warmup)
        return lr * (float)(step + 1) / (float)warmup;
    if (steps - 1 <= warmup)
        return lr;
    progress = (double)(step - warmup) / (double)(steps - 1 - warmup);
    return (float)(lr * (0.1 + 0.9 * 0.5 * (1.0 + cos(3.14159265358979323846 * progress))));
}
