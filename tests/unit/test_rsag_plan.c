/* test_rsag_plan.c: unit tests of rsag's plan (algo/rsag_plan.c): 2-9 ranks with uneven counts simulated without MPI, every message matched, every buffer in bounds and apart, the schedule run to its end in random order within its window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "algo/rsag_plan.h"
#include "core/format.h"
#include "core/packed_layout.h"
#include "plan_ranges.h"

enum { MAX_RANKS = 9 };

/* The size of an MPI_Request the plans are given (8 in Open MPI, 4 in MPICH): any will do. */
#define REQUEST_BYTES 8

/* Every rank's plan of one call, as each rank makes it, with its memory. */
struct sim {
    int n;
    const int *counts;
    apsmpi_rsag_plan plan[MAX_RANKS];
    void *mem[MAX_RANKS];
};

static void sim_init(struct sim *s, const apsmpi_format *f, const int *counts, int n, size_t piece, size_t block_len,
                     int allgather, int window)
{
    s->n = n;
    s->counts = counts;
    for (int r = 0; r < n; r++) {
        apsmpi_rsag_plan_init(&s->plan[r], f, counts, n, r, piece, block_len, allgather, window, REQUEST_BYTES);
        assert_int_equal(posix_memalign(&s->mem[r], 64, s->plan[r].memory_bytes), 0);
        memset(s->mem[r], 0xa5, s->plan[r].memory_bytes);
        apsmpi_rsag_plan_bind(&s->plan[r], s->mem[r]);
    }
}

static void sim_free(struct sim *s)
{
    for (int r = 0; r < s->n; r++)
        free(s->mem[r]);
}

/* The round in which rank p receives from rank `from` (rsag_plan.h's schedule). */
static int round_from(const apsmpi_rsag_plan *p, int from)
{
    for (int t = 0; t < apsmpi_rsag_rounds(p); t++)
        if (apsmpi_rsag_recv_peer(p, t) == from)
            return t;
    fail_msg("rank %d never receives from rank %d", p->rank, from);
    return -1;
}

/* Pieces tile each segment in order, whole slices of 64 but the last, under the tag bound. */
static void check_pieces(const struct sim *s)
{
    const apsmpi_rsag_plan *p = &s->plan[0];
    size_t first = 0;

    assert_int_equal(p->piece % 64, 0);
    for (int seg = 0; seg < s->n; seg++) {
        size_t next = first;
        assert_int_equal(p->first[seg], first);
        assert_true(apsmpi_rsag_pieces(p, seg) < APSMPI_MAX_PIECES);
        for (size_t j = 0; j < apsmpi_rsag_pieces(p, seg); j++) {
            size_t len = apsmpi_rsag_piece_len(p, seg, j);
            assert_int_equal(apsmpi_rsag_piece_first(p, seg, j), next);
            assert_true(len > 0 && len <= p->piece);
            if (j + 1 < apsmpi_rsag_pieces(p, seg))
                assert_int_equal(len, p->piece);
            next += len;
        }
        assert_int_equal(next, first + (size_t)s->counts[seg]);
        first = next;
    }
}

/* The schedule: each round pairs every rank with a different peer, the two directions agree,
 * and the encoding order is a permutation with this rank's own segment last. */
static void check_schedule(const struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        const apsmpi_rsag_plan *p = &s->plan[r];
        int seen[MAX_RANKS] = {0};
        assert_int_equal(apsmpi_rsag_rounds(p), s->n - 1);
        for (int pos = 0; pos < s->n; pos++) {
            int seg = p->order[pos];
            assert_int_equal(seg, apsmpi_rsag_encode_segment(p, pos));
            assert_int_equal(seen[seg]++, 0);
            if (pos < s->n - 1)
                assert_int_equal(seg, apsmpi_rsag_send_peer(p, pos));
        }
        assert_int_equal(p->order[s->n - 1], r);
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++) {
            int to = apsmpi_rsag_send_peer(p, t), from = apsmpi_rsag_recv_peer(p, t);
            assert_true(to != r && from != r);
            assert_int_equal(apsmpi_rsag_recv_peer(&s->plan[to], t), r);
            for (int q = 0; q < s->n; q++) /* at each round every rank sends to a different one */
                if (q != r)
                    assert_true(apsmpi_rsag_send_peer(&s->plan[q], t) != to);
        }
    }
}

