/* residuals.c: error feedback's residuals by key: a hash table, a use order for dropping the least recently used, a bound on their bytes. */
#include "feedback/residuals.h"

#include <stdlib.h>
#include <string.h>

enum { FIRST_BUCKETS = 64 };

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static size_t bucket_of(const apsmpi_residual_store *s, const apsmpi_residual_key *k)
{
    uint64_t h = mix(mix(mix(mix(mix(0, k->comm), k->count), k->addr), k->offset), k->role);
    return (size_t)(h ^ (h >> 29)) & (s->nbuckets - 1);
}

static int same_key(const apsmpi_residual_key *a, const apsmpi_residual_key *b)
{
    return a->comm == b->comm && a->count == b->count && a->addr == b->addr && a->offset == b->offset &&
           a->role == b->role;
}

int apsmpi_residual_store_init(apsmpi_residual_store *s, size_t max_bytes)
{
    memset(s, 0, sizeof *s);
    s->nbuckets = FIRST_BUCKETS;
    s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
    if (s->buckets == NULL)
        return -1;
    s->max_bytes = max_bytes;
    s->st.max_bytes = max_bytes;
    pthread_mutex_init(&s->lock, NULL);
    return 0;
}

/* ---- the use order: newest at one end, oldest at the other ---- */

static void unlink_use(apsmpi_residual_store *s, apsmpi_residual *r)
{
    if (r->older)
        r->older->newer = r->newer;
    else
        s->oldest = r->newer;
    if (r->newer)
        r->newer->older = r->older;
    else
        s->newest = r->older;
    r->older = r->newer = NULL;
}

static void link_newest(apsmpi_residual_store *s, apsmpi_residual *r)
{
    r->older = s->newest;
    r->newer = NULL;
    if (s->newest)
        s->newest->newer = r;
    else
        s->oldest = r;
    s->newest = r;
}

/* ---- the table ---- */

static void unlink_bucket(apsmpi_residual_store *s, apsmpi_residual *r)
{
    apsmpi_residual **p = &s->buckets[bucket_of(s, &r->key)];
    while (*p != r)
        p = &(*p)->next_in_bucket;
    *p = r->next_in_bucket;
}

static void link_bucket(apsmpi_residual_store *s, apsmpi_residual *r)
{
    size_t b = bucket_of(s, &r->key);
    r->next_in_bucket = s->buckets[b];
    s->buckets[b] = r;
}

/* Twice the buckets once there are more residuals than buckets (kept if memory lacks). */
static void grow_table(apsmpi_residual_store *s)
{
    if (s->st.entries <= s->nbuckets)
        return;
    apsmpi_residual **bigger = calloc(2 * s->nbuckets, sizeof *bigger);
    if (bigger == NULL)
        return;
    free(s->buckets);
    s->buckets = bigger;
    s->nbuckets *= 2;
    for (apsmpi_residual *r = s->oldest; r; r = r->newer)
        link_bucket(s, r);
}

static void drop(apsmpi_residual_store *s, apsmpi_residual *r)
{
    unlink_bucket(s, r);
    unlink_use(s, r);
    s->st.entries--;
    s->st.held_bytes -= r->n * sizeof(float);
    free(r->r);
    free(r);
}

/* Drops the least recently used unpinned residuals until `bytes` more fit; 1 if they do. */
static int make_room(apsmpi_residual_store *s, size_t bytes)
{
    apsmpi_residual *r = s->oldest;
    while (s->st.held_bytes + bytes > s->max_bytes && r != NULL) {
        apsmpi_residual *next = r->newer;
        if (!r->pinned) {
            drop(s, r);
            s->st.evicted++;
        }
        r = next;
    }
    return s->st.held_bytes + bytes <= s->max_bytes;
}

apsmpi_residual *apsmpi_residual_get(apsmpi_residual_store *s, const apsmpi_residual_key *key, size_t n, int *fresh)
{
    size_t bytes = n * sizeof(float);
    apsmpi_residual *r;

    pthread_mutex_lock(&s->lock);
    for (r = s->buckets[bucket_of(s, key)]; r; r = r->next_in_bucket)
        if (same_key(&r->key, key))
            break;
    if (r != NULL && (r->pinned || r->n != n)) { /* in use by another thread (a job's error), or resized */
        if (r->pinned) {
            s->st.refused++;
            r = NULL;
            goto out;
        }
        drop(s, r);
        r = NULL;
    }
    if (r != NULL) {
        unlink_use(s, r);
        link_newest(s, r);
        r->pinned = 1;
        s->st.reused++;
        *fresh = 0;
        goto out;
    }
    if (n > SIZE_MAX / sizeof(float) || bytes > s->max_bytes || !make_room(s, bytes) ||
        (r = calloc(1, sizeof *r)) == NULL) {
        s->st.refused++;
        r = NULL;
        goto out;
    }
    r->r = calloc(n ? n : 1, sizeof(float));
    if (r->r == NULL) {
        free(r);
        s->st.refused++;
        r = NULL;
        goto out;
    }
    r->key = *key;
    r->n = n;
    r->pinned = 1;
    link_bucket(s, r);
    link_newest(s, r);
    s->st.entries++;
    s->st.held_bytes += bytes;
    if (s->st.held_bytes > s->st.peak_bytes)
        s->st.peak_bytes = s->st.held_bytes;
    s->st.made++;
    grow_table(s);
    *fresh = 1;
out:
    pthread_mutex_unlock(&s->lock);
    return r;
}

void apsmpi_residual_put(apsmpi_residual_store *s, apsmpi_residual *r, double res_sq, double in_sq, int keep)
{
    pthread_mutex_lock(&s->lock);
    r->pinned = 0;
    r->res_sq = res_sq;
    r->in_sq = in_sq;
    if (!keep)
        drop(s, r);
    pthread_mutex_unlock(&s->lock);
}

void apsmpi_residual_stats_of(apsmpi_residual_store *s, apsmpi_residual_stats *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    out->res_sq = out->in_sq = 0;
    for (apsmpi_residual *r = s->oldest; r; r = r->newer) {
        out->res_sq += r->res_sq;
        out->in_sq += r->in_sq;
    }
    pthread_mutex_unlock(&s->lock);
}

void apsmpi_residual_store_free(apsmpi_residual_store *s)
{
    if (s->buckets == NULL)
        return;
    while (s->oldest)
        drop(s, s->oldest);
    free(s->buckets);
    s->buckets = NULL;
    pthread_mutex_destroy(&s->lock);
}
