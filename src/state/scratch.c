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
    if (s->cap[slot] < bytes) {
        /* grow by half again, so a slowly growing size does not reallocate every call */
        size_t cap = bytes + bytes / 2 + 64;
        void *p = NULL;
        if (posix_memalign(&p, 64, cap) != 0)
            return NULL;
        free(s->buf[slot]);
        s->buf[slot] = p;
        s->cap[slot] = cap;
    }
    return s->buf[slot];
}

static void *scratch_get(void *owner, int slot, size_t bytes)
{
    (void)owner;
    return apsmpi_scratch(slot, bytes);
}

const apsmpi_memory apsmpi_scratch_memory = {scratch_get, NULL};
