/* width_controller.h: APSMPI_FORMAT=auto: the ladder of widths, what an encoding flushed, and each bucket's width for its next call (no MPI). */
#ifndef APSMPI_WIDTH_CONTROLLER_H
#define APSMPI_WIDTH_CONTROLLER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The ladder, narrowest first. Every rung below FP32 is an OCP MX format: blocks of 32 with
 * scales of their own, so the agreement of a call has the same shape on every rung (one
 * exponent: inf/NaN and overflow only) and the width can travel in it; a fused small tensor
 * keeps its own scales beside a large one (only the block it shares at its edge mixes them),
 * so no rung loses a whole tensor the way APS blocks of 4096 do. FP32 is the job's own call.
 * mxfp8's E4M3 flushes nothing that lies within 2^18 of its block's largest value. */
enum apsmpi_rung { APSMPI_RUNG_MXFP4 = 0, APSMPI_RUNG_MXFP6, APSMPI_RUNG_MXFP8, APSMPI_RUNG_FP32, APSMPI_RUNGS };

/* A bucket seen for the first time (or again after its state was dropped) goes on mxfp8. */
#define APSMPI_RUNG_FIRST APSMPI_RUNG_MXFP8
/* Calls in a row whose measure predicts a narrower rung within the budget before a bucket is lowered to it. */
#define APSMPI_WIDTH_HOLD 4
/* Buckets whose state a rank keeps (the least recently used dropped first). */
#define APSMPI_WIDTH_MAX_BUCKETS 1024

/* The format name of a rung: "mxfp4", "mxfp6", "mxfp8", "fp32". */
const char *apsmpi_rung_name(int rung);

/* The depth from which nearest rounding flushes a value to zero on rung (below): 4, 9, 18; a
 * rung that flushes nothing (FP32): 256, more than any depth. */
int apsmpi_rung_flush_depth(int rung);

/* Blocks of 32 whose depths one encoded range has counted at most: a longer range counts every
 * k-th block only (k = 1 + (blocks - 1) / this), the same blocks on every run. */
#define APSMPI_MEASURE_BLOCKS 4096

/* What the encodings of one call did, for one role (a rank's contribution or the sums it owns):
 * elements encoded and the codec's count of non-zero values turned to zero (all of them); and,
 * over the blocks counted (all of a range of up to APSMPI_MEASURE_BLOCKS blocks, else every
 * k-th), their elements, their non-zero values and an integer histogram of those values' depth
 * d = floor(log2 max|block|) - ceil(log2 |v|) in the bins the ladder's flush depths cut:
 * deep[r] counts those with d >= apsmpi_rung_flush_depth(r) (deep[FP32] = 0). Blocks of 32 are
 * counted from the encoded range's element 0 as the MX codec cuts it. Nearest rounding on an MX
 * rung flushes a value exactly when d >= apsmpi_rung_flush_depth(rung) (for blocks whose
 * largest value is a normal float above 2^-110, so that the E8M0 scale is not clamped): one
 * pass predicts, in integers, the share every rung would flush. */
typedef struct apsmpi_flush_measure {
    uint64_t elems, flushed;
    uint64_t counted, nonzero; /* elements of the blocks counted, and their non-zero values */
    uint64_t deep[APSMPI_RUNGS];
} apsmpi_flush_measure;

/* Adds x[0..n) to m: its elements, and its counted blocks' non-zero values and depths (flushed
 * is the encoder's to add); the loops over a block the compiler vectorises. */
void apsmpi_flush_depths(const float *x, size_t n, apsmpi_flush_measure *m);

/* The measured error of the encoding: flushed over the non-zero values (their count taken from
 * the blocks counted: exact for a range of up to APSMPI_MEASURE_BLOCKS blocks), at most 1; 0
 * without non-zero values. */
double apsmpi_flush_share(const apsmpi_flush_measure *m);

/* The share rung would have flushed, from the histogram of the blocks counted (0 for FP32). */
double apsmpi_flush_predicted(const apsmpi_flush_measure *m, int rung);

/* A bucket: as error feedback keys its residuals (communicator, count, buffer, offset of a
 * node path's part). */
typedef struct apsmpi_width_key {
    uint64_t comm, count, addr, offset;
} apsmpi_width_key;

/* A bucket's state: the rung it proposes for its next call, and for every rung the calls in a
 * row whose measure predicted it within the budget. */
typedef struct apsmpi_width_state {
    int rung;
    int good[APSMPI_RUNGS];
} apsmpi_width_state;

enum apsmpi_width_move { APSMPI_WIDTH_HELD = 0, APSMPI_WIDTH_RAISED = 1, APSMPI_WIDTH_LOWERED = 2 };

/* The decision after a call that went on rung `agreed` (what the ranks agreed, which may be
 * above st->rung) with measured error `measured` and predicted[r] for every rung: over the
 * budget, the proposal rises at once to the narrowest wider rung predicted within it (FP32 if
 * none); within it, it falls to the narrowest rung predicted within the budget for `hold`
 * calls in a row; else it stays at agreed. st->rung becomes the new proposal; returns the move
 * from the old one (this rank's last proposal: a rank whose proposal lost the MAX does not count
 * as lowering when it keeps it). */
int apsmpi_width_decide(apsmpi_width_state *st, int agreed, double measured, const double predicted[APSMPI_RUNGS],
                        double budget, int hold);

/* The states of a rank's buckets, LRU-bounded; thread-safe. */
typedef struct apsmpi_width_entry {
    apsmpi_width_key key;
    apsmpi_width_state st;
    uint64_t used; /* the store's tick at its last use; 0: free */
} apsmpi_width_entry;

typedef struct apsmpi_width_store {
    pthread_mutex_t lock;
    apsmpi_width_entry *e;
    size_t cap;
    uint64_t tick;
    uint64_t evicted, forgotten;
} apsmpi_width_store;

int apsmpi_width_store_init(apsmpi_width_store *s, size_t cap); /* 0, or -1 without memory */
void apsmpi_width_store_free(apsmpi_width_store *s);

/* The rung the bucket proposes for its next call: its state's, or APSMPI_RUNG_FIRST. */
int apsmpi_width_proposal(apsmpi_width_store *s, const apsmpi_width_key *k);

/* After a call on rung agreed with the measures of its roles (m[0..nm), the error the largest
 * share over them, each rung's prediction the largest too): the bucket's state decided (made
 * for a new key, dropping the least recently used one when full). Returns the move. */
int apsmpi_width_after_call(apsmpi_width_store *s, const apsmpi_width_key *k, int agreed, const apsmpi_flush_measure *m,
                            size_t nm, double budget, int hold, double *error);

/* Drops every state of communicator comm (it was freed: its handle may come back for another). */
void apsmpi_width_forget_comm(apsmpi_width_store *s, uint64_t comm);

size_t apsmpi_width_entries(apsmpi_width_store *s);

#endif