/* Every message one rank's plan sends is one its peer's plan receives: same size, same tag. */
static void check_messages(const struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        const apsmpi_rsag_plan *p = &s->plan[r];
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++) {
            int to = apsmpi_rsag_send_peer(p, t);
            const apsmpi_rsag_plan *q = &s->plan[to];
            int t_in = round_from(q, r);
            assert_int_equal(apsmpi_rsag_pieces(p, to), q->own_pieces);
            for (size_t j = 0; j < apsmpi_rsag_pieces(p, to); j++) {
                apsmpi_rsag_msg out = apsmpi_rsag_contribution_out(p, t, j),
                                in = apsmpi_rsag_contribution_in(q, t_in, j);
                assert_int_equal(out.peer, to);
                assert_int_equal(in.peer, r);
                assert_int_equal(out.tag, in.tag);
                assert_int_equal(out.bytes, in.bytes);
                assert_int_equal(out.bytes, apsmpi_packed_bytes(p->f, apsmpi_rsag_piece_len(p, to, j)));
                assert_true(out.tag >= 0 && out.tag < APSMPI_RSAG_TAG_RESULT);
            }
            if (!p->allgather)
                continue;
            for (size_t j = 0; j < p->own_pieces; j++) { /* the owner's result to every other rank */
                apsmpi_rsag_msg out = apsmpi_rsag_result_out(p, t, j), in = apsmpi_rsag_result_in(q, t_in, j);
                assert_int_equal(out.peer, to);
                assert_int_equal(in.peer, r);
                assert_int_equal(out.tag, in.tag);
                assert_int_equal(out.bytes, in.bytes);
                assert_int_equal(out.bytes,
                                 apsmpi_result_message_bytes(p->f, apsmpi_rsag_piece_len(p, r, j), p->block_len));
                assert_true(out.tag >= APSMPI_RSAG_TAG_RESULT && out.tag < 32768);
            }
        }
    }
}

/* Each rank's buffers: the encoded input, the contributions received, the result slots and its
 * own memory's parts, each inside what the plan sized and apart from one another. */
static void check_buffers(const struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        const apsmpi_rsag_plan *p = &s->plan[r];
        struct range *ranges = calloc(p->all_pieces + (size_t)s->n * p->own_pieces + 16, sizeof *ranges);
        size_t nr = 0, results = p->result_bytes - p->staging_bytes;

        assert_non_null(ranges);
        assert_int_equal(p->packed_bytes, apsmpi_packed_segments(p->f, s->counts, s->n, NULL, NULL));
        for (int pos = 0; pos < s->n; pos++) /* the encoded input, every segment's pieces */
            for (size_t j = 0; j < apsmpi_rsag_pieces(p, p->order[pos]); j++) {
                apsmpi_rsag_msg m = apsmpi_rsag_contribution_out(p, pos, j);
                ranges[nr++] = (struct range){m.at, m.bytes};
            }
        check_apart(ranges, nr, 0, p->packed_bytes);
        nr = 0;
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++) /* the contributions received */
            for (size_t j = 0; j < p->own_pieces; j++) {
                apsmpi_rsag_msg m = apsmpi_rsag_contribution_in(p, t, j);
                ranges[nr++] = (struct range){m.at, m.bytes};
            }
        check_apart(ranges, nr, 0, p->staging_bytes);
        nr = 0;
        for (int seg = 0; seg < s->n; seg++) /* a slot for every piece: this rank's and received */
            for (size_t j = 0; j < apsmpi_rsag_pieces(p, seg); j++) {
                size_t len = apsmpi_rsag_piece_len(p, seg, j);
                size_t bytes = apsmpi_result_message_bytes(p->f, len, p->block_len);
                assert_true(apsmpi_result_scale_bytes(p->f, len, p->block_len) + apsmpi_packed_bytes(p->f, len) <=
                            bytes);
                ranges[nr++] = (struct range){apsmpi_rsag_slot(p, seg, j), bytes};
            }
        check_apart(ranges, nr, 0, results);
        for (int t = 0; p->allgather && t < apsmpi_rsag_rounds(p); t++)
            for (size_t j = 0; j < apsmpi_rsag_pieces(p, apsmpi_rsag_recv_peer(p, t)); j++)
                assert_int_equal(apsmpi_rsag_result_in(p, t, j).at,
                                 apsmpi_rsag_slot(p, apsmpi_rsag_recv_peer(p, t), j));
        /* rsag's own memory: the arrays, the requests, the fp32 sums (a piece and a decoded
         * piece, or the whole segment and a decoded piece) */
        nr = 0;
        ranges[nr++] = (struct range){0, (size_t)s->n * sizeof(size_t)};
        ranges[nr++] = (struct range){p->at_offset, (size_t)s->n * sizeof(size_t)};
        ranges[nr++] = (struct range){p->at_piece0, (size_t)s->n * sizeof(size_t)};
        ranges[nr++] = (struct range){p->at_slot0, (size_t)s->n * sizeof(size_t)};
        ranges[nr++] = (struct range){p->at_order, (size_t)s->n * sizeof(int)};
        ranges[nr++] = (struct range){p->at_requests, (apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_IN) +
                                                       apsmpi_rsag_request_count(p, APSMPI_RSAG_RESULT_IN)) *
                                                          REQUEST_BYTES};
        ranges[nr++] = (struct range){p->at_sum, p->sum_floats * sizeof(float)};
        if (p->window > 0 && p->sends > 0) /* the window's queue: one entry per send */
            ranges[nr++] = (struct range){p->at_queue, p->sends * sizeof(apsmpi_rsag_send)};
        check_apart(ranges, nr, 0, p->memory_bytes);
        assert_int_equal(p->sends,
                         p->all_pieces - p->own_pieces + (p->allgather ? (size_t)(s->n - 1) * p->own_pieces : 0));
        assert_int_equal(p->at_sum % 64, 0);
        assert_true(p->sum_floats >= (p->allgather ? 2 * p->piece : (size_t)s->counts[r] + p->piece));
        assert_int_equal(apsmpi_rsag_request_count(p, APSMPI_RSAG_CONTRIB_IN), (size_t)(s->n - 1) * p->own_pieces);
        assert_int_equal(apsmpi_rsag_request_first(p, APSMPI_RSAG_CONTRIB_OUT), 2 * (size_t)(s->n - 1) * p->own_pieces);
        for (int seg = 0; seg + 1 < s->n; seg++)
            assert_int_equal(p->piece0[seg + 1], p->piece0[seg] + apsmpi_rsag_pieces(p, seg));
        free(ranges);
    }
}

