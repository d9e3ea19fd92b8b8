/* width_controller.c: APSMPI_FORMAT=auto's measure (flushed share, depth histogram), its decision per bucket, and the LRU store of the buckets' states. */
#include "core/width_controller.h"

#include <stdlib.h>
#include <string.h>

static const char *const rung_names[APSMPI_RUNGS] = {"mxfp4", "mxfp6", "mxfp8", "fp32"};

const char *apsmpi_rung_name(int rung) { return rung >= 0 && rung < APSMPI_RUNGS ? rung_names[rung] : "?"; }

/* An MX element of emax (its largest normal's exponent), emin (its smallest normal's) and mbits
 * mantissa bits scales a block so that its largest value's binade is emax; a value d binades
 * (floor) below it becomes m * 2^(emax - d), m in [1, 2); the smallest subnormal is
 * 2^(emin - mbits), and nearest rounding sends to zero what lies at or below half of it: all of
 * d >= emax - emin + mbits + 2, and m == 1 at one binade less. In the histogram's depth (the
 * value's binade by ceiling) that is depth >= emax - emin + mbits + 1.
 *   mxfp4 E2M1: 2 - 0 + 1 + 1 = 4;  mxfp6 E3M2: 4 + 2 + 2 + 1 = 9;  mxfp8 E4M3: 8 + 6 + 3 + 1 = 18 */
enum { DEPTH_MXFP4 = 4, DEPTH_MXFP6 = 9, DEPTH_MXFP8 = 18, DEPTH_NONE = 256 };

int apsmpi_rung_flush_depth(int rung)
{
    static const int depth[APSMPI_RUNGS] = {DEPTH_MXFP4, DEPTH_MXFP6, DEPTH_MXFP8, DEPTH_NONE};
    return rung >= 0 && rung < APSMPI_RUNGS ? depth[rung] : DEPTH_NONE;
}

void apsmpi_flush_depths(const float *x, size_t n, apsmpi_flush_measure *m)
{
    const uint32_t *bits = (const uint32_t *)(const void *)x;
    size_t nblocks = (n + 31) / 32, step = nblocks ? 1 + (nblocks - 1) / APSMPI_MEASURE_BLOCKS : 1;
    uint64_t counted = 0, nonzero = 0, d4 = 0, d9 = 0, d18 = 0;

    for (size_t blk = 0; blk < nblocks; blk += step) {
        size_t b = blk * 32, len = n - b < 32 ? n - b : 32;
        const uint32_t *v = bits + b;
        int32_t top = 0;
        uint32_t c0 = 0, c4 = 0, c9 = 0, c18 = 0;
        for (size_t i = 0; i < len; i++) {
            int32_t e = (int32_t)((v[i] >> 23) & 0xffu);
            top = e > top ? e : top;
        }
        for (size_t i = 0; i < len; i++) {
            uint32_t a = v[i] & 0x7fffffffu;
            int32_t d = top - (int32_t)(a >> 23) - (int32_t)((a & 0x7fffffu) != 0);
            uint32_t z = a != 0;
            c0 += z;
            c4 += z & (d >= DEPTH_MXFP4);
            c9 += z & (d >= DEPTH_MXFP6);
            c18 += z & (d >= DEPTH_MXFP8);
        }
        counted += len;
        nonzero += c0;
        d4 += c4;
        d9 += c9;
        d18 += c18;
    }
    m->elems += n;
    m->counted += counted;
    m->nonzero += nonzero;
    m->deep[APSMPI_RUNG_MXFP4] += d4;
    m->deep[APSMPI_RUNG_MXFP6] += d9;
    m->deep[APSMPI_RUNG_MXFP8] += d18;
}

double apsmpi_flush_share(const apsmpi_flush_measure *m)
{
    double all_nonzero = m->counted ? (double)m->nonzero * (double)m->elems / (double)m->counted : 0.0;
    double share = all_nonzero > 0 ? (double)m->flushed / all_nonzero : 0.0;
    return share < 1.0 ? share : 1.0;
}

double apsmpi_flush_predicted(const apsmpi_flush_measure *m, int rung)
{
    if (rung < 0 || rung >= APSMPI_RUNG_FP32 || m->nonzero == 0)
        return 0.0;
    return (double)m->deep[rung] / (double)m->nonzero;
}

int apsmpi_width_decide(apsmpi_width_state *st, int agreed, double measured, const double predicted[APSMPI_RUNGS],
                        double budget, int hold)
{
    int next = agreed, prev = st->rung;

    for (int r = 0; r < APSMPI_RUNGS; r++)
        st->good[r] = predicted[r] <= budget ? (st->good[r] < hold ? st->good[r] + 1 : hold) : 0;
    if (measured > budget) {
        next = APSMPI_RUNG_FP32;
        for (int r = agreed + 1; r < APSMPI_RUNG_FP32; r++)
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

int apsmpi_width_store_init(apsmpi_width_store *s, size_t cap)
{
    memset(s, 0, sizeof *s);
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
    victim->st.rung = APSMPI_RUNG_FIRST;
    victim->used = ++s->tick;
    return victim;
}

int apsmpi_width_proposal(apsmpi_width_store *s, const apsmpi_width_key *k)
{
    int rung;

    pthread_mutex_lock(&s->lock);
    apsmpi_width_entry *e = find(s, k, NULL);
    rung = e ? e->st.rung : APSMPI_RUNG_FIRST;
    pthread_mutex_unlock(&s->lock);
    return rung;
}

int apsmpi_width_after_call(apsmpi_width_store *s, const apsmpi_width_key *k, int agreed, const apsmpi_flush_measure *m,
                            size_t nm, double budget, int hold, double *error)
{
    double measured = 0, predicted[APSMPI_RUNGS] = {0};
    int move = APSMPI_WIDTH_HELD;

    for (size_t j = 0; j < nm; j++) {
        double share = apsmpi_flush_share(&m[j]);
        measured = share > measured ? share : measured;
        for (int r = 0; r < APSMPI_RUNGS; r++) {
            double p = apsmpi_flush_predicted(&m[j], r);
            predicted[r] = p > predicted[r] ? p : predicted[r];
        }
    }
    if (agreed >= APSMPI_RUNG_FP32)
        measured = 0;
    if (error)
        *error = measured;
    pthread_mutex_lock(&s->lock);
    int made = 0;
    apsmpi_width_entry *e = find(s, k, &made);
    if (e != NULL && made)
        e->st.rung = agreed; /* a bucket new to this rank moves from what the ranks agreed */
    if (e != NULL)
        move = apsmpi_width_decide(&e->st, agreed, measured, predicted, budget, hold);
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
