/* width_controller.h: APSMPI_FORMAT=auto: the ladder of widths, what an encoding flushed, and each bucket's width for its next call (no MPI). */
#ifndef APSMPI_WIDTH_CONTROLLER_H
#define APSMPI_WIDTH_CONTROLLER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/flush_depth.h"
#include "core/format.h"

/* A ladder: up to 4 formats, narrowest first, then FP32 (the job's own call) above them. Its
 * formats are all MX ones (APSMPI_AUTO_LADDER's default: mxfp4, mxfp5, mxfp6, mxfp8), or all
 * formats scaled by APS blocks (e.g. e2m1, e3m2, e4m3), so that the agreement of a call has
 * the same shape on every rung and the width can travel in it: one exponent (inf/NaN and
 * overflow only) for MX rungs, one per block of APSMPI_BLOCK_SIZE for APS rungs. Every MX rung
 * scales its own blocks of 32: a fused small tensor keeps its own scales beside a large one
 * (only the block it shares at its edge mixes them), so no MX rung loses a whole tensor the way
 * APS blocks of 4096 do; the APS ladder is there for jobs (and studies) that want those
 * formats, whose narrow rungs do lose such tensors. A rung is an index into the ladder. */
enum { APSMPI_MAX_RUNGS = 5 };
#define APSMPI_LADDER_DEFAULT "mxfp4,mxfp5,mxfp6,mxfp8"

typedef struct apsmpi_ladder {
    int rungs; /* its formats and FP32: 2 .. APSMPI_MAX_RUNGS; FP32 is rung rungs - 1 */
    int mx;    /* 1: MX formats; 0: formats scaled by APS blocks */
    apsmpi_format format[APSMPI_MAX_RUNGS - 1];
    int depth[APSMPI_MAX_RUNGS]; /* each rung's flush depth (apsmpi_format_flush_depth; FP32: none) */
} apsmpi_ladder;

/* A depth past every value's, the flush depth of FP32: APSMPI_DEPTH_NONE (core/flush_depth.h,
 * which holds the depth arithmetic that the GPU's measuring encode shares). */

/* The ladder of a comma-separated list of 1 to 4 format names, all MX or all not, each wider
 * than the one before (fp32 and auto are not on the list: FP32 is always above it); 0, or -1
 * with why it is not one in why. */
int apsmpi_ladder_parse(const char *list, apsmpi_ladder *l, char *why, size_t whylen);

/* FP32's rung, and a bucket's first: the widest format (a bucket seen for the first time, or
 * again after its state was dropped, goes on it). */
static inline int apsmpi_ladder_fp32(const apsmpi_ladder *l) { return l->rungs - 1; }
static inline int apsmpi_ladder_first(const apsmpi_ladder *l) { return l->rungs - 2; }

/* The format name of a rung ("mxfp4", ..., "fp32"), "?" for none. */
const char *apsmpi_ladder_name(const apsmpi_ladder *l, int rung);

/* Calls in a row whose measure predicts a narrower rung within the budget before a bucket is lowered to it. */
#define APSMPI_WIDTH_HOLD 4
/* Buckets whose state a rank keeps (the least recently used dropped first). */
#define APSMPI_WIDTH_MAX_BUCKETS 1024

/* The depth from which nearest rounding flushes a value of format f to zero: a value d
 * binades (by ceiling) below the top its scale puts at the format's largest binade, emax,
 * becomes at most 2^(emax - d), and nearest rounding sends to zero what lies at or below half
 * of the smallest subnormal 2^(emin - mbits): all of d >= emax - emin + mbits + 1, and nothing
 * above. mxfp4 E2M1: 2 - 0 + 1 + 1 = 4; mxfp5 E3M1: 4 + 2 + 1 + 1 = 8; mxfp6 E3M2: 9; mxfp8
 * E4M3: 8 + 6 + 3 + 1 = 18; e2m1 with APS blocks (IEEE-like, emax 1): 3. An MX block's top is
 * its largest value's binade (its scale puts that at emax); an APS block's the agreed exponent
 * (scaled to 2^emax, a binade above the largest value when that is not a power of two). */
int apsmpi_format_flush_depth(const apsmpi_format *f);

/* Blocks of 32 whose depths one encoded range has counted at most: a longer range counts every
 * k-th block only (k = 1 + (blocks - 1) / this), the same blocks on every run. */
#define APSMPI_MEASURE_BLOCKS 4096

/* What the encodings of one call did, for one role (a rank's contribution or the sums it owns):
 * elements encoded and the codec's count of non-zero values turned to zero (all of them); and,
 * over the blocks counted (all of a range of up to APSMPI_MEASURE_BLOCKS blocks, else every
 * k-th), their elements, their non-zero values and an integer histogram of those values' depth
 * d = top - ceil(log2 |v|) in the bins the ladder's flush depths cut: deep[r] counts those
 * with d >= l->depth[r] (deep[FP32] = 0). On an MX ladder the top is floor(log2 max|block|),
 * blocks of 32 counted from the encoded range's element 0 as the MX codec cuts it; on an APS
 * ladder the agreed exponent of the value's block. Nearest rounding flushes a value exactly
 * when d >= the rung's depth (for MX blocks whose largest value is a normal float above
 * 2^-110, so that the E8M0 scale is not clamped): one pass predicts, in integers, the share
 * every rung would flush. */
