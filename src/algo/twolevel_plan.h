/* twolevel_plan.h: the two-level schedule's plan, without MPI: the ranks as groups, the buffer as stripes and cells, every message's peer, tag, size and place, the memory. */
#ifndef APSMPI_TWOLEVEL_PLAN_H
#define APSMPI_TWOLEVEL_PLAN_H

#include <stddef.h>
#include "algo/rsag_plan.h"
#include "core/format.h"

/* The two-level schedule (algo/twolevel.h) arranges the N ranks of a call as G groups of M
 * consecutive ranks (rank = group * M + member), the last group of last_size members
 * (M/2 <= last_size <= M), and the buffer as M stripes, each of G cells: cell (i, g) of stripe i
 * is elements [(i G + g) T, (i G + g + 1) T), T whole slices of 64, as rsag would cut the
 * buffer for M G ranks (the last cells shorter or empty).
 *
 * - Stripe i belongs, in a group of m members, to member i mod m: in a full group each
 *   member owns one stripe, in a short last group some own two.
 * - Level 1 (contributions): every rank encodes each stripe once with the call's agreed
 *   scales and sends it to the stripe's owner in its own group; the owner sums the group's
 *   contributions in fp32 (its peers' in round order, its own last).
 * - Level 2 (partials and finals): the owners of stripe i, one per group, sum it across groups:
 *   each encodes its group's partial sum of cell (i, g) once, with scales of its own (a
 *   result message), for the owner of stripe i in group g; that one adds the other groups'
 *   partials to its own (fp32, its own first, then in round order), encodes the final sum
 *   once and sends it to the other G-1.
 * - Level 3 (gather): the owner of stripe i sends the G finals of stripe i, the bytes as
 *   received, in one message to every other member of its group.
 * Each value is rounded three times (its contribution, its group's partial, the final), and
 * each rank sends 2(M-1) + 2(G-1) messages (one stripe each) instead of rsag's 2(N-1), and about
 * (N-1)/N of the encoded buffer each way, as rsag. Not pipelined: every message is a stripe or
 * a cell (the schedule serves many ranks, whose cells are small). */
typedef struct apsmpi_twolevel_plan {
    const apsmpi_format *f;
    int size, rank;
    int groups, group_size, last_size; /* G, M, the last group's members */
    int group, member, my_size;        /* this rank's group, its place in it, the group's members */
    size_t n, block_len;
    size_t cell;     /* T: elements per cell, whole slices of 64 */
    int own;         /* the stripes this rank owns: member, member + my_size, ... (1 or 2) */
    int window;      /* its messages in flight at most (0: all at once) */
    size_t sends;    /* the messages this rank sends */
    size_t requests; /* its requests, all kinds */
    /* the call's buffers (bytes): the encoded input, stripe by stripe; the second encoded
     * buffer: the contributions to this rank's stripes (staging), its partials out and in,
     * then one result slot per cell (results) */
    size_t packed_bytes, stripe_bytes, staging_bytes, partial_bytes, at_partials_out, at_partials_in, at_results,
        result_bytes;
    /* its host memory (bytes; regions at these offsets, from 0): the stripes' counts, firsts,
     * offsets and encoding order (for apsmpi_call_start), the requests, the send queue, the
     * fp32 sums: a stripe's group sum, a decoded stripe, the cells this rank sums across groups */
    size_t at_firsts, at_offsets, at_order, at_gather_order, at_requests, at_queue, at_sum, at_tmp, at_cells,
        memory_bytes;
    /* set by apsmpi_twolevel_plan_bind, inside that memory, per stripe */
    int *counts;
    size_t *firsts, *offsets;
    int *order;        /* the stripes in encoding order: those of send_member(0), send_member(1), ..., own last */
    int *gather_order; /* the others' stripes in the order their finals are awaited (gather_stripe) */
} apsmpi_twolevel_plan;

/* The largest group (and most groups) a plan makes: four kinds of tags of one stripe each stay
 * below 32767 (private_comm.h). */
