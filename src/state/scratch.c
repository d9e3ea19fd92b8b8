/* scratch.c: the per-thread working buffers, kept across calls and freed at thread exit. */
#include "state/scratch.h"

#include <pthread.h>
#include <stdlib.h>

struct scratch_set {
    void *buf[APSMPI_SCRATCH_SLOTS];
    size_t cap[APSMPI_SCRATCH_SLOTS];
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p)
{
    struct scratch_set *s = p;
    for (int i = 0; i < APSMPI_SCRATCH_SLOTS; i++)
        free(s->buf[i]);
    free(s);
}

/* The buffer of `slot` in bufs/caps, of at least `bytes` bytes, grown by half again so that a
 * slowly growing size does not reallocate every call; NULL if memory runs out. */
static void *grown(void **bufs, size_t *caps, int slot, size_t bytes)
{
    if (caps[slot] < bytes) {
        size_t cap = bytes + bytes / 2 + 64;
        void *p = NULL;
        if (posix_memalign(&p, 64, cap) != 0)
            return NULL;
        free(bufs[slot]);
        bufs[slot] = p;
        caps[slot] = cap;
    }
    return bufs[slot];
}

void *apsmpi_owned_memory_get(void *provider, int slot, size_t bytes)
{
    apsmpi_owned_memory *m = provider;
    return grown(m->buf, m->cap, slot, bytes);
}

void apsmpi_owned_memory_free(apsmpi_owned_memory *m)
{
    for (int i = 0; i < APSMPI_SCRATCH_SLOTS; i++) {
        free(m->buf[i]);
        m->buf[i] = NULL;
        m->cap[i] = 0;
    }
}

static void scratch_key_create(void) { pthread_key_create(&scratch_key, scratch_free); }

void *apsmpi_scratch(int slot, size_t bytes)
{
    struct scratch_set *s;

    pthread_once(&scratch_once, scratch_key_create);
    s = pthread_getspecific(scratch_key);
    if (s == NULL) {
        s = calloc(1, sizeof *s);
        if (s == NULL || pthread_setspecific(scratch_key, s) != 0) {
            free(s);
            return NULL;
        }
    }
    return grown(s->buf, s->cap, slot, bytes);
}

static void *scratch_get(void *provider, int slot, size_t bytes)
{
    (void)provider;
    return apsmpi_scratch(slot, bytes);
}

const apsmpi_memory apsmpi_scratch_memory = {scratch_get, NULL};
