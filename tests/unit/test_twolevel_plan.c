/* test_twolevel_plan.c: unit tests of the two-level schedule's plan (algo/twolevel_plan.c): its shapes, 2-40 ranks simulated without MPI, every message matched, every buffer in bounds and apart, each cell summed over every rank once, run to its end in random delivery order within its window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "algo/twolevel_plan.h"
#include "core/format.h"
#include "core/packed_layout.h"
#include "plan_ranges.h"

enum { MAX_RANKS = 40 };

/* The size of an MPI_Request the plans are given (8 in Open MPI, 4 in MPICH): any will do. */
#define REQUEST_BYTES 8

/* Every rank's plan of one call, as each rank makes it, with its memory. */
struct sim {
    int n;
    apsmpi_twolevel_plan plan[MAX_RANKS];
    void *mem[MAX_RANKS];
};

static void sim_init(struct sim *s, const apsmpi_format *f, int n, size_t count, size_t block_len, int window)
{
    s->n = n;
    for (int r = 0; r < n; r++) {
        apsmpi_twolevel_plan *p = &s->plan[r];
        apsmpi_twolevel_plan_init(p, f, n, r, count, block_len, window, REQUEST_BYTES);
        assert_int_equal(posix_memalign(&s->mem[r], 64, p->memory_bytes), 0);
        memset(s->mem[r], 0xa5, p->memory_bytes);
        apsmpi_twolevel_plan_bind(p, s->mem[r]);
    }
}

static void sim_free(struct sim *s)
{
    for (int r = 0; r < s->n; r++)
        free(s->mem[r]);
}

/* The shape: groups of M (the last one of at least M/2) that hold every rank, M from
 * ceil(sqrt(N)), an exact divisor where one is near; the powers of two of the study square or
 * nearly so. */
static void test_shapes(void **state)
{
    int m, g, last;

    for (int n = 2; n <= 5000; n++) {
        int root = 1;
        while (root * root < n)
            root++;
        apsmpi_twolevel_shape(n, &m, &g, &last);
        assert_int_equal((g - 1) * m + last, n);
        assert_true(last >= 1 && last <= m && 2 * last >= m);
        assert_true(m >= root && m <= 2 * root + 2);
    }
    apsmpi_twolevel_shape(1024, &m, &g, &last);
    assert_true(m == 32 && g == 32 && last == 32);
    apsmpi_twolevel_shape(4096, &m, &g, &last);
    assert_true(m == 64 && g == 64);
    apsmpi_twolevel_shape(512, &m, &g, &last);
    assert_true(m == 32 && g == 16 && last == 32);
    apsmpi_twolevel_shape(128, &m, &g, &last);
    assert_true(m == 16 && g == 8);
    apsmpi_twolevel_shape(7, &m, &g, &last); /* a prime: 4 and 3 */
    assert_true(m == 4 && g == 2 && last == 3);
    apsmpi_twolevel_shape(1021, &m, &g, &last);
    assert_true(m == 32 && g == 32 && last == 29);
    /* from APSMPI_TWOLEVEL_FROM ranks; small calls (at most 2^18 elements) from a quarter of it */
    assert_false(apsmpi_twolevel_chosen(1000, 1000000, 0, 0));
    assert_false(apsmpi_twolevel_chosen(1000, 1000, 0, 0));
    assert_false(apsmpi_twolevel_chosen(255, APSMPI_TWOLEVEL_SMALL + 1, 256, 0));
    assert_true(apsmpi_twolevel_chosen(256, APSMPI_TWOLEVEL_SMALL + 1, 256, 0));
    assert_true(apsmpi_twolevel_chosen(64, APSMPI_TWOLEVEL_SMALL, 256, 0));
    assert_false(apsmpi_twolevel_chosen(63, APSMPI_TWOLEVEL_SMALL, 256, 0));
    assert_true(apsmpi_twolevel_chosen(4, 1000000, 2, 0));
    assert_true(apsmpi_twolevel_chosen(2, 1000, 2, 0));
    assert_false(apsmpi_twolevel_chosen(1, 1000, 2, 0));
    assert_true(apsmpi_twolevel_chosen(4, 1000, 15, 0)); /* ceil(15 / 4) */
    assert_false(apsmpi_twolevel_chosen(3, 1000, 15, 0));
    /* a flat call over several nodes of several ranks: from 2 ranks, but never with 0 */
    assert_true(apsmpi_twolevel_chosen(16, 1u << 24, 256, 1));
    assert_true(apsmpi_twolevel_chosen(2, 1u << 24, 256, 1));
    assert_false(apsmpi_twolevel_chosen(16, 1u << 24, 0, 1));
}