enum { APSMPI_TWOLEVEL_MAX_GROUP = 4096 };

/* The shape for nranks ranks: the group size M nearest sqrt(nranks) from above that divides
 * it, up to 2 ceil(sqrt(nranks)); else the smallest M from ceil(sqrt(nranks)) whose last group
 * keeps at least half of M. *groups = ceil(nranks / M), *last its last group's size. */
void apsmpi_twolevel_shape(int nranks, int *group_size, int *groups, int *last);

/* Calls of at most this many elements (1 MiB of fp32; a node path's part counts its own) are
 * mostly latency: they take the two-level schedule from a quarter of APSMPI_TWOLEVEL_FROM. */
#define APSMPI_TWOLEVEL_SMALL ((size_t)1 << 18)

/* Whether an allreduce of n elements over `ranks` ranks takes the two-level schedule: from
 * `from` ranks on (APSMPI_TWOLEVEL_FROM; 0: never), from ceil(from / 4) when n is at most
 * APSMPI_TWOLEVEL_SMALL; and always (but with `from` 0) when `shared`: a flat call over
 * several nodes with several of its ranks on a node (GPU buffers), whose groups of consecutive
 * ranks then keep most of the bytes within a node (the simulator: docs/design.md). */
int apsmpi_twolevel_chosen(int ranks, size_t n, size_t from, int shared);

/* Plans the schedule for this rank of nranks on n elements; window: messages in flight at
 * most (0: all at once; at most APSMPI_RSAG_MAX_WINDOW); request_bytes: sizeof(MPI_Request). */
void apsmpi_twolevel_plan_init(apsmpi_twolevel_plan *p, const apsmpi_format *f, int nranks, int rank, size_t n,
                               size_t block_len, int window, size_t request_bytes);

/* Lays its memory out in mem (p->memory_bytes, aligned to 64): counts, firsts, offsets, the orders. */
void apsmpi_twolevel_plan_bind(apsmpi_twolevel_plan *p, void *mem);

/* Members of group g; the rank of member k of group g; the member of a group of m that owns
 * stripe i; this rank's s-th own stripe. */
int apsmpi_twolevel_members(const apsmpi_twolevel_plan *p, int g);
static inline int apsmpi_twolevel_rank_of(const apsmpi_twolevel_plan *p, int g, int k) { return g * p->group_size + k; }
static inline int apsmpi_twolevel_owner(int stripe, int m) { return stripe % m; }
static inline int apsmpi_twolevel_own_stripe(const apsmpi_twolevel_plan *p, int s)
{
    return p->member + s * p->my_size;
}

/* Elements of stripe i and its first; of cell (i, g) and its first. */
size_t apsmpi_twolevel_stripe_len(const apsmpi_twolevel_plan *p, int i);
size_t apsmpi_twolevel_stripe_first(const apsmpi_twolevel_plan *p, int i);
size_t apsmpi_twolevel_cell_len(const apsmpi_twolevel_plan *p, int i, int g);
size_t apsmpi_twolevel_cell_first(const apsmpi_twolevel_plan *p, int i, int g);
/* Byte offset in results of cell (i, g)'s result slot (cells in order, slot i G + g); for g =
 * G the end of stripe i's. */
size_t apsmpi_twolevel_slot(const apsmpi_twolevel_plan *p, int i, int g);

/* The rounds, as rsag's (rsag_plan.h): in round t of a level, member k sends to member
 * k-1-t of its group (group g to group g-1-t) and receives from k+1+t (g+1+t). */
static inline int apsmpi_twolevel_rounds1(const apsmpi_twolevel_plan *p) { return p->my_size - 1; }
static inline int apsmpi_twolevel_rounds2(const apsmpi_twolevel_plan *p) { return p->groups - 1; }
int apsmpi_twolevel_send_member(const apsmpi_twolevel_plan *p, int t);
int apsmpi_twolevel_recv_member(const apsmpi_twolevel_plan *p, int t);
int apsmpi_twolevel_send_group(const apsmpi_twolevel_plan *p, int t);
int apsmpi_twolevel_recv_group(const apsmpi_twolevel_plan *p, int t);

