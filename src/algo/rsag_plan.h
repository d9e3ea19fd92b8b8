/* rsag_plan.h: rsag's plan, without MPI: segments and pieces, the schedule of its messages, their tags and sizes, and where every byte lies. */
#ifndef APSMPI_RSAG_PLAN_H
#define APSMPI_RSAG_PLAN_H

#include <stddef.h>
#include "algo/pieces.h"
#include "core/format.h"

/* rsag (algo/rsag.h) cuts the buffer into one segment per rank (counts[r] elements, in rank
 * order; rank r owns segment r) and each segment into pieces, one message each. Planned once
 * per call, before the ranks agree, from the call's shape alone: the sizes of every buffer
 * (apsmpi_rsag_plan_init), then the layout of its host memory (apsmpi_rsag_plan_bind). */
typedef struct apsmpi_rsag_plan {
    const apsmpi_format *f;
    int size, rank, allgather;
    const int *counts;
    size_t piece;     /* elements per piece: a multiple of 64 (apsmpi_piece_size) */
    size_t block_len; /* elements per scaling block of the call */
    size_t all_pieces, own_pieces;
    size_t max_pieces; /* of the largest segment */
    /* the schedule's two choices (below): at most `window` of this rank's messages in flight
     * (0: all at once), and the encoding order */
    int window, piece_major;
    size_t sends;     /* the messages this rank sends: contributions and results */
    size_t own_bytes; /* this rank's segment, encoded */
    /* the call's buffers (bytes): the encoded input; the second encoded buffer: first the
     * contributions to this rank's segment (staging), then one slot per piece of every
     * segment for the result messages (results) */
    size_t packed_bytes, staging_bytes, result_bytes;
    size_t sum_floats; /* fp32: the owner's sum of one piece (or of the whole segment without
                        * allgather) and one decoded piece */
    /* rsag's host memory (bytes; its regions at these offsets, from 0) */
    size_t at_offset, at_piece0, at_slot0, at_order, at_requests, at_queue, at_sum, memory_bytes;
    /* set by apsmpi_rsag_plan_bind, inside that memory; per segment: */
    size_t *first;  /* its first element */
    size_t *offset; /* its byte offset in the encoded input */
    size_t *piece0; /* the index of its first piece among all pieces (requests by piece) */
    size_t *slot0;  /* the byte offset of its first piece's result slot in results */
    int *order;     /* the segments in encoding order (apsmpi_rsag_encode_segment) */
} apsmpi_rsag_plan;

/* The most messages in flight per rank a plan takes (APSMPI_RSAG_WINDOW's bound). */
enum { APSMPI_RSAG_MAX_WINDOW = 64 };

/* Plans rsag on segments of counts[0..nranks) elements for this rank. piece: elements per
 * piece (a multiple of 64), 0 for one piece per segment (a call that is not pipelined);
 * grown for the tag bound. allgather: an allreduce, else a reduce-scatter. window: this
 * rank's messages in flight at most (0: all at once; at most APSMPI_RSAG_MAX_WINDOW).
 * request_bytes: sizeof(MPI_Request), given so that the plan needs no MPI. */
void apsmpi_rsag_plan_init(apsmpi_rsag_plan *p, const apsmpi_format *f, const int *counts, int nranks, int rank,
                           size_t piece, size_t block_len, int allgather, int window, size_t request_bytes);

/* Lays rsag's memory out in mem (p->memory_bytes, aligned to 64): fills first, offset,
 * piece0, slot0 and order. The requests (apsmpi_rsag_requests) and the fp32 sums are
 * rsag's to fill. */
void apsmpi_rsag_plan_bind(apsmpi_rsag_plan *p, void *mem);

/* The schedule: who sends to whom, in which order, and how many messages are in flight. It
 * is all here; rsag.c posts as it says.
 * - Rounds 0 .. size-2: in round t this rank sends its contribution to send_peer(t) =
 *   rank-1-t and receives one from recv_peer(t) = rank+1+t; every rank sends to a different
 *   one at once. The result messages go the same way: the owner's to send_peer(t), those of
 *   recv_peer(t) to this rank.
 * - Positions: encode_segment(0, 1, ..., size-1) are the send peers of rounds 0, 1, ..., then
 *   this rank's own segment last. The owner sums a piece's contributions in round order, its
 *   own last: a fixed order, on which the result's bits depend, and the same in both orders
 *   below (the encoding of a piece does not depend on when it is made).
 * - Encoding order (apsmpi_rsag_encode_seek): with window 0, segment-major: every piece of
 *   position 0, then of position 1, ... With a window, piece-major: piece 0 of every
 *   position, then piece 1, ..., so that every owner has its first piece from everyone
 *   early and sums its pieces across the call (results/nodes.md).
 * - Concurrency: every receive (contributions and results) is posted when the call starts.
 *   Window 0: each contribution piece is sent as soon as it is encoded, each result piece as
 *   soon as it is summed, to every peer at once (up to size-1 pieces in flight per rank).
 *   Window W: the sends join one queue (apsmpi_rsag_sendq) in the order they become ready
 *   (contributions as encoded, results as summed) and at most W are in flight: a link
 *   direction then serves at most W peers at a time, whatever the rank count. */