/* Cells tile the buffer in order, whole slices of 64 but the last; stripes are their cells;
 * each rank owns the stripes of its place in its group, one or two. */
static void check_cells(const struct sim *s, size_t count)
{
    const apsmpi_twolevel_plan *p = &s->plan[0];
    size_t next = 0;

    assert_int_equal(p->cell % 64, 0);
    for (int i = 0; i < p->group_size; i++) {
        assert_int_equal(apsmpi_twolevel_stripe_first(p, i), next);
        for (int g = 0; g < p->groups; g++) {
            size_t len = apsmpi_twolevel_cell_len(p, i, g);
            assert_int_equal(apsmpi_twolevel_cell_first(p, i, g), next);
            assert_true(len <= p->cell);
            if (next + len < count)
                assert_int_equal(len, p->cell);
            next += len;
        }
        assert_int_equal(next, apsmpi_twolevel_stripe_first(p, i) + apsmpi_twolevel_stripe_len(p, i));
    }
    assert_int_equal(next, count);
    for (int r = 0; r < s->n; r++) {
        const apsmpi_twolevel_plan *q = &s->plan[r];
        int owned = 0;
        assert_int_equal(apsmpi_twolevel_rank_of(q, q->group, q->member), r);
        for (int i = 0; i < q->group_size; i++)
            owned += apsmpi_twolevel_owner(i, q->my_size) == q->member;
        assert_int_equal(owned, q->own);
        assert_true(q->own >= 1 && q->own <= 2);
        for (int sl = 0; sl < q->own; sl++)
            assert_int_equal(apsmpi_twolevel_owner(apsmpi_twolevel_own_stripe(q, sl), q->my_size), q->member);
    }
}

/* The encoding order is every stripe once, this rank's own last; the gather order every other
 * stripe once. */
static void check_orders(const struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        const apsmpi_twolevel_plan *p = &s->plan[r];
        int seen[4096] = {0}, gseen[4096] = {0}, others = p->group_size - p->own;
        for (int pos = 0; pos < p->group_size; pos++) {
            int j = p->order[pos];
            int mine = apsmpi_twolevel_owner(j, p->my_size) == p->member;
            assert_int_equal(seen[j]++, 0);
            assert_int_equal(mine, pos >= others);
        }
        for (int pos = 0; pos < others; pos++) {
            int j = apsmpi_twolevel_gather_stripe(p, pos);
            assert_true(apsmpi_twolevel_owner(j, p->my_size) != p->member);
            assert_int_equal(gseen[j]++, 0);
        }
    }
}

/* One receive a rank's plan posts: its message and the request it completes. */
struct recv {
    apsmpi_rsag_msg m;
    size_t request;
    int got;
};

struct rank_recvs {
    struct recv *r;
    size_t n;
};

static void add_recv(struct rank_recvs *rr, apsmpi_rsag_msg m, size_t request)
{
    rr->r[rr->n++] = (struct recv){m, request, 0};
}

/* Every receive of rank r's plan, as twolevel.c posts them; their buffers inside the second
 * encoded buffer's regions and apart. */