/* Tags (added to the call's tag base): the kind times M, plus the stripe. */
enum apsmpi_twolevel_kind {
    APSMPI_TWOLEVEL_CONTRIB,
    APSMPI_TWOLEVEL_PARTIAL,
    APSMPI_TWOLEVEL_FINAL,
    APSMPI_TWOLEVEL_GATHER
};

/* The messages (apsmpi_rsag_msg: peer, tag, byte offset in its buffer, bytes), named by what
 * they carry; every offset but the contributions out is in the second encoded buffer:
 * - contribution_out(j): stripe j (not this rank's) of its encoded input, to the stripe's owner;
 * - contribution_in(s, t): the contribution of recv_member(t) to own stripe s, in staging;
 * - partial_out(s, t): own stripe i's partial of cell (i, send_group(t)), in the partials out;
 * - partial_in(s, t): the partial of recv_group(t) for cell (i, group), in the partials in;
 * - final_out(s, t): the final of cell (i, group), to the owner of stripe i in send_group(t),
 *   in results; final_in(s, t): recv_group(t)'s final of cell (i, recv_group(t)), in results;
 * - gather_out(s, t): stripe i's G finals to send_member(t), in results;
 * - gather_in(j): stripe j's finals (j not this rank's) from its owner, in results. */
apsmpi_rsag_msg apsmpi_twolevel_contribution_out(const apsmpi_twolevel_plan *p, int j);
apsmpi_rsag_msg apsmpi_twolevel_contribution_in(const apsmpi_twolevel_plan *p, int s, int t);
apsmpi_rsag_msg apsmpi_twolevel_partial_out(const apsmpi_twolevel_plan *p, int s, int t);
apsmpi_rsag_msg apsmpi_twolevel_partial_in(const apsmpi_twolevel_plan *p, int s, int t);
apsmpi_rsag_msg apsmpi_twolevel_final_out(const apsmpi_twolevel_plan *p, int s, int t);
apsmpi_rsag_msg apsmpi_twolevel_final_in(const apsmpi_twolevel_plan *p, int s, int t);
apsmpi_rsag_msg apsmpi_twolevel_gather_out(const apsmpi_twolevel_plan *p, int s, int t);
apsmpi_rsag_msg apsmpi_twolevel_gather_in(const apsmpi_twolevel_plan *p, int j);

/* The requests, by kind: contributions out and gathers in by stripe j (those of this rank's
 * own stripes stay unused), the others by [s][t]. */
enum apsmpi_twolevel_request_kind {
    APSMPI_TWOLEVEL_REQ_CONTRIB_OUT,
    APSMPI_TWOLEVEL_REQ_CONTRIB_IN,
    APSMPI_TWOLEVEL_REQ_PARTIAL_OUT,
    APSMPI_TWOLEVEL_REQ_PARTIAL_IN,
    APSMPI_TWOLEVEL_REQ_FINAL_OUT,
    APSMPI_TWOLEVEL_REQ_FINAL_IN,
    APSMPI_TWOLEVEL_REQ_GATHER_OUT,
    APSMPI_TWOLEVEL_REQ_GATHER_IN,
    APSMPI_TWOLEVEL_REQ_KINDS
};
size_t apsmpi_twolevel_request_count(const apsmpi_twolevel_plan *p, enum apsmpi_twolevel_request_kind kind);
/* The request of message [s][t] of a kind, or of stripe s (t 0) for those by stripe. */
size_t apsmpi_twolevel_request(const apsmpi_twolevel_plan *p, enum apsmpi_twolevel_request_kind kind, int s, int t);

/* The stripe awaited at gather position pos (0 .. M - own - 1): the stripes of recv_member(0),
 * then of recv_member(1), ..., each member's in increasing order. */
static inline int apsmpi_twolevel_gather_stripe(const apsmpi_twolevel_plan *p, int pos) { return p->gather_order[pos]; }

#endif
