/* twolevel_plan.c: the two-level schedule's arithmetic: the groups' shape, stripes and cells, the messages of its three levels, its memory's layout. */
#include "algo/twolevel_plan.h"

#include "core/packed_layout.h"
#include "core/units.h"

static int mod(int a, int n) { return ((a % n) + n) % n; }

static size_t align16(size_t b) { return (b + 15) / 16 * 16; }

static int ceil_sqrt(int n)
{
    int r = 1;
    while (r * r < n)
        r++;
    return r;
}

void apsmpi_twolevel_shape(int nranks, int *group_size, int *groups, int *last)
{
    int root = ceil_sqrt(nranks), m = 0;

    for (int d = root; d <= 2 * root && d <= nranks && m == 0; d++)
        if (nranks % d == 0)
            m = d;
    for (int d = root; m == 0; d++) {
        int g = (nranks + d - 1) / d;
        if (2 * (nranks - (g - 1) * d) >= d)
            m = d;
    }
    if (m > APSMPI_TWOLEVEL_MAX_GROUP) /* 16 million ranks: never met */
        m = APSMPI_TWOLEVEL_MAX_GROUP;
    *group_size = m;
    *groups = (nranks + m - 1) / m;
    *last = nranks - (*groups - 1) * m;
}

int apsmpi_twolevel_chosen(int ranks, size_t n, size_t from, int shared)
{
    size_t at = shared ? 2 : n <= APSMPI_TWOLEVEL_SMALL ? (from + 3) / 4 : from;
    return from > 0 && ranks >= 2 && (size_t)ranks >= at;
}

int apsmpi_twolevel_members(const apsmpi_twolevel_plan *p, int g)
{
    return g == p->groups - 1 ? p->last_size : p->group_size;
}

size_t apsmpi_twolevel_cell_first(const apsmpi_twolevel_plan *p, int i, int g)
{
    size_t at = ((size_t)i * (size_t)p->groups + (size_t)g) * p->cell;
    return at < p->n ? at : p->n;
}

size_t apsmpi_twolevel_cell_len(const apsmpi_twolevel_plan *p, int i, int g)
{
    size_t at = apsmpi_twolevel_cell_first(p, i, g);
    return p->n - at < p->cell ? p->n - at : p->cell;
}

size_t apsmpi_twolevel_stripe_first(const apsmpi_twolevel_plan *p, int i)
{
    return apsmpi_twolevel_cell_first(p, i, 0);
}

size_t apsmpi_twolevel_stripe_len(const apsmpi_twolevel_plan *p, int i)
{
    return apsmpi_twolevel_cell_first(p, i + 1, 0) - apsmpi_twolevel_cell_first(p, i, 0);
}

size_t apsmpi_twolevel_slot(const apsmpi_twolevel_plan *p, int i, int g)
{
    size_t c = (size_t)i * (size_t)p->groups + (size_t)g, full = p->n / p->cell, rest = p->n % p->cell;
    size_t at = p->at_results + (c < full ? c : full) * apsmpi_result_message_bytes(p->f, p->cell, p->block_len);
    return c > full && rest > 0 ? at + apsmpi_result_message_bytes(p->f, rest, p->block_len) : at;
}

int apsmpi_twolevel_send_member(const apsmpi_twolevel_plan *p, int t) { return mod(p->member - 1 - t, p->my_size); }
int apsmpi_twolevel_recv_member(const apsmpi_twolevel_plan *p, int t) { return mod(p->member + 1 + t, p->my_size); }
int apsmpi_twolevel_send_group(const apsmpi_twolevel_plan *p, int t) { return mod(p->group - 1 - t, p->groups); }
int apsmpi_twolevel_recv_group(const apsmpi_twolevel_plan *p, int t) { return mod(p->group + 1 + t, p->groups); }