/* Every element of every segment is summed once per rank at its owner: the contributions of
 * the receive peers of every round, then the owner's own; and, with allgather, its result
 * reaches every other rank once. */
static void check_sums(const struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        const apsmpi_rsag_plan *p = &s->plan[r];
        unsigned summed = 1u << r, reached = 1u << r;
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++) {
            unsigned from = 1u << apsmpi_rsag_recv_peer(p, t), to = 1u << apsmpi_rsag_send_peer(p, t);
            assert_int_equal(summed & from, 0);
            summed |= from;
            assert_int_equal(reached & to, 0);
            reached |= to;
        }
        assert_int_equal(summed, (1u << s->n) - 1);
        assert_int_equal(reached, (1u << s->n) - 1);
    }
}

/* The encoding order: every piece of every position once, in the plan's order (piece-major
 * with a window: no piece j+1 before every piece j; segment-major without), and
 * apsmpi_rsag_encoded true of exactly the pieces passed. */
static void check_encode_order(const struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        const apsmpi_rsag_plan *p = &s->plan[r];
        apsmpi_rsag_cursor c = {0, 0};
        size_t seen = 0, last_pos = 0, last_j = 0;
        unsigned char *done = calloc(p->all_pieces + 1, 1);

        assert_non_null(done);
        assert_int_equal(p->piece_major, p->window > 0);
        while (apsmpi_rsag_encode_seek(p, &c)) {
            int seg = p->order[c.pos];
            assert_true(c.j < apsmpi_rsag_pieces(p, seg));
            assert_false(apsmpi_rsag_encoded(p, &c, c.pos, c.j));
            assert_int_equal(done[p->piece0[seg] + c.j]++, 0);
            if (seen > 0 && p->piece_major)
                assert_true(c.j > last_j || (c.j == last_j && c.pos > last_pos));
            if (seen > 0 && !p->piece_major)
                assert_true(c.pos > last_pos || (c.pos == last_pos && c.j > last_j));
            last_pos = c.pos;
            last_j = c.j;
            seen++;
            apsmpi_rsag_encode_step(p, &c);
            assert_true(apsmpi_rsag_encoded(p, &c, last_pos, last_j));
        }
        assert_int_equal(seen, p->all_pieces);
        for (int pos = 0; pos < s->n; pos++) /* past the end, everything is encoded */
            for (size_t j = 0; j < apsmpi_rsag_pieces(p, p->order[pos]); j++)
                assert_true(apsmpi_rsag_encoded(p, &c, (size_t)pos, j));
        free(done);
    }
}