typedef struct apsmpi_flush_measure {
    uint64_t elems, flushed;
    uint64_t counted, nonzero; /* elements of the blocks counted, and their non-zero values */
    uint64_t deep[APSMPI_MAX_RUNGS];
} apsmpi_flush_measure;

/* Adds x[0..n) to m, as an MX ladder's rung encodes it: its elements, and its counted blocks'
 * non-zero values and depths (flushed is the encoder's to add); the loops over a block the
 * compiler vectorises. */
void apsmpi_flush_depths(const float *x, size_t n, const apsmpi_ladder *l, apsmpi_flush_measure *m);

/* The same for an APS ladder's encoding of x[0..n) with the scales sc (a value of element
 * first_index + i scaled by 2^sc.scale[(first_index + i) / sc.block_len], or by 1 without
 * scales) in a format whose largest binade is emax: the top of each value is emax minus its
 * scale. Counts every k-th run of 32 elements as above. */
void apsmpi_flush_depths_scaled(const float *x, size_t n, size_t first_index, const int16_t *scale, size_t block_len,
                                int emax, const apsmpi_ladder *l, apsmpi_flush_measure *m);

/* The measure an MX ladder's rung takes in its encoding (apsmpi_encode_measured, exact over
 * every block): mm's depths set to the ladder's (its bins past FP32 none) and its counts to 0;
 * then its counts added to m for an encoding of n elements (every block counted). */
void apsmpi_mx_measure_start(apsmpi_mx_measure *mm, const apsmpi_ladder *l);
void apsmpi_flush_measure_add_mx(apsmpi_flush_measure *m, size_t n, const apsmpi_mx_measure *mm);

/* The measured error of the encoding: flushed over the non-zero values (their count taken from
 * the blocks counted: exact for a range of up to APSMPI_MEASURE_BLOCKS blocks), at most 1; 0
 * without non-zero values. */
double apsmpi_flush_share(const apsmpi_flush_measure *m);

/* The share rung would have flushed, from the histogram of the blocks counted (0 for FP32,
 * whose bin stays empty). */
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
    int good[APSMPI_MAX_RUNGS];
} apsmpi_width_state;

enum apsmpi_width_move { APSMPI_WIDTH_HELD = 0, APSMPI_WIDTH_RAISED = 1, APSMPI_WIDTH_LOWERED = 2 };

/* The decision after a call that went on rung `agreed` (what the ranks agreed, which may be
 * above st->rung) of a ladder of `rungs` rungs with measured error `measured` and predicted[r]
 * for every rung: over the budget, the proposal rises at once to the narrowest wider rung
 * predicted within it (FP32 if none); within it, it falls to the narrowest rung predicted
 * within the budget for `hold` calls in a row; else it stays at agreed. st->rung becomes the
 * new proposal; returns the move from the old one (this rank's last proposal: a rank whose
 * proposal lost the MAX does not count as lowering when it keeps it). */
int apsmpi_width_decide(apsmpi_width_state *st, int rungs, int agreed, double measured, const double *predicted,
                        double budget, int hold);

/* The states of a rank's buckets, LRU-bounded; thread-safe. */
typedef struct apsmpi_width_entry {
    apsmpi_width_key key;
    apsmpi_width_state st;
    uint64_t used; /* the store's tick at its last use; 0: free */
} apsmpi_width_entry;

typedef struct apsmpi_width_store {
    pthread_mutex_t lock;
    int rungs, first; /* the ladder's rungs, and a new bucket's */
    apsmpi_width_entry *e;
    size_t cap;
    uint64_t tick;
    uint64_t evicted, forgotten;
} apsmpi_width_store;

/* An empty store of cap buckets on ladder l; 0, or -1 without memory. */
int apsmpi_width_store_init(apsmpi_width_store *s, size_t cap, const apsmpi_ladder *l);
void apsmpi_width_store_free(apsmpi_width_store *s);

/* The rung the bucket proposes for its next call: its state's, or the ladder's first. */
int apsmpi_width_proposal(apsmpi_width_store *s, const apsmpi_width_key *k);

/* After a call on rung agreed with the measures of its roles (m[0..nm), the error the largest
 * share over them, each rung's prediction the largest too): the bucket's state decided (made
 * for a new key, dropping the least recently used one when full; a new bucket's first call
 * is evidence enough to lower it: the hold applies from its second call on). Returns the
 * move. */
int apsmpi_width_after_call(apsmpi_width_store *s, const apsmpi_width_key *k, int agreed, const apsmpi_flush_measure *m,
                            size_t nm, double budget, int hold, double *error);

/* Drops every state of communicator comm (it was freed: its handle may come back for another). */
void apsmpi_width_forget_comm(apsmpi_width_store *s, uint64_t comm);

size_t apsmpi_width_entries(apsmpi_width_store *s);

#endif
