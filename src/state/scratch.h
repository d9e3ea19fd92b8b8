/* scratch.h: per-thread working buffers that grow and are kept, so no call allocates fresh memory. */
#ifndef APSMPI_SCRATCH_H
#define APSMPI_SCRATCH_H

#include <stddef.h>

/* The memory of a compressed call comes in these slots (one buffer each, grown as needed). */
enum apsmpi_scratch_slot {
    APSMPI_SCRATCH_EXPONENTS = 0,    /* the per-block exponents and scales of the agreement */
    APSMPI_SCRATCH_PACKED = 1,       /* the encoded input (or a GPU call's fp32 host copy) */
    APSMPI_SCRATCH_RESULT = 2,       /* the second encoded buffer: contributions received, results */
    APSMPI_SCRATCH_COUNTS = 3,       /* per-rank segment counts of an allreduce */
    APSMPI_SCRATCH_BLOCK_COUNTS = 4, /* per-rank element counts of a reduce-scatter-block */
    APSMPI_SCRATCH_ALGORITHM = 5,    /* the memory of a call's algorithm (algo/algorithm.h) */
    APSMPI_SCRATCH_NODE = 6,         /* the memory of the node path, around its parts' calls */
    APSMPI_SCRATCH_STAGING = 7,      /* a request's host copies of GPU buffers (entry/requests.c) */
    APSMPI_SCRATCH_SLOTS = 8
};

/* A buffer of at least bytes bytes, private to the calling thread, valid until the next call
 * for the same slot on this thread; NULL if memory runs out. Freed when the thread exits. */
void *apsmpi_scratch(int slot, size_t bytes);

/* Where an operation's memory comes from: its provider hands it out by slot, aligned to 64
 * bytes, valid while the operation runs (NULL if memory runs out). A blocking call's provider is
 * its thread (apsmpi_scratch_memory: the scratch above); a non-blocking one's would be its
 * request. Nothing below the provider takes memory on its own. */
typedef struct apsmpi_memory {
    void *(*get)(void *provider, int slot, size_t bytes);
    void *provider;
} apsmpi_memory;

static inline void *apsmpi_memory_get(const apsmpi_memory *m, int slot, size_t bytes)
{
    return m->get(m->provider, slot, bytes);
}

/* The calling thread's scratch as a provider. */
extern const apsmpi_memory apsmpi_scratch_memory;

/* Memory of a provider of its own (a request): one buffer per slot, grown as needed and kept
 * until apsmpi_owned_memory_free, so that a request object reused from a pool touches no
 * fresh memory. Zero-initialised it is empty. */
typedef struct apsmpi_owned_memory {
    void *buf[APSMPI_SCRATCH_SLOTS];
    size_t cap[APSMPI_SCRATCH_SLOTS];
} apsmpi_owned_memory;

/* apsmpi_memory's get for an apsmpi_owned_memory provider. */
void *apsmpi_owned_memory_get(void *provider, int slot, size_t bytes);
void apsmpi_owned_memory_free(apsmpi_owned_memory *m);

#endif