static void rank_receives(const apsmpi_twolevel_plan *p, struct rank_recvs *rr)
{
    struct range *ranges;
    size_t nr = 0;

    rr->r = calloc(p->requests + 1, sizeof *rr->r);
    ranges = calloc(p->requests + 1, sizeof *ranges);
    assert_true(rr->r != NULL && ranges != NULL);
    rr->n = 0;
    for (int s = 0; s < p->own; s++) {
        for (int t = 0; t < apsmpi_twolevel_rounds1(p); t++)
            add_recv(rr, apsmpi_twolevel_contribution_in(p, s, t),
                     apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_CONTRIB_IN, s, t));
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++) {
            add_recv(rr, apsmpi_twolevel_partial_in(p, s, t),
                     apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_PARTIAL_IN, s, t));
            add_recv(rr, apsmpi_twolevel_final_in(p, s, t),
                     apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_FINAL_IN, s, t));
        }
    }
    for (int pos = 0; pos < p->group_size - p->own; pos++) {
        int j = apsmpi_twolevel_gather_stripe(p, pos);
        add_recv(rr, apsmpi_twolevel_gather_in(p, j), apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_GATHER_IN, j, 0));
    }
    for (size_t i = 0; i < rr->n; i++) /* two receives from one peer never share a tag */
        for (size_t k = 0; k < i; k++)
            assert_false(rr->r[i].m.peer == rr->r[k].m.peer && rr->r[i].m.tag == rr->r[k].m.tag);
    for (size_t i = 0; i < rr->n; i++) {
        assert_true(rr->r[i].m.tag >= 0 && rr->r[i].m.tag < 32767);
        assert_true(rr->r[i].request < p->requests);
        ranges[nr++] = (struct range){rr->r[i].m.at, rr->r[i].m.bytes};
    }
    /* the final slots of this rank's own cells are written by itself, the others received */
    for (int s = 0; s < p->own; s++) {
        apsmpi_rsag_msg m = apsmpi_twolevel_final_out(p, s, 0);
        ranges[nr++] = (struct range){m.at, m.bytes};
    }
    /* the gathers cover whole stripes of slots: within results only */
    check_apart(ranges, nr, 0, p->result_bytes);
    free(ranges);
}

/* Rank r's own memory: the arrays, the requests, the queue and the fp32 sums, apart. */
static void check_memory(const apsmpi_twolevel_plan *p)
{
    size_t M = (size_t)p->group_size, stripe = p->cell * (size_t)p->groups;
    struct range ranges[] = {{0, M * sizeof(int)},
                             {p->at_firsts, M * sizeof(size_t)},
                             {p->at_offsets, M * sizeof(size_t)},
                             {p->at_order, M * sizeof(int)},
                             {p->at_gather_order, M * sizeof(int)},
                             {p->at_requests, p->requests * REQUEST_BYTES},
                             {p->at_queue, p->window > 0 ? p->sends * sizeof(apsmpi_rsag_send) : 0},
                             {p->at_sum, stripe * sizeof(float)},
                             {p->at_tmp, stripe * sizeof(float)},
                             {p->at_cells, (size_t)p->own * p->cell * sizeof(float)}};
    size_t total = 0;

    check_apart(ranges, sizeof ranges / sizeof *ranges, 0, p->memory_bytes);
    assert_int_equal(p->at_sum % 64, 0);
    assert_int_equal(p->at_tmp % 64, 0);
    assert_int_equal(p->at_cells % 64, 0);
    for (int k = 0; k < APSMPI_TWOLEVEL_REQ_KINDS; k++)
        total += apsmpi_twolevel_request_count(p, (enum apsmpi_twolevel_request_kind)k);
    assert_int_equal(total, p->requests);
    assert_int_equal(p->sends,
                     (M - (size_t)p->own) + (size_t)p->own * (2 * (size_t)(p->groups - 1) + (size_t)(p->my_size - 1)));
    assert_int_equal(p->packed_bytes, apsmpi_packed_bytes(p->f, p->n));
}

/* One message in flight: its sender, what it is, and the cell sums it carries (a bit per
 * rank whose contribution is in it, per cell of its stripe). */
struct flight {
    int from;
    apsmpi_rsag_send send;
    int kind, stripe;
    uint64_t mask[MAX_RANKS]; /* per cell g of the stripe */
};

/* One rank as twolevel.c runs it: the phase, its own stripe and round, the encoding cursor,
 * the queue, and the sums it holds. */
