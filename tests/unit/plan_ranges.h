/* plan_ranges.h: what the plans' unit tests share (include after cmocka.h): byte ranges of one buffer and the check that they lie inside it, apart. */
#ifndef APSMPI_TEST_PLAN_RANGES_H
#define APSMPI_TEST_PLAN_RANGES_H

#include <stdlib.h>

/* A byte range of one buffer. */
struct range {
    size_t at, bytes;
};

static int by_start(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The nr ranges lie inside [lo, hi) and apart (sorts them). */
static void check_apart(struct range *r, size_t nr, size_t lo, size_t hi)
{
    qsort(r, nr, sizeof *r, by_start);
    for (size_t i = 0; i < nr; i++) {
        assert_true(r[i].at >= lo && r[i].at + r[i].bytes <= hi);
        if (i > 0)
            assert_true(r[i - 1].at + r[i - 1].bytes <= r[i].at);
    }
}

#endif