void apsmpi_twolevel_plan_init(apsmpi_twolevel_plan *p, const apsmpi_format *f, int nranks, int rank, size_t n,
                               size_t block_len, int window, size_t request_bytes)
{
    size_t M, G, stripe, cell_msg;
    int m;

    *p = (apsmpi_twolevel_plan){.f = f, .size = nranks, .rank = rank, .n = n, .block_len = block_len};
    apsmpi_twolevel_shape(nranks, &p->group_size, &p->groups, &p->last_size);
    M = (size_t)p->group_size;
    G = (size_t)p->groups;
    p->group = rank / p->group_size;
    p->member = rank % p->group_size;
    p->my_size = m = apsmpi_twolevel_members(p, p->group);
    p->own = (p->group_size - p->member + m - 1) / m;
    p->window = window < 0 ? 0 : window > APSMPI_RSAG_MAX_WINDOW ? APSMPI_RSAG_MAX_WINDOW : window;
    p->cell = apsmpi_whole_slices((n + M * G - 1) / (M * G));
    if (p->cell == 0)
        p->cell = APSMPI_SLICE;
    stripe = p->cell * G;
    cell_msg = apsmpi_result_message_bytes(f, p->cell, block_len);
    /* contributions to others' stripes, partials and finals to G-1 groups, gathers to m-1 members */
    p->sends = (M - (size_t)p->own) + (size_t)p->own * (2 * (G - 1) + (size_t)(m - 1));
    p->requests = 2 * M + (size_t)p->own * (4 * (G - 1) + 2 * (size_t)(m - 1));
    p->packed_bytes = apsmpi_packed_bytes(f, n);
    p->stripe_bytes = apsmpi_packed_bytes(f, stripe);
    p->staging_bytes = align16((size_t)p->own * (size_t)(m - 1) * p->stripe_bytes);
    p->partial_bytes = cell_msg;
    p->at_partials_out = p->staging_bytes;
    p->at_partials_in = p->at_partials_out + (size_t)p->own * G * cell_msg;
    p->at_results = p->at_partials_in + (size_t)p->own * (G - 1) * cell_msg;
    p->result_bytes = apsmpi_twolevel_slot(p, p->group_size, 0);
    p->at_firsts = apsmpi_align_up(M * sizeof(int));
    p->at_offsets = p->at_firsts + apsmpi_align_up(M * sizeof(size_t));
    p->at_order = p->at_offsets + apsmpi_align_up(M * sizeof(size_t));
    p->at_gather_order = p->at_order + apsmpi_align_up(M * sizeof(int));
    p->at_requests = p->at_gather_order + apsmpi_align_up(M * sizeof(int));
    p->at_queue = p->at_requests + apsmpi_align_up(p->requests * request_bytes);
    p->at_sum = p->at_queue + (p->window > 0 ? apsmpi_align_up(p->sends * sizeof(apsmpi_rsag_send)) : 0);
    p->at_tmp = p->at_sum + apsmpi_align_up(stripe * sizeof(float));
    p->at_cells = p->at_tmp + apsmpi_align_up(stripe * sizeof(float));
    p->memory_bytes = p->at_cells + apsmpi_align_up((size_t)p->own * p->cell * sizeof(float));
}

void apsmpi_twolevel_plan_bind(apsmpi_twolevel_plan *p, void *mem)
{
    char *b = mem;
    int pos = 0, gpos = 0, m = p->my_size;

    p->counts = (int *)(void *)b;
    p->firsts = (size_t *)(void *)(b + p->at_firsts);
    p->offsets = (size_t *)(void *)(b + p->at_offsets);
    p->order = (int *)(void *)(b + p->at_order);
    p->gather_order = (int *)(void *)(b + p->at_gather_order);
    for (int i = 0; i < p->group_size; i++) {
        p->counts[i] = (int)apsmpi_twolevel_stripe_len(p, i);
        p->firsts[i] = apsmpi_twolevel_stripe_first(p, i);
        p->offsets[i] = apsmpi_packed_bytes(p->f, p->firsts[i]); /* stripes start on whole slices of 64 */
    }
    for (int t = 0; t < apsmpi_twolevel_rounds1(p); t++) {
        int to = apsmpi_twolevel_send_member(p, t), from = apsmpi_twolevel_recv_member(p, t);
        for (int i = to; i < p->group_size; i += m)
            p->order[pos++] = i;
        for (int i = from; i < p->group_size; i += m)
            p->gather_order[gpos++] = i;
    }
    for (int s = 0; s < p->own; s++)
        p->order[pos++] = apsmpi_twolevel_own_stripe(p, s);
}

/* The rank that owns stripe i in group g. */
static int owner_rank(const apsmpi_twolevel_plan *p, int i, int g)
{
    return apsmpi_twolevel_rank_of(p, g, apsmpi_twolevel_owner(i, apsmpi_twolevel_members(p, g)));
}

static int tag(const apsmpi_twolevel_plan *p, enum apsmpi_twolevel_kind kind, int i)
{
    return (int)kind * p->group_size + i;
}

/* The result message of cell (i, g): none for an empty cell (which has no slot either). */
static size_t cell_message(const apsmpi_twolevel_plan *p, int i, int g)
{
    size_t len = apsmpi_twolevel_cell_len(p, i, g);
    return len == 0 ? 0 : apsmpi_result_message_bytes(p->f, len, p->block_len);
}

apsmpi_rsag_msg apsmpi_twolevel_contribution_out(const apsmpi_twolevel_plan *p, int j)
{
    return (apsmpi_rsag_msg){owner_rank(p, j, p->group), tag(p, APSMPI_TWOLEVEL_CONTRIB, j), p->offsets[j],
                             apsmpi_packed_bytes(p->f, (size_t)p->counts[j])};
}

apsmpi_rsag_msg apsmpi_twolevel_contribution_in(const apsmpi_twolevel_plan *p, int s, int t)
{
    int i = apsmpi_twolevel_own_stripe(p, s);
    return (apsmpi_rsag_msg){apsmpi_twolevel_rank_of(p, p->group, apsmpi_twolevel_recv_member(p, t)),
                             tag(p, APSMPI_TWOLEVEL_CONTRIB, i),
                             ((size_t)s * (size_t)apsmpi_twolevel_rounds1(p) + (size_t)t) * p->stripe_bytes,
                             apsmpi_packed_bytes(p->f, (size_t)p->counts[i])};
}