enum phase { GROUP_SUM, CROSS_SUM, FINALS, GATHER, DRAIN, DONE };
struct simrank {
    enum phase phase;
    int s, t, enc;
    apsmpi_rsag_sendq q;
    size_t pushed, flying;
    struct rank_recvs rr;
    unsigned char *sent;                /* sends completed, by request */
    uint64_t stripe_mask[2][MAX_RANKS]; /* per own stripe, per cell: the group's sum */
    uint64_t cell_mask[2];              /* per own stripe, its cell of this group: across groups */
    uint64_t result[64][MAX_RANKS];     /* per stripe and cell: the final held */
    struct flight *pending;             /* sends queued, by request (what they carry) */
};

static unsigned long long lcg(unsigned long long *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

struct net {
    struct flight *f;
    size_t n;
};

static uint64_t all_ranks(int n) { return n == 64 ? ~0ull : (1ull << n) - 1; }

static uint64_t group_ranks(const apsmpi_twolevel_plan *p, int g)
{
    uint64_t m = 0;
    for (int k = 0; k < apsmpi_twolevel_members(p, g); k++)
        m |= 1ull << apsmpi_twolevel_rank_of(p, g, k);
    return m;
}

static void post(const struct sim *s, struct simrank *k, int r, struct net *net, const apsmpi_rsag_send *send)
{
    const apsmpi_twolevel_plan *p = &s->plan[r];
    size_t buffer = send->result ? p->result_bytes : p->packed_bytes;

    assert_true(send->m.at + send->m.bytes <= buffer);
    net->f[net->n++] = k->pending[send->request];
    k->flying++;
    if (p->window > 0)
        assert_true(k->flying <= (size_t)p->window);
}

static void push(const struct sim *s, struct simrank *k, int r, struct net *net, struct flight fl)
{
    const apsmpi_twolevel_plan *p = &s->plan[r];

    fl.from = r;
    k->pending[fl.send.request] = fl;
    if (p->window == 0) {
        post(s, k, r, net, &fl.send);
        return;
    }
    assert_true(k->pushed < p->sends);
    k->pushed++;
    apsmpi_rsag_sendq_push(&k->q, fl.send);
}

static void pump(const struct sim *s, struct simrank *k, int r, struct net *net)
{
    const apsmpi_rsag_send *send;

    for (int i = k->q.in_flight - 1; i >= 0; i--)
        if (k->sent[k->q.flying[i]])
            apsmpi_rsag_sendq_done(&k->q, i);
    while ((send = apsmpi_rsag_sendq_next(&k->q)) != NULL)
        post(s, k, r, net, send);
}

static struct flight message(apsmpi_rsag_msg m, size_t request, int result, int kind, int stripe)
{
    struct flight fl;
    memset(&fl, 0, sizeof fl);
    fl.send = (apsmpi_rsag_send){m, request, result};
    fl.kind = kind;
    fl.stripe = stripe;
    return fl;
}

/* The receive of rank r that the message matches (its peer and tag, as MPI matches them). */
static struct recv *matched(struct simrank *k, const struct flight *fl)
{
    for (size_t i = 0; i < k->rr.n; i++)
        if (k->rr.r[i].m.peer == fl->from && k->rr.r[i].m.tag == fl->send.m.tag)
            return &k->rr.r[i];
    fail_msg("no receive from %d with tag %d", fl->from, fl->send.m.tag);
    return NULL;
}

static int received(struct simrank *k, size_t request)
{
    for (size_t i = 0; i < k->rr.n; i++)
        if (k->rr.r[i].request == request)
            return k->rr.r[i].got;
    fail_msg("request %zu is no receive", request);
    return 0;
}

/* What a delivered message adds to rank `to`'s sums. */
static void deliver(const struct sim *s, struct simrank *k, struct net *net, size_t i)
{
    struct flight fl = net->f[i];
    int to = fl.send.m.peer;
    const apsmpi_twolevel_plan *q = &s->plan[to];
    struct recv *rv;

    net->f[i] = net->f[--net->n];
    rv = matched(&k[to], &fl);
    assert_int_equal(rv->got++, 0);
    assert_int_equal(rv->m.bytes, fl.send.m.bytes);
    assert_int_equal(k[fl.from].sent[fl.send.request]++, 0);
    k[fl.from].flying--;
    for (int sl = 0; sl < q->own; sl++) {
        if (apsmpi_twolevel_own_stripe(q, sl) != fl.stripe)
            continue;
        if (fl.kind == APSMPI_TWOLEVEL_CONTRIB)
            for (int g = 0; g < q->groups; g++) {
                assert_int_equal(k[to].stripe_mask[sl][g] & fl.mask[g], 0);
                k[to].stripe_mask[sl][g] |= fl.mask[g];
            }
        if (fl.kind == APSMPI_TWOLEVEL_PARTIAL) {
            assert_int_equal(k[to].cell_mask[sl] & fl.mask[q->group], 0);
            k[to].cell_mask[sl] |= fl.mask[q->group];
        }
    }
    for (int g = 0; g < q->groups; g++)
        if (fl.kind == APSMPI_TWOLEVEL_FINAL || fl.kind == APSMPI_TWOLEVEL_GATHER)
            k[to].result[fl.stripe][g] |= fl.mask[g];
}

/* Encodes the next stripe (encode_next in twolevel.c): its contribution carries this rank. */
static int encode_next(const struct sim *s, struct simrank *k, int r, struct net *net)
{
    const apsmpi_twolevel_plan *p = &s->plan[r];
    int j;

    if (k->enc >= p->group_size)
        return 0;
    j = p->order[k->enc++];
    if (k->enc <= p->group_size - p->own) {
        struct flight fl =
            message(apsmpi_twolevel_contribution_out(p, j),
                    apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_CONTRIB_OUT, j, 0), 0, APSMPI_TWOLEVEL_CONTRIB, j);
        for (int g = 0; g < p->groups; g++)
            fl.mask[g] = 1ull << r;
        push(s, k, r, net, fl);
    }
    return 1;
}