/* One call run by every rank as rsag.c runs it, without MPI: a rank encodes in the plan's
 * order, sums its piece j once every contribution to it and its own piece j are there (then
 * sends the result), and posts its sends through the window's queue (or at once with window
 * 0); a message in flight is delivered, and its send completes, at a random later step. It
 * checks that every message is received by a receive of its peer's plan (same tag and size,
 * once), that no rank ever has more than `window` sends in flight, that the queue stays in
 * the plan's memory, and that the call ends: no order of delivery deadlocks it. */
struct simrank {
    apsmpi_rsag_cursor enc;
    apsmpi_rsag_sendq q;
    size_t j, pushed, c_in, r_in, flying;
    unsigned char *c_got, *r_got, *sent; /* contributions and results received; sends completed (by request) */
};

struct flight {
    int from;
    apsmpi_rsag_send send;
};

static unsigned long long lcg(unsigned long long *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void sim_post(const struct sim *s, struct simrank *k, int r, struct flight *net, size_t *nnet,
                     const apsmpi_rsag_send *send)
{
    const apsmpi_rsag_plan *p = &s->plan[r];
    size_t buffer = send->result ? p->result_bytes - p->staging_bytes : p->packed_bytes;

    assert_true(send->m.at + send->m.bytes <= buffer);
    net[(*nnet)++] = (struct flight){r, *send};
    k->flying++;
    if (p->window > 0)
        assert_true(k->flying <= (size_t)p->window);
}

static void sim_send(const struct sim *s, struct simrank *k, int r, struct flight *net, size_t *nnet,
                     apsmpi_rsag_send send)
{
    if (s->plan[r].window == 0) {
        sim_post(s, k, r, net, nnet, &send);
        return;
    }
    assert_true(k->pushed < s->plan[r].sends); /* inside the queue the plan sized */
    k->pushed++;
    apsmpi_rsag_sendq_push(&k->q, send);
}

/* The window: completed sends leave it, queued ones are posted. */
static void sim_pump(const struct sim *s, struct simrank *k, int r, struct flight *net, size_t *nnet)
{
    const apsmpi_rsag_send *send;

    for (int i = k->q.in_flight - 1; i >= 0; i--)
        if (k->sent[k->q.flying[i]])
            apsmpi_rsag_sendq_done(&k->q, i);
    while ((send = apsmpi_rsag_sendq_next(&k->q)) != NULL)
        sim_post(s, k, r, net, nnet, send);
}

/* One step of rank r: sum its next piece if it can, else encode one piece. 0 if it can do
 * neither. */
static int sim_work(const struct sim *s, struct simrank *k, int r, struct flight *net, size_t *nnet)
{
    const apsmpi_rsag_plan *p = &s->plan[r];
    int seg;

    if (k->j < p->own_pieces && apsmpi_rsag_encoded(p, &k->enc, (size_t)s->n - 1, k->j)) {
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++)
            if (!k->c_got[(size_t)t * p->own_pieces + k->j])
                goto encode;
        for (int t = 0; p->allgather && t < apsmpi_rsag_rounds(p); t++)
            sim_send(s, k, r, net, nnet,
                     (apsmpi_rsag_send){
                         apsmpi_rsag_result_out(p, t, k->j),
                         apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_OUT) + (size_t)t * p->own_pieces + k->j, 1});
        k->j++;
        return 1;
    }
encode:
    if (!apsmpi_rsag_encode_seek(p, &k->enc))
        return 0;
    seg = p->order[k->enc.pos];
    if (seg != r)
        sim_send(s, k, r, net, nnet,
                 (apsmpi_rsag_send){apsmpi_rsag_contribution_out(p, (int)k->enc.pos, k->enc.j),
                                    apsmpi_rsag_request_first(p, APSMPI_RSAG_CONTRIB_OUT) + p->piece0[seg] + k->enc.j,
                                    0});
    apsmpi_rsag_encode_step(p, &k->enc);
    return 1;
}

