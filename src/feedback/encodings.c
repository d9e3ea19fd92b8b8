/* encodings.c: error feedback at the two encodings of a call: the residual added before, what the encoding took kept after. */
#include "feedback/encodings.h"

#include "call/device_steps.h"
#include "feedback/arithmetic.h"
#include "core/packed_layout.h"
#include "feedback/job_store.h"
#include "state/stats.h"

/* Elements decoded at a time to take a residual: a multiple of every packing group (an MX
 * block's 32 included), small enough to stay in cache. */
enum { TAKE_SLICE = 1024 };

static apsmpi_residual_key key_of(const apsmpi_call *c, size_t first, enum apsmpi_residual_role role)
{
    apsmpi_residual_key k = {.comm = (uint64_t)(uintptr_t)c->origin.comm,
                             .count = c->origin.count,
                             .addr = (uint64_t)(uintptr_t)c->origin.buf,
                             .offset = c->origin.offset + first,
                             .role = role};
    return k;
}

/* r[0..n) = x[0..n) minus the decoding of the n elements at codes (element 0 at buffer index
 * index0), slice by slice; adds the new residual's sum of squares to *res_sq. x may be r. */
static void take(const apsmpi_call *c, const float *x, const void *codes, size_t n, size_t index0, apsmpi_scales sc,
                 float *r, double *res_sq)
{
    const apsmpi_format *f = c->f;
    float decoded[TAKE_SLICE];

    for (size_t at = 0; at < n; at += TAKE_SLICE) {
        size_t len = n - at < TAKE_SLICE ? n - at : TAKE_SLICE;
        apsmpi_decode(c->codec, (const char *)codes + apsmpi_packed_bytes(f, at), len, index0 + at, sc, decoded);
        apsmpi_feedback_take(x + at, decoded, len, r + at, res_sq);
    }
}

void apsmpi_feedback_contribution_begin(apsmpi_call *c)
{
    apsmpi_residual_store *s = apsmpi_feedback_store();
    apsmpi_residual_key k;
    apsmpi_residual *r;
    int fresh;

    if (s == NULL || c->n == 0)
        return;
    if (apsmpi_device_input(c)) {
        apsmpi_feedback_note_device_input();
        return;
    }
    k = key_of(c, 0, APSMPI_RESIDUAL_CONTRIBUTION);
    r = apsmpi_residual_get(s, &k, c->n, &fresh);
    if (r == NULL)
        return;
    c->feedback.residual = r;
    c->feedback.in_sq = c->feedback.res_sq = 0;
    apsmpi_feedback_add(c->in, r->r, c->n, r->r, &c->feedback.in_sq);
    c->in = r->r;
}

void apsmpi_feedback_contribution_taken(apsmpi_call *c, size_t first, size_t n, const void *out, apsmpi_scales sc)
{
    apsmpi_residual *r = c->feedback.residual;

    if (r != NULL)
        take(c, r->r + first, out, n, first, sc, r->r + first, &c->feedback.res_sq);
}

void apsmpi_feedback_contribution_end(apsmpi_call *c, int keep)
{
    if (c->feedback.residual == NULL)
        return;
    apsmpi_residual_put(apsmpi_feedback_store(), c->feedback.residual, c->feedback.res_sq, c->feedback.in_sq, keep);
    c->feedback.residual = NULL;
}

const float *apsmpi_feedback_sum_begin(apsmpi_call *c, const float *sum, size_t n, size_t first,
                                       enum apsmpi_residual_role role, apsmpi_sum_feedback *fb)
{
    apsmpi_residual_store *s = apsmpi_feedback_store();
    apsmpi_residual_key k = key_of(c, first, role);
    int fresh;

    fb->residual = NULL;
    fb->in_sq = 0;
    if (s == NULL || n == 0 || (fb->residual = apsmpi_residual_get(s, &k, n, &fresh)) == NULL)
        return sum;
    apsmpi_feedback_add(sum, fb->residual->r, n, fb->residual->r, &fb->in_sq);
    return fb->residual->r;
}

void apsmpi_feedback_sum_taken(apsmpi_call *c, apsmpi_sum_feedback *fb, const void *codes, size_t n, size_t index0,
                               apsmpi_scales sc)
{
    double res_sq = 0;

    if (fb->residual == NULL)
        return;
    take(c, fb->residual->r, codes, n, index0, sc, fb->residual->r, &res_sq);
    apsmpi_residual_put(apsmpi_feedback_store(), fb->residual, res_sq, fb->in_sq, 1);
    fb->residual = NULL;
}