/* One step of rank r in its phase, as twolevel.c's progress takes it: 1 if it did
 * something, 0 if it waits (after encoding what it can). */
static int step(const struct sim *s, struct simrank *k, int r, struct net *net)
{
    const apsmpi_twolevel_plan *p = &s->plan[r];

    switch (k->phase) {
    case GROUP_SUM:
        if (k->s == p->own)
            break;
        if (k->t < apsmpi_twolevel_rounds1(p)) {
            if (received(k, apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_CONTRIB_IN, k->s, k->t))) {
                k->t++;
                return 1;
            }
            return encode_next(s, k, r, net);
        }
        while (k->enc <= p->group_size - p->own + k->s)
            encode_next(s, k, r, net);
        for (int g = 0; g < p->groups; g++) { /* the group's sum: every member once */
            k->stripe_mask[k->s][g] |= 1ull << r;
            assert_true(k->stripe_mask[k->s][g] == group_ranks(p, p->group));
        }
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++) {
            int g = apsmpi_twolevel_send_group(p, t);
            struct flight fl = message(apsmpi_twolevel_partial_out(p, k->s, t),
                                       apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_PARTIAL_OUT, k->s, t), 1,
                                       APSMPI_TWOLEVEL_PARTIAL, apsmpi_twolevel_own_stripe(p, k->s));
            fl.mask[g] = k->stripe_mask[k->s][g];
            push(s, k, r, net, fl);
        }
        k->cell_mask[k->s] |= k->stripe_mask[k->s][p->group];
        k->s++;
        k->t = 0;
        return 1;
    case CROSS_SUM:
        if (k->s == p->own)
            break;
        if (k->t < apsmpi_twolevel_rounds2(p)) {
            if (!received(k, apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_PARTIAL_IN, k->s, k->t)))
                return 0;
            k->t++;
            return 1;
        }
        assert_true(k->cell_mask[k->s] == all_ranks(s->n)); /* every rank once */
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++) {
            struct flight fl = message(apsmpi_twolevel_final_out(p, k->s, t),
                                       apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_FINAL_OUT, k->s, t), 1,
                                       APSMPI_TWOLEVEL_FINAL, apsmpi_twolevel_own_stripe(p, k->s));
            fl.mask[p->group] = k->cell_mask[k->s];
            push(s, k, r, net, fl);
        }
        k->result[apsmpi_twolevel_own_stripe(p, k->s)][p->group] = k->cell_mask[k->s];
        k->s++;
        k->t = 0;
        return 1;
    case FINALS:
        if (k->s == p->own)
            break;
        if (k->t < apsmpi_twolevel_rounds2(p)) {
            if (!received(k, apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_FINAL_IN, k->s, k->t)))
                return 0;
            k->t++;
            return 1;
        }
        for (int t = 0; t < apsmpi_twolevel_rounds1(p); t++) {
            int i = apsmpi_twolevel_own_stripe(p, k->s);
            struct flight fl = message(apsmpi_twolevel_gather_out(p, k->s, t),
                                       apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_GATHER_OUT, k->s, t), 1,
                                       APSMPI_TWOLEVEL_GATHER, i);
            for (int g = 0; g < p->groups; g++) {
                assert_true(k->result[i][g] == all_ranks(s->n)); /* forwarded as received */
                fl.mask[g] = k->result[i][g];
            }
            push(s, k, r, net, fl);
        }
        k->s++;
        k->t = 0;
        return 1;
    case GATHER:
        if (k->s == p->group_size - p->own)
            break;
        if (!received(k, apsmpi_twolevel_request(p, APSMPI_TWOLEVEL_REQ_GATHER_IN,
                                                 apsmpi_twolevel_gather_stripe(p, k->s), 0)))
            return 0;
        k->s++;
        return 1;
    case DRAIN:
        if (apsmpi_rsag_sendq_waiting(&k->q) || k->flying > 0)
            return 0;
        break;
    case DONE:
        return 0;
    }
    k->phase = (enum phase)(k->phase + 1);
    k->s = k->t = 0;
    return 1;
}

