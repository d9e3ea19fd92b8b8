/* lib_twolevel.c: the library's two-level schedule run by a simulated rank: its own plan (src/algo/twolevel_plan.c), the steps of twolevel.c, the codec's time per step. */
#include <stdlib.h>

#include "algo/twolevel_plan.h"
#include "sim.h"

/* The operation's state on one rank, as struct twolevel in src/algo/twolevel.c. */
struct run {
    apsmpi_twolevel_plan p;
    sim_ep *e;
    sim_group g;
    int op, enc;
    sim_window w;
    sim_codec codec;
};

static uint64_t key_of(const struct run *r, apsmpi_rsag_msg m)
{
    return sim_key(r->g.members[m.peer], r->op, (uint32_t)m.tag);
}

static void send_msg(struct run *r, apsmpi_rsag_msg m, enum apsmpi_twolevel_request_kind kind, int s, int t)
{
    sim_window_send(&r->w, (apsmpi_rsag_send){m, apsmpi_twolevel_request(&r->p, kind, s, t), 0});
}

/* encode_next: the next stripe encoded, sent to its owner unless it is this rank's own. */
static int encode_next(struct run *r)
{
    const apsmpi_twolevel_plan *p = &r->p;
    int j;

    if (r->enc >= p->group_size)
        return 0;
    j = p->order[r->enc++];
    sim_encode_cost(&r->codec, (size_t)p->counts[j]);
    if (r->enc <= p->group_size - p->own)
        send_msg(r, apsmpi_twolevel_contribution_out(p, j), APSMPI_TWOLEVEL_REQ_CONTRIB_OUT, j, 0);
    return 1;
}

static int encode_work(void *r) { return encode_next(r); }

/* Waits for message key, encoding and sending contributions meanwhile (wait_working). */
static void wait_working(struct run *r, uint64_t key) { sim_window_wait_working(&r->w, key, encode_work, r); }

void sim_lib_twolevel(sim_ep *e, sim_group g, size_t n, int window, int op)
{
    struct run r = {.e = e, .g = g, .op = op};
    apsmpi_twolevel_plan *p = &r.p;
    size_t block_len = P.f.mx ? n : 4096;
    void *mem;

    apsmpi_twolevel_plan_init(p, &P.f, g.size, g.me, n, block_len, window, sizeof(void *));
    if (posix_memalign(&mem, 64, p->memory_bytes) != 0)
        abort();
    apsmpi_twolevel_plan_bind(p, mem);
    sim_window_init(&r.w, e, g.members, op, (apsmpi_rsag_send *)(void *)((char *)mem + p->at_queue), p->window);
    sim_codec_init(&r.codec);
    /* group_sum: the group's contributions to each own stripe, decoded and added on the host;
     * then its partials encoded (on the host) and sent */
    for (int s = 0; s < p->own; s++) {
        int i = apsmpi_twolevel_own_stripe(p, s);
        for (int t = 0; t < apsmpi_twolevel_rounds1(p); t++) {
            wait_working(&r, key_of(&r, apsmpi_twolevel_contribution_in(p, s, t)));
            sim_compute((double)p->counts[i] / P.dec);
        }
        while (r.enc <= p->group_size - p->own + s)
            encode_next(&r);
        sim_compute((double)p->counts[i] / P.dec);
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++) {
            sim_compute((double)apsmpi_twolevel_cell_len(p, i, apsmpi_twolevel_send_group(p, t)) / P.enc);
            send_msg(&r, apsmpi_twolevel_partial_out(p, s, t), APSMPI_TWOLEVEL_REQ_PARTIAL_OUT, s, t);
        }
    }
    while (encode_next(&r))
        ;
    /* cross_sum: the other groups' partials added, the final encoded once, sent, decoded here */
    for (int s = 0; s < p->own; s++) {
        int i = apsmpi_twolevel_own_stripe(p, s);
        size_t len = apsmpi_twolevel_cell_len(p, i, p->group);
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++) {
            sim_window_wait(&r.w, key_of(&r, apsmpi_twolevel_partial_in(p, s, t)));
            sim_compute((double)len / P.dec);
        }
        sim_compute((double)len / P.enc);
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++)
            send_msg(&r, apsmpi_twolevel_final_out(p, s, t), APSMPI_TWOLEVEL_REQ_FINAL_OUT, s, t);
        sim_decode_result_cost(&r.codec, len);
    }
    /* finals: the other groups' finals of each own stripe decoded, the stripe gathered onwards */
    for (int s = 0; s < p->own; s++) {
        int i = apsmpi_twolevel_own_stripe(p, s);
        for (int t = 0; t < apsmpi_twolevel_rounds2(p); t++) {
            sim_window_wait(&r.w, key_of(&r, apsmpi_twolevel_final_in(p, s, t)));
            sim_decode_result_cost(&r.codec, apsmpi_twolevel_cell_len(p, i, apsmpi_twolevel_recv_group(p, t)));
        }
        for (int t = 0; t < apsmpi_twolevel_rounds1(p); t++)
            send_msg(&r, apsmpi_twolevel_gather_out(p, s, t), APSMPI_TWOLEVEL_REQ_GATHER_OUT, s, t);
    }
    /* gather: the group's other stripes, decoded as they arrive */
    for (int pos = 0; pos < p->group_size - p->own; pos++) {
        int j = apsmpi_twolevel_gather_stripe(p, pos);
        sim_window_wait(&r.w, key_of(&r, apsmpi_twolevel_gather_in(p, j)));
        sim_decode_result_cost(&r.codec, (size_t)p->counts[j]);
    }
    sim_window_drain(&r.w);
    sim_codec_end(&r.codec);
    free(mem);
}

void sim_lib_allreduce(sim_ep *e, sim_group g, size_t n, int window, int shared, int op)
{
    if (apsmpi_twolevel_chosen(g.size, n, P.twolevel_from, shared))
        sim_lib_twolevel(e, g, n, window, op);
    else
        sim_lib_rsag(e, g, n, window, op);
}
