/* test_rsag_plan.c: unit tests of rsag's plan (algo/rsag_plan.c): 2-9 ranks with uneven counts simulated without MPI, every message matched, every buffer in bounds and apart. */
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
                     int allgather)
{
    s->n = n;
    s->counts = counts;
    for (int r = 0; r < n; r++) {
        apsmpi_rsag_plan_init(&s->plan[r], f, counts, n, r, piece, block_len, allgather, REQUEST_BYTES);
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

/* A byte range of one buffer, and the check that a set of them lie inside it, apart. */
struct range {
    size_t at, bytes;
};

static int by_start(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static void check_apart(struct range *r, size_t nr, size_t size)
{
    qsort(r, nr, sizeof *r, by_start);
    for (size_t i = 0; i < nr; i++) {
        assert_true(r[i].at + r[i].bytes <= size);
        if (i > 0)
            assert_true(r[i - 1].at + r[i - 1].bytes <= r[i].at);
    }
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
        check_apart(ranges, nr, p->packed_bytes);
        nr = 0;
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++) /* the contributions received */
            for (size_t j = 0; j < p->own_pieces; j++) {
                apsmpi_rsag_msg m = apsmpi_rsag_contribution_in(p, t, j);
                ranges[nr++] = (struct range){m.at, m.bytes};
            }
        check_apart(ranges, nr, p->staging_bytes);
        nr = 0;
        for (int seg = 0; seg < s->n; seg++) /* a slot for every piece: this rank's and received */
            for (size_t j = 0; j < apsmpi_rsag_pieces(p, seg); j++) {
                size_t len = apsmpi_rsag_piece_len(p, seg, j);
                size_t bytes = apsmpi_result_message_bytes(p->f, len, p->block_len);
                assert_true(apsmpi_result_scale_bytes(p->f, len, p->block_len) + apsmpi_packed_bytes(p->f, len) <=
                            bytes);
                ranges[nr++] = (struct range){apsmpi_rsag_slot(p, seg, j), bytes};
            }
        check_apart(ranges, nr, results);
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
        check_apart(ranges, nr, p->memory_bytes);
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

static void run_case(const char *format, const int *counts, int n, size_t piece, size_t block_len)
{
    apsmpi_format f;
    struct sim s;

    assert_int_equal(apsmpi_format_parse(format, &f), 0);
    for (int allgather = 0; allgather <= 1; allgather++) {
        sim_init(&s, &f, counts, n, piece, block_len, allgather);
        check_pieces(&s);
        check_schedule(&s);
        check_messages(&s);
        check_buffers(&s);
        check_sums(&s);
        sim_free(&s);
    }
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

/* A segment with more pieces than the tag bound allows grows the piece. */
static void test_tag_bound_grows_pieces(void **state)
{
    static const int big[] = {64 * 16384, 64 * 16384 * 3 + 5, 17};
    apsmpi_format f;
    apsmpi_rsag_plan p;

    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    apsmpi_rsag_plan_init(&p, &f, big, 3, 1, 64, 4096, 1, REQUEST_BYTES);
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
    apsmpi_rsag_plan_init(&p, &f, counts, 3, 0, 0, 4096, 1, REQUEST_BYTES);
    assert_int_equal(p.piece, 7040);
    assert_int_equal(p.all_pieces, 2);
    assert_int_equal(p.own_pieces, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uneven_counts_2_to_9_ranks),
        cmocka_unit_test(test_equal_and_empty_segments),
        cmocka_unit_test(test_tag_bound_grows_pieces),
        cmocka_unit_test(test_one_piece_per_segment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