int apsmpi_rsag_send_peer(const apsmpi_rsag_plan *p, int round);
int apsmpi_rsag_recv_peer(const apsmpi_rsag_plan *p, int round);
int apsmpi_rsag_encode_segment(const apsmpi_rsag_plan *p, int pos);
static inline int apsmpi_rsag_rounds(const apsmpi_rsag_plan *p) { return p->size - 1; }

/* The encoding cursor: the next piece to encode is piece j of segment order[pos]. */
typedef struct apsmpi_rsag_cursor {
    size_t pos, j;
} apsmpi_rsag_cursor;
/* Moves c to the next piece that exists, at or after c, in the plan's encoding order; 0 when
 * every piece is encoded. */
int apsmpi_rsag_encode_seek(const apsmpi_rsag_plan *p, apsmpi_rsag_cursor *c);
/* Moves c past the piece it names. */
void apsmpi_rsag_encode_step(const apsmpi_rsag_plan *p, apsmpi_rsag_cursor *c);
/* 1 when piece j of position pos comes before c in the encoding order (it is encoded). */
int apsmpi_rsag_encoded(const apsmpi_rsag_plan *p, const apsmpi_rsag_cursor *c, size_t pos, size_t j);

/* Segment seg's pieces, and piece j's elements and first element. */
size_t apsmpi_rsag_pieces(const apsmpi_rsag_plan *p, int seg);
size_t apsmpi_rsag_piece_len(const apsmpi_rsag_plan *p, int seg, size_t j);
size_t apsmpi_rsag_piece_first(const apsmpi_rsag_plan *p, int seg, size_t j);
/* Byte offset of piece j inside a segment's encoded bytes. */
size_t apsmpi_rsag_piece_offset(const apsmpi_rsag_plan *p, size_t j);

/* One message: to or from rank `peer`, with tag `tag` (added to the call's tag base), of
 * `bytes` bytes at byte `at` of its buffer (named with each function). */
typedef struct apsmpi_rsag_msg {
    int peer, tag;
    size_t at, bytes;
} apsmpi_rsag_msg;

/* Tags: contributions carry the piece number, result messages the piece number plus this. */
enum { APSMPI_RSAG_TAG_RESULT = APSMPI_MAX_PIECES };

/* Piece j of this rank's contribution to segment p->order[pos] (sent in round pos), in the
 * encoded input. */
apsmpi_rsag_msg apsmpi_rsag_contribution_out(const apsmpi_rsag_plan *p, int pos, size_t j);
/* Piece j of the contribution of recv_peer(round) to this rank's segment, in staging. */
apsmpi_rsag_msg apsmpi_rsag_contribution_in(const apsmpi_rsag_plan *p, int round, size_t j);
/* The result message of this rank's piece j to send_peer(round), in results. */
apsmpi_rsag_msg apsmpi_rsag_result_out(const apsmpi_rsag_plan *p, int round, size_t j);
/* The result message of piece j of recv_peer(round)'s segment, in results. */
apsmpi_rsag_msg apsmpi_rsag_result_in(const apsmpi_rsag_plan *p, int round, size_t j);
/* Byte offset in results of the slot of piece j of segment seg. */
size_t apsmpi_rsag_slot(const apsmpi_rsag_plan *p, int seg, size_t j);

/* The requests, by message: [round][j] for contributions in and results out (own pieces),
 * [piece0[seg] + j] for contributions out and results in (every piece). */
enum apsmpi_rsag_request_kind {
    APSMPI_RSAG_CONTRIB_IN,
    APSMPI_RSAG_RESULT_OUT,
    APSMPI_RSAG_CONTRIB_OUT,
    APSMPI_RSAG_RESULT_IN
};
size_t apsmpi_rsag_request_count(const apsmpi_rsag_plan *p, enum apsmpi_rsag_request_kind kind);
size_t apsmpi_rsag_request_first(const apsmpi_rsag_plan *p, enum apsmpi_rsag_request_kind kind);

/* One send: its message, the request (index among all requests) that posts it, and its
 * buffer: the results (1) or the encoded input (0). */
typedef struct apsmpi_rsag_send {
    apsmpi_rsag_msg m;
    size_t request;
    int result;
} apsmpi_rsag_send;

/* A windowed schedule's sends: a queue (p->sends entries, in rsag's memory at p->at_queue) in
 * the order they became ready, and the requests of those in flight, at most p->window. */
typedef struct apsmpi_rsag_sendq {
    apsmpi_rsag_send *queue;
    size_t head, tail;
    int window, in_flight;
    size_t flying[APSMPI_RSAG_MAX_WINDOW]; /* requests of the sends in flight */
} apsmpi_rsag_sendq;

/* An empty queue in p's bound memory. */
void apsmpi_rsag_sendq_init(apsmpi_rsag_sendq *q, const apsmpi_rsag_plan *p, void *mem);
/* Queues a ready send. */
void apsmpi_rsag_sendq_push(apsmpi_rsag_sendq *q, apsmpi_rsag_send s);
/* The next send to post, counted in flight, or NULL when the window is full or none waits. */
const apsmpi_rsag_send *apsmpi_rsag_sendq_next(apsmpi_rsag_sendq *q);
/* The send in flight at index i (0 .. in_flight-1) is complete: it leaves the window. */
void apsmpi_rsag_sendq_done(apsmpi_rsag_sendq *q, int i);
static inline int apsmpi_rsag_sendq_waiting(const apsmpi_rsag_sendq *q) { return q->head < q->tail; }

#endif
