/* width_controller.c: APSMPI_FORMAT=auto's measure (flushed share, depth histogram), its decision per bucket, and the LRU store of the buckets' states. */
#include "core/width_controller.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int apsmpi_ladder_parse(const char *list, apsmpi_ladder *l, char *why, size_t whylen)
{
    char name[64];
    const char *p = list;

    memset(l, 0, sizeof *l);
    for (;;) {
        size_t len = strcspn(p, ",");
        apsmpi_format *f = &l->format[l->rungs];
        if (l->rungs == APSMPI_MAX_RUNGS - 1) {
            snprintf(why, whylen, "more than %d formats", APSMPI_MAX_RUNGS - 1);
            return -1;
        }
        if (len == 0 || len >= sizeof name) {
            snprintf(why, whylen, "an empty or too long name");
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (apsmpi_format_parse(name, f) != 0) {
            snprintf(why, whylen, "'%s' is not a format (fp32 is always the top rung, not on the list)", name);
            return -1;
        }
        if (l->rungs > 0 && f->mx != l->format[0].mx) {
            snprintf(why, whylen, "'%s' mixes MX formats and formats scaled by APS blocks", name);
            return -1;
        }
        if (l->rungs > 0 && f->width <= l->format[l->rungs - 1].width) {
            snprintf(why, whylen, "'%s' is not wider than the format before it", name);
            return -1;
        }
        l->depth[l->rungs] = apsmpi_format_flush_depth(f);
        l->rungs++;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    l->mx = l->format[0].mx;
    for (int r = l->rungs; r < APSMPI_MAX_RUNGS; r++) /* fp32, and the bins past it stay empty */
        l->depth[r] = APSMPI_DEPTH_NONE;
    l->rungs++; /* fp32 */
    return 0;
}

const char *apsmpi_ladder_name(const apsmpi_ladder *l, int rung)
{
    if (rung < 0 || rung >= l->rungs)
        return "?";
    return rung == apsmpi_ladder_fp32(l) ? "fp32" : l->format[rung].name;
}

int apsmpi_format_flush_depth(const apsmpi_format *f) { return f->emax - f->emin + f->mbits + 1; }

/* Adds to m the non-zero values of v[0..len) and how many lie at or past each rung's depth
 * below top (apsmpi_value_depth: the value's ceiling binade below top). */
static void count_depths(const uint32_t *v, size_t len, int32_t top, const apsmpi_ladder *l, apsmpi_flush_measure *m)
{
    const int32_t d0 = l->depth[0], d1 = l->depth[1], d2 = l->depth[2], d3 = l->depth[3];
    uint32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0, nz = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t a = v[i] & 0x7fffffffu;
        int32_t d = apsmpi_value_depth(a, top);
        uint32_t z = a != 0;
        nz += z;
        c0 += z & (d >= d0);
        c1 += z & (d >= d1);
        c2 += z & (d >= d2);
        c3 += z & (d >= d3);
    }
    m->nonzero += nz;
    m->deep[0] += c0;
    m->deep[1] += c1;
    m->deep[2] += c2;
    m->deep[3] += c3;
}

/* The step between runs of 32 counted of a range of n elements (apsmpi_flush_measure). */
static size_t run_step(size_t n)
{
    size_t runs = (n + 31) / 32;
    return runs ? 1 + (runs - 1) / APSMPI_MEASURE_BLOCKS : 1;
}

void apsmpi_flush_depths(const float *x, size_t n, const apsmpi_ladder *l, apsmpi_flush_measure *m)
{
    const uint32_t *bits = (const uint32_t *)(const void *)x;
    size_t step = run_step(n);

    for (size_t b = 0; b < n; b += 32 * step) {
        size_t len = n - b < 32 ? n - b : 32;
        const uint32_t *v = bits + b;
        int32_t top = 0;
        for (size_t i = 0; i < len; i++) {
            int32_t e = (int32_t)((v[i] >> 23) & 0xffu);
            top = e > top ? e : top;
        }
        count_depths(v, len, top, l, m);
        m->counted += len;
    }
    m->elems += n;
}

void apsmpi_flush_depths_scaled(const float *x, size_t n, size_t first_index, const int16_t *scale, size_t block_len,
                                int emax, const apsmpi_ladder *l, apsmpi_flush_measure *m)
{
    const uint32_t *bits = (const uint32_t *)(const void *)x;
    size_t step = run_step(n);

    for (size_t b = 0; b < n; b += 32 * step) {
        size_t len = n - b < 32 ? n - b : 32;
        /* a run of 32 may cross a block's end: each side with its own block's top */
        for (size_t i = 0; i < len;) {
            size_t at = first_index + b + i, blk = scale ? at / block_len : 0;
            size_t side = scale ? (blk + 1) * block_len - at : len - i;
            side = side < len - i ? side : len - i;
            /* scaled by 2^s, the block's top lands on emax: it is emax - s, as a biased exponent */
            int32_t top = emax - (scale ? scale[blk] : 0) + 127;
            count_depths(bits + b + i, side, top, l, m);
            i += side;
        }
        m->counted += len;
    }
    m->elems += n;
}

void apsmpi_mx_measure_start(apsmpi_mx_measure *mm, const apsmpi_ladder *l)
{
    memset(mm, 0, sizeof *mm);
    for (int i = 0; i < APSMPI_DEPTH_BINS; i++)
        mm->bins.depth[i] = i < APSMPI_MAX_RUNGS ? l->depth[i] : APSMPI_DEPTH_NONE;
}

void apsmpi_flush_measure_add_mx(apsmpi_flush_measure *m, size_t n, const apsmpi_mx_measure *mm)
{
    m->elems += n;
    m->counted += n;
    m->nonzero += mm->count[APSMPI_COUNT_NONZERO];
    m->flushed += mm->count[APSMPI_COUNT_FLUSHED];
    for (int i = 0; i < APSMPI_DEPTH_BINS && i < APSMPI_MAX_RUNGS; i++)
        m->deep[i] += mm->count[APSMPI_COUNT_DEEP + i];
}

double apsmpi_flush_share(const apsmpi_flush_measure *m)
{
    double all_nonzero = m->counted ? (double)m->nonzero * (double)m->elems / (double)m->counted : 0.0;
    double share = all_nonzero > 0 ? (double)m->flushed / all_nonzero : 0.0;
    return share < 1.0 ? share : 1.0;
}

double apsmpi_flush_predicted(const apsmpi_flush_measure *m, int rung)
{
    if (rung < 0 || rung >= APSMPI_MAX_RUNGS || m->nonzero == 0)
        return 0.0;
    return (double)m->deep[rung] / (double)m->nonzero;
}

int apsmpi_width_decide(apsmpi_width_state *st, int rungs, int agreed, double measured, const double *predicted,
                        double budget, int hold)
{
    int next = agreed, prev = st->rung, fp32 = rungs - 1;

    for (int r = 0; r < rungs; r++)
        st->good[r] = predicted[r] <= budget ? (st->good[r] < hold ? st->good[r] + 1 : hold) : 0;
    if (measured > budget) {
        next = fp32;
        for (int r = agreed + 1; r < fp32; r++)
            if (predicted[r] <= budget) {
                next = r;
                break;
            }
        for (int r = 0; r <= agreed; r++)
            st->good[r] = 0;
    } else {
        for (int r = 0; r < agreed; r++)
            if (st->good[r] >= hold) {
                next = r;
                break;
            }
    }
    st->rung = next;
    return next > prev ? APSMPI_WIDTH_RAISED : next < prev ? APSMPI_WIDTH_LOWERED : APSMPI_WIDTH_HELD;
}

int apsmpi_width_store_init(apsmpi_width_store *s, size_t cap, const apsmpi_ladder *l)
{
    memset(s, 0, sizeof *s);
    s->rungs = l->rungs;
    s->first = apsmpi_ladder_first(l);
    s->e = calloc(cap, sizeof *s->e);
    if (s->e == NULL)
        return -1;
    s->cap = cap;
    pthread_mutex_init(&s->lock, NULL);
    return 0;
}

void apsmpi_width_store_free(apsmpi_width_store *s)
{
    if (s->e == NULL)
        return;
    pthread_mutex_destroy(&s->lock);
    free(s->e);
    s->e = NULL;
    s->cap = 0;
}

static int same_key(const apsmpi_width_key *a, const apsmpi_width_key *b)
{
    return a->comm == b->comm && a->count == b->count && a->addr == b->addr && a->offset == b->offset;
}

/* The entry of k (touched), or NULL; with made, a new one for it (*made = 1) in a free slot or
 * the least recently used one's. Under the lock. */
static apsmpi_width_entry *find(apsmpi_width_store *s, const apsmpi_width_key *k, int *made)
{
    apsmpi_width_entry *victim = NULL;

    for (size_t i = 0; i < s->cap; i++) {
        apsmpi_width_entry *e = &s->e[i];
        if (e->used != 0 && same_key(&e->key, k)) {
            e->used = ++s->tick;
            return e;
        }
        if (victim == NULL || e->used < victim->used)
            victim = e;
    }
    if (made == NULL || victim == NULL)
        return NULL;
    *made = 1;
    if (victim->used != 0)
        s->evicted++;
    memset(victim, 0, sizeof *victim);
    victim->key = *k;
    victim->st.rung = s->first;
    victim->used = ++s->tick;
    return victim;
}

int apsmpi_width_proposal(apsmpi_width_store *s, const apsmpi_width_key *k)
{
    int rung;

    pthread_mutex_lock(&s->lock);
    apsmpi_width_entry *e = find(s, k, NULL);
    rung = e ? e->st.rung : s->first;
    pthread_mutex_unlock(&s->lock);
    return rung;
}

int apsmpi_width_after_call(apsmpi_width_store *s, const apsmpi_width_key *k, int agreed, const apsmpi_flush_measure *m,
                            size_t nm, double budget, int hold, double *error)
{
    double measured = 0, predicted[APSMPI_MAX_RUNGS] = {0};
    int move = APSMPI_WIDTH_HELD;

    for (size_t j = 0; j < nm; j++) {
        double share = apsmpi_flush_share(&m[j]);
        measured = share > measured ? share : measured;
        for (int r = 0; r < s->rungs; r++) {
            double p = apsmpi_flush_predicted(&m[j], r);
            predicted[r] = p > predicted[r] ? p : predicted[r];
        }
    }
    if (agreed >= s->rungs - 1)
        measured = 0;
    if (error)
        *error = measured;
    pthread_mutex_lock(&s->lock);
    int made = 0;
    apsmpi_width_entry *e = find(s, k, &made);
    if (e != NULL && made) {
        /* a bucket new to this rank moves from what the ranks agreed, and its first call is
         * the evidence it needs: its state counts as hold - 1 calls within the budget on every
         * rung, so that the first call's measure lowers it at once to what it predicts (after
         * that, hold calls in a row) */
        e->st.rung = agreed;
        for (int r = 0; r < s->rungs; r++)
            e->st.good[r] = hold - 1;
    }
    if (e != NULL)
        move = apsmpi_width_decide(&e->st, s->rungs, agreed, measured, predicted, budget, hold);
    pthread_mutex_unlock(&s->lock);
    return move;
}

void apsmpi_width_forget_comm(apsmpi_width_store *s, uint64_t comm)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->cap; i++)
        if (s->e[i].used != 0 && s->e[i].key.comm == comm) {
            s->e[i].used = 0;
            s->forgotten++;
        }
    pthread_mutex_unlock(&s->lock);
}

size_t apsmpi_width_entries(apsmpi_width_store *s)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->cap; i++)
        n += s->e[i].used != 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}