/* Message net[i] arrives: it must be one its receiver's plan posted a receive for. */
static void sim_deliver(const struct sim *s, struct simrank *k, struct flight *net, size_t *nnet, size_t i)
{
    struct flight fl = net[i];
    int to = fl.send.m.peer, t = round_from(&s->plan[to], fl.from);
    const apsmpi_rsag_plan *q = &s->plan[to];
    apsmpi_rsag_msg in;

    net[i] = net[--*nnet];
    if (fl.send.m.tag < APSMPI_RSAG_TAG_RESULT) {
        size_t j = (size_t)fl.send.m.tag;
        assert_true(j < q->own_pieces);
        in = apsmpi_rsag_contribution_in(q, t, j);
        assert_int_equal(k[to].c_got[(size_t)t * q->own_pieces + j]++, 0);
        k[to].c_in++;
    } else {
        size_t j = (size_t)(fl.send.m.tag - APSMPI_RSAG_TAG_RESULT);
        assert_true(q->allgather && j < apsmpi_rsag_pieces(q, fl.from));
        in = apsmpi_rsag_result_in(q, t, j);
        assert_int_equal(k[to].r_got[q->piece0[fl.from] + j]++, 0);
        k[to].r_in++;
    }
    assert_int_equal(in.peer, fl.from);
    assert_int_equal(in.tag, fl.send.m.tag);
    assert_int_equal(in.bytes, fl.send.m.bytes);
    assert_int_equal(k[fl.from].sent[fl.send.request]++, 0);
    k[fl.from].flying--;
}

static void check_run(const struct sim *s, unsigned long long seed)
{
    struct simrank k[MAX_RANKS];
    struct flight *net;
    size_t nnet = 0, total = 0;

    for (int r = 0; r < s->n; r++) {
        const apsmpi_rsag_plan *p = &s->plan[r];
        size_t reqs = apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_IN) + p->all_pieces;
        k[r] = (struct simrank){.c_got = calloc((size_t)s->n * p->own_pieces + 1, 1),
                                .r_got = calloc(p->all_pieces + 1, 1),
                                .sent = calloc(reqs + 1, 1)};
        assert_true(k[r].c_got && k[r].r_got && k[r].sent);
        apsmpi_rsag_sendq_init(&k[r].q, p, s->mem[r]);
        total += p->sends;
    }
    net = calloc(total + 1, sizeof *net);
    assert_non_null(net);
    for (;;) {
        int worked = 0;
        /* a random rank works (and keeps its window full), or a random message arrives */
        if (nnet > 0 && lcg(&seed) % 2 == 0) {
            sim_deliver(s, k, net, &nnet, lcg(&seed) % nnet);
            continue;
        }
        for (int tries = 0; tries < s->n && !worked; tries++) {
            int r = (int)(lcg(&seed) % (unsigned long long)s->n);
            sim_pump(s, &k[r], r, net, &nnet);
            worked = sim_work(s, &k[r], r, net, &nnet);
            sim_pump(s, &k[r], r, net, &nnet);
        }
        for (int r = 0; r < s->n && !worked; r++) { /* every rank, before deciding nothing is left */
            sim_pump(s, &k[r], r, net, &nnet);
            worked = sim_work(s, &k[r], r, net, &nnet);
            sim_pump(s, &k[r], r, net, &nnet);
        }
        if (!worked && nnet == 0)
            break;
    }
    for (int r = 0; r < s->n; r++) { /* the end: every message of the plan went, once */
        const apsmpi_rsag_plan *p = &s->plan[r];
        assert_int_equal(k[r].j, p->own_pieces);
        assert_int_equal(k[r].c_in, (size_t)(s->n - 1) * p->own_pieces);
        assert_int_equal(k[r].r_in, p->allgather ? p->all_pieces - p->own_pieces : 0);
        assert_false(apsmpi_rsag_sendq_waiting(&k[r].q));
        assert_int_equal(k[r].flying, 0);
        if (p->window > 0)
            assert_int_equal(k[r].pushed, p->sends);
        free(k[r].c_got);
        free(k[r].r_got);
        free(k[r].sent);
    }
    free(net);
}

