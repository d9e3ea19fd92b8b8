/* test_node_plan.c: unit tests of the node path's plan (algo/node_plan.c): batches and parts simulated on uneven nodes without MPI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "algo/node_plan.h"

enum { MAX_NODE = 9 };

/* Batches tile [0, n) in order, each but the last whole units of the batch size. */
static void check_batches(const apsmpi_node_plan *p)
{
    size_t next = 0;

    assert_true(p->batches >= 1);
    for (size_t k = 0; k < p->batches; k++) {
        size_t len = apsmpi_node_batch_len(p, k);
        assert_int_equal(apsmpi_node_batch_first(p, k), next);
        assert_true(len > 0 && len <= p->batch);
        if (k + 1 < p->batches) {
            assert_int_equal(len, p->batch);
            assert_int_equal(len % p->unit, 0);
        }
        next += len;
    }
    assert_int_equal(next, p->n);
}

/* The parts of every batch: they tile it, each starts on a whole unit of the buffer (a
 * scaling block), the parts of ranks beyond the smallest node are empty (those ranks have no
 * peer on the smallest node to sum across with), and each fits the part buffer. Then the sum
 * simulated over nodes of these sizes: every element gets each rank's value once. */
static void check_parts(const apsmpi_node_plan *p, const int *node_sizes, int nnodes)
{
    int counts[MAX_NODE], firsts[MAX_NODE];

    for (size_t k = 0; k < p->batches; k++) {
        size_t first = apsmpi_node_batch_first(p, k), len = apsmpi_node_batch_len(p, k), next = 0;
        apsmpi_node_parts(len, p->unit, p->min_node_size, p->node_size, counts, firsts);
        for (int q = 0; q < p->node_size; q++) {
            assert_int_equal((size_t)firsts[q], next);
            assert_true(counts[q] >= 0 && (size_t)counts[q] <= p->part_max);
            if (counts[q] > 0)
                assert_int_equal((first + (size_t)firsts[q]) % p->unit, 0);
            if (q >= p->min_node_size)
                assert_int_equal(counts[q], 0);
            next += (size_t)counts[q];
        }
        assert_int_equal(next, len);
        /* simulated: node rank q holds part q summed over its node, the ranks q of all nodes
         * sum it across nodes (a part that is not empty has a rank q on every node), and the
         * gather hands it to every rank: every rank's value counted once in every element */
        for (int q = 0; q < p->node_size; q++) {
            unsigned summed = 0, all = 0;
            int id = 0;
            if (counts[q] == 0)
                continue;
            for (int node = 0; node < nnodes; node++) {
                unsigned node_sum = 0;
                assert_true(q < node_sizes[node]);
                for (int i = 0; i < node_sizes[node]; i++, id++) {
                    node_sum |= 1u << id;
                    all |= 1u << id;
                }
                assert_int_equal(summed & node_sum, 0);
                summed |= node_sum;
            }
            assert_int_equal(summed, all);
        }
    }
}

/* The node path's memory: counts and firsts of every slot, the part buffers, the state of one
 * part's reduction, each inside the plan's bytes and apart. */
static void check_memory(const apsmpi_node_plan *p)
{
    size_t ints = 2 * APSMPI_NODE_SLOTS * (size_t)p->node_size * sizeof(int);
    size_t parts = APSMPI_NODE_SLOTS * p->part_max * sizeof(float);

    assert_true(ints <= p->at_parts);
    assert_true(p->at_parts + parts <= p->at_part_state);
    assert_true(p->at_part_state + p->part_state_bytes <= p->memory_bytes);
    assert_int_equal(p->at_parts % 64, 0);
    assert_int_equal(p->at_part_state % 64, 0);
}

static void run_case(size_t n, size_t unit, size_t batch_elems, const int *node_sizes, int nnodes)
{
    int min = node_sizes[0];

    for (int i = 1; i < nnodes; i++)
        if (node_sizes[i] < min)
            min = node_sizes[i];
    for (int node = 0; node < nnodes; node++)
        for (int rank = 0; rank < node_sizes[node]; rank++) {
            apsmpi_node_plan p;
            apsmpi_node_plan_init(&p, n, unit, batch_elems, node_sizes[node], rank, min, 1000);
            check_batches(&p);
            check_parts(&p, node_sizes, nnodes);
            check_memory(&p);
        }
}

static void test_uneven_nodes(void **state)
{
    static const int layouts[][4] = {{2, 2}, {1, 2, 3}, {3, 1}, {4, 4, 4}, {2, 5, 3, 2}, {9, 9}};
    static const int nnodes[] = {2, 3, 2, 3, 4, 2};
    static const size_t sizes[] = {1, 63, 64, 4095, 4096, 4097, 70001, 300001, 1 << 20};
    static const size_t units[] = {64, 4096};
    static const size_t batches[] = {0, 20224, 1 << 20};

    for (size_t l = 0; l < sizeof nnodes / sizeof *nnodes; l++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (size_t u = 0; u < sizeof units / sizeof *units; u++)
                for (size_t b = 0; b < sizeof batches / sizeof *batches; b++)
                    run_case(sizes[s], units[u], batches[b], layouts[l], nnodes[l]);
}

/* The batch size: the asked size in whole units, or the whole buffer. */
static void test_batch_size(void **state)
{
    apsmpi_node_plan p;

    apsmpi_node_plan_init(&p, 300001, 4096, 200192, 2, 0, 1, 0);
    assert_int_equal(p.batch, 200704);
    assert_int_equal(p.batches, 2);
    apsmpi_node_plan_init(&p, 300001, 4096, 0, 2, 0, 1, 0);
    assert_int_equal(p.batch, 300001);
    assert_int_equal(p.batches, 1);
    apsmpi_node_plan_init(&p, 1000, 64, 5000, 3, 2, 3, 0);
    assert_int_equal(p.batches, 1);
}

/* Parts of whole units, the first ones one unit larger when they do not divide evenly. */
static void test_parts_in_units(void **state)
{
    int counts[4], firsts[4];

    apsmpi_node_parts(10 * 64 + 5, 64, 3, 4, counts, firsts);
    assert_int_equal(counts[0], 4 * 64);
    assert_int_equal(counts[1], 4 * 64);
    assert_int_equal(counts[2], 2 * 64 + 5);
    assert_int_equal(counts[3], 0);
    assert_int_equal(firsts[3], 10 * 64 + 5);
}

/* A part across fewer than APSMPI_NODE_WINDOW_NODES nodes keeps one message in flight whatever
 * window rsag has, across more it takes rsag's; 0 (all at once, the schedule before the window)
 * stays 0. */
static void test_part_window(void **state)
{
    (void)state;
    assert_int_equal(APSMPI_NODE_WINDOW_NODES, 8);
    for (int nodes = 2; nodes <= 4096; nodes *= 2) {
        int many = nodes >= APSMPI_NODE_WINDOW_NODES;
        assert_int_equal(apsmpi_node_part_window(0, nodes), 0);
        assert_int_equal(apsmpi_node_part_window(1, nodes), 1);
        assert_int_equal(apsmpi_node_part_window(4, nodes), many ? 4 : 1);
        assert_int_equal(apsmpi_node_part_window(64, nodes), many ? 64 : 1);
    }
    assert_int_equal(apsmpi_node_part_window(4, 7), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uneven_nodes),
        cmocka_unit_test(test_batch_size),
        cmocka_unit_test(test_parts_in_units),
        cmocka_unit_test(test_part_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
