/* residuals.h: error feedback's memory: what rounding took from a buffer, kept between calls under a key, within a bound, the least recently used dropped first. */
#ifndef APSMPI_FEEDBACK_RESIDUALS_H
#define APSMPI_FEEDBACK_RESIDUALS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Error feedback (APSMPI_ERROR_FEEDBACK): a rank adds to what it encodes the residual that
 * rounding took from the same buffer at its last call, and keeps the new one; so over T
 * calls with the same input the sum of what was sent differs from T times the input by one
 * residual, not T roundings. A residual belongs to a key: the communicator, the call's
 * element count and the job's buffer, the stretch of it (the node path cuts a buffer into
 * parts) and the role (a rank's contribution, the sum a rank owns and encodes, or a group's
 * partial sum it encodes in the two-level schedule). A call
 * with another key starts from zero. No MPI here: the communicator is an opaque number. */

enum apsmpi_residual_role {
    APSMPI_RESIDUAL_CONTRIBUTION = 0, /* the whole buffer this rank encodes and sends */
    APSMPI_RESIDUAL_SUM = 1,          /* the segment whose sum this rank owns and encodes */
    APSMPI_RESIDUAL_PARTIAL = 2       /* a cell whose group's partial sum this rank encodes (algo/twolevel.h) */
};

typedef struct apsmpi_residual_key {
    uint64_t comm;   /* the communicator (its handle's bits) */
    uint64_t count;  /* the call's element count */
    uint64_t addr;   /* the job's buffer (its address) */
    uint64_t offset; /* the first element of the stretch in that buffer */
    uint32_t role;   /* enum apsmpi_residual_role */
} apsmpi_residual_key;

/* One residual: n floats, zero when made. Between apsmpi_residual_get and _put it is the
 * caller's (pinned: never dropped). */
typedef struct apsmpi_residual {
    apsmpi_residual_key key;
    float *r;
    size_t n;
    /* internal */
    int pinned;
    double res_sq, in_sq;                   /* after the last call: sums of squares */
    struct apsmpi_residual *older, *newer;  /* the use order */
    struct apsmpi_residual *next_in_bucket; /* the hash chain */
} apsmpi_residual;

typedef struct apsmpi_residual_stats {
    size_t entries;        /* residuals held */
    size_t held_bytes;     /* their floats' bytes */
    size_t peak_bytes;     /* the most ever held at once */
    size_t max_bytes;      /* the bound */
    uint64_t made, reused; /* residuals made new; found again for a call */
    uint64_t evicted;      /* dropped to make room (least recently used first) */
    uint64_t refused;      /* calls that got none: larger than the bound, no room beside pinned ones, no memory */
    double res_sq, in_sq;  /* sums of squares of every held residual and of the inputs of their last calls */
} apsmpi_residual_stats;

typedef struct apsmpi_residual_store {
    pthread_mutex_t lock;
    size_t max_bytes;
    apsmpi_residual **buckets;
    size_t nbuckets;
    apsmpi_residual *oldest, *newest;
    apsmpi_residual_stats st;
} apsmpi_residual_store;

/* An empty store that holds at most max_bytes of residual floats; 0, or -1 without memory. */
int apsmpi_residual_store_init(apsmpi_residual_store *s, size_t max_bytes);
void apsmpi_residual_store_free(apsmpi_residual_store *s); /* drops every residual */

/* The residual of key, of n floats, pinned: the one kept for that key (*fresh = 0), or a new
 * one of zeros (*fresh = 1; also when the one kept has another length), made room for by
 * dropping the least recently used unpinned residuals. NULL when n floats exceed the bound,
 * the pinned ones leave no room, or memory runs out: the call then goes without error
 * feedback (counted as refused). Thread-safe. */
apsmpi_residual *apsmpi_residual_get(apsmpi_residual_store *s, const apsmpi_residual_key *key, size_t n, int *fresh);

/* Unpins r after its call, which left res_sq (the sum of squares of the new residual) and
 * in_sq (of what the call encoded before the residual was added), or drops it when keep is 0
 * (the call failed: what it holds is not what rounding took). */
void apsmpi_residual_put(apsmpi_residual_store *s, apsmpi_residual *r, double res_sq, double in_sq, int keep);

/* A snapshot of the statistics. */
void apsmpi_residual_stats_of(apsmpi_residual_store *s, apsmpi_residual_stats *out);

#endif