static void check_run(const struct sim *s, unsigned long long seed)
{
    struct simrank *k = calloc((size_t)s->n, sizeof *k);
    struct net net = {0};
    size_t total = 0;

    assert_non_null(k);
    for (int r = 0; r < s->n; r++) {
        const apsmpi_twolevel_plan *p = &s->plan[r];
        rank_receives(p, &k[r].rr);
        k[r].sent = calloc(p->requests + 1, 1);
        k[r].pending = calloc(p->requests + 1, sizeof *k[r].pending);
        assert_true(k[r].sent && k[r].pending);
        k[r].q = (apsmpi_rsag_sendq){.queue = (apsmpi_rsag_send *)(void *)((char *)s->mem[r] + p->at_queue),
                                     .window = p->window};
        total += p->sends;
    }
    net.f = calloc(total + 1, sizeof *net.f);
    assert_non_null(net.f);
    for (;;) {
        int worked = 0;
        /* a random rank works (and keeps its window full), or a random message arrives */
        if (net.n > 0 && lcg(&seed) % 2 == 0) {
            deliver(s, k, &net, lcg(&seed) % net.n);
            continue;
        }
        for (int tries = 0; tries < s->n && !worked; tries++) {
            int r = (int)(lcg(&seed) % (unsigned long long)s->n);
            pump(s, &k[r], r, &net);
            worked = step(s, &k[r], r, &net);
            pump(s, &k[r], r, &net);
        }
        for (int r = 0; r < s->n && !worked; r++) { /* every rank, before deciding nothing is left */
            pump(s, &k[r], r, &net);
            worked = step(s, &k[r], r, &net);
            pump(s, &k[r], r, &net);
        }
        if (!worked && net.n == 0)
            break;
    }
    for (int r = 0; r < s->n; r++) { /* the end: every rank done, every receive taken once */
        const apsmpi_twolevel_plan *p = &s->plan[r];
        assert_int_equal(k[r].phase, DONE);
        for (size_t i = 0; i < k[r].rr.n; i++)
            assert_int_equal(k[r].rr.r[i].got, 1);
        for (int i = 0; i < p->group_size; i++) /* every cell's final, summed over every rank */
            for (int g = 0; g < p->groups; g++)
                assert_true(k[r].result[i][g] == all_ranks(s->n));
        if (p->window > 0)
            assert_int_equal(k[r].pushed, p->sends);
        free(k[r].rr.r);
        free(k[r].sent);
        free(k[r].pending);
    }
    free(net.f);
    free(k);
}

