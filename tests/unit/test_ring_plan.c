/* test_ring_plan.c: unit tests of the ring's arithmetic (algo/ring_plan.c), a whole ring simulated without MPI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "algo/ring_plan.h"
#include "core/format.h"
#include "core/packed_layout.h"

enum { MAX_RANKS = 7 };

/* A ring of nranks plans on the same counts, as every rank makes it. */
struct sim {
    int n;
    const int *counts;
    size_t first[MAX_RANKS], offset[MAX_RANKS], bytes;
    apsmpi_ring_plan plan[MAX_RANKS];
};

static void sim_init(struct sim *s, const apsmpi_format *f, const int *counts, int n, size_t piece, int allgather)
{
    s->n = n;
    s->counts = counts;
    s->bytes = apsmpi_packed_segments(f, counts, n, s->first, s->offset);
    for (int r = 0; r < n; r++)
        apsmpi_ring_plan_init(&s->plan[r], counts, s->first, s->offset, n, r, piece, apsmpi_group_elems(f),
                              apsmpi_group_bytes(f), allgather);
}

/* Pieces tile each segment exactly, in order, on group boundaries, inside the packed buffer. */
static void check_pieces(const struct sim *s)
{
    const apsmpi_ring_plan *p = &s->plan[0];
    for (int seg = 0; seg < s->n; seg++) {
        size_t next = s->first[seg];
        assert_true(apsmpi_ring_pieces(p, seg) < APSMPI_RING_MAX_PIECES);
        for (size_t j = 0; j < apsmpi_ring_pieces(p, seg); j++) {
            size_t len = apsmpi_ring_piece_len(p, seg, j), off = apsmpi_ring_piece_offset(p, seg, j);
            assert_int_equal(apsmpi_ring_piece_first(p, seg, j), next);
            assert_true(len > 0 && len <= p->piece);
            assert_int_equal((apsmpi_ring_piece_first(p, seg, j) - s->first[seg]) % p->gelems, 0);
            assert_true(off + (size_t)apsmpi_ring_piece_groups(p, seg, j) * p->gbytes <= s->bytes);
            assert_int_equal(apsmpi_ring_piece_tag(j), (int)j);
            next += len;
        }
        assert_int_equal(next, s->first[seg] + (size_t)s->counts[seg]);
    }
}

/* Simulates every step: holds[r][seg] is the set of ranks whose data rank r holds summed for
 * segment seg. Each message must go where its receiver expects it, sums must never count a
 * rank twice, and the end must be the reduce-scatter (or allreduce) result. */
static void simulate(const struct sim *s, int allgather)
{
    unsigned holds[MAX_RANKS][MAX_RANKS], sent[MAX_RANKS];
    unsigned all = (1u << s->n) - 1;
    int last = s->plan[0].last_step, decoded[MAX_RANKS][MAX_RANKS] = {{0}};

    assert_int_equal(last, (allgather ? 2 : 1) * (s->n - 1) - 1);
    for (int r = 0; r < s->n; r++)
        for (int seg = 0; seg < s->n; seg++)
            holds[r][seg] = 1u << r;
    for (int step = 0; step <= last; step++) {
        for (int r = 0; r < s->n; r++) /* what each rank sends this step, before anyone receives */
            sent[r] = holds[r][apsmpi_ring_send_segment(&s->plan[r], step)];
        for (int r = 0; r < s->n; r++) {
            const apsmpi_ring_plan *p = &s->plan[r];
            int left = (r + s->n - 1) % s->n, seg = apsmpi_ring_recv_segment(p, step);
            assert_int_equal(seg, apsmpi_ring_send_segment(&s->plan[left], step));
            assert_int_equal(apsmpi_ring_pieces(p, seg), apsmpi_ring_pieces(&s->plan[left], seg));
            if (apsmpi_ring_is_reduce_step(p, step)) {
                assert_int_equal(holds[r][seg] & sent[left], 0);
                holds[r][seg] |= sent[left];
            } else {
                holds[r][seg] = sent[left];
            }
            if (apsmpi_ring_is_final(p, step)) {
                assert_int_equal(holds[r][seg], all);
                decoded[r][seg]++;
            }
            /* the segment sent at the next step is the one just received */
            if (step < last)
                assert_int_equal(apsmpi_ring_send_segment(p, step + 1), seg);
        }
    }
    for (int r = 0; r < s->n; r++)
        for (int seg = 0; seg < s->n; seg++)
            assert_int_equal(decoded[r][seg], allgather || seg == r ? 1 : 0);
}

/* Encoding order: a permutation, its first segment the one sent at step 0 and then each
 * segment before the step that sums into it; position is its inverse. */
static void check_order(const struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        int seen[MAX_RANKS] = {0};
        for (int pos = 0; pos < s->n; pos++) {
            int seg = apsmpi_ring_encode_segment(r, s->n, pos);
            assert_int_equal(seen[seg]++, 0);
            assert_int_equal(apsmpi_ring_encode_position(r, s->n, seg), pos);
        }
        assert_int_equal(apsmpi_ring_encode_segment(r, s->n, 0), apsmpi_ring_send_segment(&s->plan[r], 0));
        for (int step = 0; step < s->n - 1; step++)
            assert_int_equal(apsmpi_ring_encode_segment(r, s->n, step + 1),
                             apsmpi_ring_recv_segment(&s->plan[r], step));
    }
}

static void run_case(const char *format, const int *counts, int n, size_t piece)
{
    apsmpi_format f;
    struct sim s;

    assert_int_equal(apsmpi_format_parse(format, &f), 0);
    for (int allgather = 0; allgather <= 1; allgather++) {
        sim_init(&s, &f, counts, n, piece, allgather);
        check_pieces(&s);
        check_order(&s);
        simulate(&s, allgather);
    }
}

static void test_even_and_uneven_segments(void **state)
{
    static const int even[] = {6400, 6400, 6400, 6400};
    static const int uneven[] = {1000, 0, 64, 70001, 3};
    static const int two[] = {128, 1};

    run_case("e4m3", even, 4, 640);
    run_case("e3m2", uneven, 5, 192); /* 6-bit: groups of 4 elements in 3 bytes */
    run_case("e3m3", uneven, 5, 64);  /* 7-bit: groups of 8 elements in 7 bytes */
    run_case("fp16", two, 2, 64);
}

static void test_tag_bound_grows_pieces(void **state)
{
    static const int big[] = {64 * 16384, 64 * 16384 * 3 + 5, 17};
    size_t piece = apsmpi_ring_piece_elems(big, 3, 64);

    assert_int_equal(piece, 256);
    assert_true(apsmpi_ring_max_pieces(big, 3, piece) < APSMPI_RING_MAX_PIECES);
    assert_true(apsmpi_ring_max_pieces(big, 3, piece / 2) >= APSMPI_RING_MAX_PIECES);
    run_case("e4m3", big, 3, 64);
}

static void test_empty_segments_take_one_slot(void **state)
{
    static const int zeros[] = {0, 0, 0};
    assert_int_equal(apsmpi_ring_max_pieces(zeros, 3, 64), 1);
    run_case("e5m2", zeros, 3, 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_even_and_uneven_segments),
        cmocka_unit_test(test_tag_bound_grows_pieces),
        cmocka_unit_test(test_empty_segments_take_one_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