static void run_windows(const char *format, const int *counts, int n, size_t piece, size_t block_len,
                        const int *windows, size_t nwindows)
{
    apsmpi_format f;
    struct sim s;

    assert_int_equal(apsmpi_format_parse(format, &f), 0);
    for (int allgather = 0; allgather <= 1; allgather++)
        for (size_t w = 0; w < nwindows; w++) {
            sim_init(&s, &f, counts, n, piece, block_len, allgather, windows[w]);
            check_pieces(&s);
            check_schedule(&s);
            check_messages(&s);
            check_buffers(&s);
            check_sums(&s);
            check_encode_order(&s);
            check_run(&s, (unsigned long long)(n * 131 + windows[w] * 7 + allgather) + piece);
            sim_free(&s);
        }
}

/* The schedule of today (window 2, piece-major) and the earlier one (window 0). */
static void run_case(const char *format, const int *counts, int n, size_t piece, size_t block_len)
{
    static const int windows[] = {0, 2};
    run_windows(format, counts, n, piece, block_len, windows, 2);
}

/* 2 to 9 ranks, uneven counts with zeros, in every packing (8, 6, 7, 16 and 4 bits), pieces
 * of one slice, several slices, or one per segment, blocks smaller and larger than a piece. */
static void test_uneven_counts_2_to_9_ranks(void **state)
{
    static const int counts[MAX_RANKS] = {1000, 0, 64, 70001, 3, 0, 4097, 640, 1};
    static const char *formats[] = {"e4m3", "e3m2", "e3m3", "fp16", "e2m1"};
    static const size_t pieces[] = {0, 64, 192, 4096};
    static const size_t blocks[] = {64, 4096, 100000};

    for (int n = 2; n <= MAX_RANKS; n++)
        for (size_t fi = 0; fi < sizeof formats / sizeof *formats; fi++)
            for (size_t pi = 0; pi < sizeof pieces / sizeof *pieces; pi++)
                for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++)
                    run_case(formats[fi], counts, n, pieces[pi], blocks[bi]);
}

static void test_equal_and_empty_segments(void **state)
{
    static const int even[] = {6400, 6400, 6400, 6400};
    static const int zeros[] = {0, 0, 0};
    static const int one[] = {0, 0, 5, 0, 0};

    run_case("e4m3", even, 4, 640, 4096);
    run_case("e5m2", zeros, 3, 64, 4096);
    run_case("e3m2", one, 5, 0, 4096);
}

/* Other windows: one message in flight (pairwise rounds), a few, more than the peers, and the
 * bound (larger ones are cut to it). */
static void test_windows(void **state)
{
    static const int counts[MAX_RANKS] = {1000, 0, 64, 70001, 3, 0, 4097, 640, 1};
    static const int windows[] = {1, 3, 7, APSMPI_RSAG_MAX_WINDOW, 1000};
    apsmpi_format f;
    apsmpi_rsag_plan p;

    for (int n = 2; n <= MAX_RANKS; n++) {
        run_windows("e4m3", counts, n, 192, 4096, windows, sizeof windows / sizeof *windows);
        run_windows("e3m2", counts, n, 0, 64, windows, sizeof windows / sizeof *windows);
    }
    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    apsmpi_rsag_plan_init(&p, &f, counts, 4, 0, 64, 4096, 1, 1000, REQUEST_BYTES);
    assert_int_equal(p.window, APSMPI_RSAG_MAX_WINDOW);
}

/* A segment with more pieces than the tag bound allows grows the piece. */
static void test_tag_bound_grows_pieces(void **state)
{
    static const int big[] = {64 * 16384, 64 * 16384 * 3 + 5, 17};
    apsmpi_format f;
    apsmpi_rsag_plan p;

    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    apsmpi_rsag_plan_init(&p, &f, big, 3, 1, 64, 4096, 1, 2, REQUEST_BYTES);
    assert_int_equal(p.piece, 256);
    run_case("e4m3", big, 3, 64, 4096);
}

/* Not pipelined (piece 0): one piece per segment, the largest in whole slices of 64. */
static void test_one_piece_per_segment(void **state)
{
    static const int counts[] = {100, 7000, 0};
    apsmpi_format f;
    apsmpi_rsag_plan p;

    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    apsmpi_rsag_plan_init(&p, &f, counts, 3, 0, 0, 4096, 1, 2, REQUEST_BYTES);
    assert_int_equal(p.piece, 7040);
    assert_int_equal(p.all_pieces, 2);
    assert_int_equal(p.own_pieces, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uneven_counts_2_to_9_ranks),
        cmocka_unit_test(test_equal_and_empty_segments),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_tag_bound_grows_pieces),
        cmocka_unit_test(test_one_piece_per_segment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