/* The bytes one rank sends: its contributions, partials, finals and gathers. */
static size_t bytes_sent(const apsmpi_twolevel_plan *p)
{
    size_t sent = 0;

    for (int j = 0; j < p->group_size; j++)
        if (apsmpi_twolevel_owner(j, p->my_size) != p->member)
            sent += apsmpi_twolevel_contribution_out(p, j).bytes;
    for (int sl = 0; sl < p->own; sl++) {
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++)
            sent += apsmpi_twolevel_partial_out(p, sl, t).bytes + apsmpi_twolevel_final_out(p, sl, t).bytes;
        for (int t = 0; t < apsmpi_twolevel_rounds1(p); t++)
            sent += apsmpi_twolevel_gather_out(p, sl, t).bytes;
    }
    return sent;
}

static void run_case(const char *format, int n, size_t count, size_t block_len, int window)
{
    apsmpi_format f;
    struct sim s;

    assert_int_equal(apsmpi_format_parse(format, &f), 0);
    sim_init(&s, &f, n, count, block_len, window);
    check_cells(&s, count);
    check_orders(&s);
    for (int r = 0; r < n; r++) {
        struct rank_recvs rr;
        rank_receives(&s.plan[r], &rr);
        free(rr.r);
        check_memory(&s.plan[r]);
    }
    check_run(&s, (unsigned long long)(n * 131 + window * 7) + count);
    sim_free(&s);
}

/* 2 to 40 ranks (full grids, short last groups, primes), windows 0, 1, 4, counts that leave
 * cells short or empty, every packing, blocks smaller and larger than a cell. */
static void test_ranks_2_to_40(void **state)
{
    static const char *formats[] = {"e4m3", "e3m2", "mxfp4", "fp16"};
    static const size_t counts[] = {1, 1000, 70001, 262144};
    static const size_t blocks[] = {64, 4096};
    static const int windows[] = {0, 1, 4};

    for (int n = 2; n <= MAX_RANKS; n++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
            for (size_t w = 0; w < sizeof windows / sizeof *windows; w++)
                run_case(formats[(n + c + w) % 4], n, counts[c], blocks[(n + c) % 2], windows[w]);
}

/* The closed form of a full grid of full cells: N = M G ranks send 2(M-1) + 2(G-1) messages
 * each, (M-1) stripes of G T encoded elements, 2(G-1) result messages of a cell, and (M-1)
 * stripes of G of them: (N-1)/N of the encoded buffer each way, with the cells' scales. */
static void test_full_grid_messages(void **state)
{
    apsmpi_format f;
    apsmpi_twolevel_plan p;

    assert_int_equal(apsmpi_format_parse("e4m3", &f), 0);
    for (int n = 4; n <= 1024; n *= 2) {
        int m, g, last;
        apsmpi_twolevel_shape(n, &m, &g, &last);
        for (int r = 0; last == m && r < n; r += n / 4) {
            size_t cell = 640, stripe_bytes = apsmpi_packed_bytes(&f, cell * (size_t)g);
            size_t cell_msg = apsmpi_result_message_bytes(&f, cell, 4096);
            apsmpi_twolevel_plan_init(&p, &f, n, r, (size_t)n * cell, 4096, 4, REQUEST_BYTES);
            assert_int_equal(p.cell, cell);
            assert_int_equal(p.sends, (size_t)(2 * (m - 1) + 2 * (g - 1)));
            void *mem = NULL;
            assert_int_equal(posix_memalign(&mem, 64, p.memory_bytes), 0);
            apsmpi_twolevel_plan_bind(&p, mem);
            assert_int_equal(bytes_sent(&p), (size_t)(m - 1) * stripe_bytes + 2 * (size_t)(g - 1) * cell_msg +
                                                 (size_t)(m - 1) * (size_t)g * cell_msg);
            free(mem);
        }
    }
    run_case("e4m3", 36, 36 * 640, 4096, 4); /* 6 x 6 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_ranks_2_to_40),
        cmocka_unit_test(test_full_grid_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