apsmpi_rsag_msg apsmpi_twolevel_partial_out(const apsmpi_twolevel_plan *p, int s, int t)
{
    int i = apsmpi_twolevel_own_stripe(p, s), g = apsmpi_twolevel_send_group(p, t);
    return (apsmpi_rsag_msg){owner_rank(p, i, g), tag(p, APSMPI_TWOLEVEL_PARTIAL, i),
                             p->at_partials_out + ((size_t)s * (size_t)p->groups + (size_t)g) * p->partial_bytes,
                             cell_message(p, i, g)};
}

apsmpi_rsag_msg apsmpi_twolevel_partial_in(const apsmpi_twolevel_plan *p, int s, int t)
{
    int i = apsmpi_twolevel_own_stripe(p, s);
    return (apsmpi_rsag_msg){owner_rank(p, i, apsmpi_twolevel_recv_group(p, t)), tag(p, APSMPI_TWOLEVEL_PARTIAL, i),
                             p->at_partials_in +
                                 ((size_t)s * (size_t)apsmpi_twolevel_rounds2(p) + (size_t)t) * p->partial_bytes,
                             cell_message(p, i, p->group)};
}

apsmpi_rsag_msg apsmpi_twolevel_final_out(const apsmpi_twolevel_plan *p, int s, int t)
{
    int i = apsmpi_twolevel_own_stripe(p, s);
    return (apsmpi_rsag_msg){owner_rank(p, i, apsmpi_twolevel_send_group(p, t)), tag(p, APSMPI_TWOLEVEL_FINAL, i),
                             apsmpi_twolevel_slot(p, i, p->group), cell_message(p, i, p->group)};
}

apsmpi_rsag_msg apsmpi_twolevel_final_in(const apsmpi_twolevel_plan *p, int s, int t)
{
    int i = apsmpi_twolevel_own_stripe(p, s), g = apsmpi_twolevel_recv_group(p, t);
    return (apsmpi_rsag_msg){owner_rank(p, i, g), tag(p, APSMPI_TWOLEVEL_FINAL, i), apsmpi_twolevel_slot(p, i, g),
                             cell_message(p, i, g)};
}

apsmpi_rsag_msg apsmpi_twolevel_gather_out(const apsmpi_twolevel_plan *p, int s, int t)
{
    int i = apsmpi_twolevel_own_stripe(p, s);
    size_t at = apsmpi_twolevel_slot(p, i, 0);
    return (apsmpi_rsag_msg){apsmpi_twolevel_rank_of(p, p->group, apsmpi_twolevel_send_member(p, t)),
                             tag(p, APSMPI_TWOLEVEL_GATHER, i), at, apsmpi_twolevel_slot(p, i + 1, 0) - at};
}

apsmpi_rsag_msg apsmpi_twolevel_gather_in(const apsmpi_twolevel_plan *p, int j)
{
    size_t at = apsmpi_twolevel_slot(p, j, 0);
    return (apsmpi_rsag_msg){owner_rank(p, j, p->group), tag(p, APSMPI_TWOLEVEL_GATHER, j), at,
                             apsmpi_twolevel_slot(p, j + 1, 0) - at};
}

size_t apsmpi_twolevel_request_count(const apsmpi_twolevel_plan *p, enum apsmpi_twolevel_request_kind kind)
{
    size_t own = (size_t)p->own;
    switch (kind) {
    case APSMPI_TWOLEVEL_REQ_CONTRIB_OUT:
    case APSMPI_TWOLEVEL_REQ_GATHER_IN:
        return (size_t)p->group_size;
    case APSMPI_TWOLEVEL_REQ_CONTRIB_IN:
    case APSMPI_TWOLEVEL_REQ_GATHER_OUT:
        return own * (size_t)apsmpi_twolevel_rounds1(p);
    default:
        return own * (size_t)apsmpi_twolevel_rounds2(p);
    }
}

size_t apsmpi_twolevel_request(const apsmpi_twolevel_plan *p, enum apsmpi_twolevel_request_kind kind, int s, int t)
{
    size_t first = 0, rounds;

    for (int k = 0; k < (int)kind; k++)
        first += apsmpi_twolevel_request_count(p, (enum apsmpi_twolevel_request_kind)k);
    if (kind == APSMPI_TWOLEVEL_REQ_CONTRIB_OUT || kind == APSMPI_TWOLEVEL_REQ_GATHER_IN)
        return first + (size_t)s;
    rounds = kind == APSMPI_TWOLEVEL_REQ_CONTRIB_IN || kind == APSMPI_TWOLEVEL_REQ_GATHER_OUT
                 ? (size_t)apsmpi_twolevel_rounds1(p)
                 : (size_t)apsmpi_twolevel_rounds2(p);
    return first + (size_t)s * rounds + (size_t)t;
}
