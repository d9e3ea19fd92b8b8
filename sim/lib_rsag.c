/* lib_rsag.c: the library's rsag run by a simulated rank: its own plan (src/algo/rsag_plan.c), the schedule of rsag.c, the codec's time per step. */
#include <stdlib.h>
#include <string.h>
#include <simgrid/engine.h>

#include "algo/rsag_plan.h"
#include "core/units.h"
#include "sim.h"

/* The operation's state on one rank, as struct rsag in src/algo/rsag.c. */
struct run {
    apsmpi_rsag_plan p;
    sim_ep *e;
    sim_group g;
    int op;
    apsmpi_rsag_cursor enc;
    apsmpi_rsag_sendq q;
    apsmpi_rsag_send *sends; /* by request index: what a queued request sends */
    double gpu_encoded;      /* GPU buffers: the time the encoding stream has reached */
    double gpu_decoded;      /* GPU buffers: the time the decoding stream has reached */
    double bpe;              /* encoded bytes per element */
};

/* The allreduce's segments: equal, in whole slices of 64 (allreduce_segments in src/entry/reductions.c). */
int *sim_segments(size_t n, int P)
{
    int *c = malloc((size_t)P * sizeof *c);
    size_t base = apsmpi_whole_slices((n + (size_t)P - 1) / (size_t)P);

    for (int k = 0; k < P; k++) {
        size_t start = (size_t)k * base;
        c[k] = (int)(start >= n ? 0 : n - start < base ? n - start : base);
    }
    return c;
}

static void post(struct run *r, const apsmpi_rsag_send *s)
{
    sim_ep_send(r->e, r->g.members[s->m.peer], sim_key(r->e->id, r->op, (uint32_t)s->m.tag), s->m.bytes,
                (long)s->request);
}

/* Sends completed leave the window; queued ones take their places (pump in rsag.c). */
static void pump(struct run *r)
{
    const apsmpi_rsag_send *s;

    for (int d = 0; d < r->e->ndone; d++)
        for (int i = 0; i < r->q.in_flight; i++)
            if ((long)r->q.flying[i] == r->e->done_tok[d]) {
                apsmpi_rsag_sendq_done(&r->q, i);
                break;
            }
    r->e->ndone = 0;
    while ((s = apsmpi_rsag_sendq_next(&r->q)) != NULL)
        post(r, s);
}

static void send_message(struct run *r, apsmpi_rsag_send s)
{
    if (r->p.window == 0) {
        post(r, &s);
        return;
    }
    apsmpi_rsag_sendq_push(&r->q, s);
    pump(r);
}

/* The codec's steps: on the host one core's rate; GPU buffers: encoding runs ahead on its own
 * stream (1 Mi element stages, encoded bytes over PCIe), decoding queues on a second stream. */
static void encode_cost(struct run *r, size_t len)
{
    if (!P.gpu) {
        sim_compute((double)len / P.enc);
        return;
    }
    r->gpu_encoded += P.kernel_lat + (double)len / P.gpu_enc + (double)len * r->bpe / P.pcie;
    if (r->gpu_encoded > simgrid_get_clock())
        sim_gpu(r->gpu_encoded - simgrid_get_clock());
}

static void decode_result_cost(struct run *r, size_t len)
{
    double now = simgrid_get_clock();
    if (!P.gpu) {
        sim_compute((double)len / P.dec);
        return;
    }
    r->gpu_decoded = (r->gpu_decoded > now ? r->gpu_decoded : now) + P.kernel_lat + (double)len * r->bpe / P.pcie +
                     (double)len / P.gpu_dec;
}

static int encode_next(struct run *r)
{
    const apsmpi_rsag_plan *p = &r->p;
    int seg;
    size_t j;

    if (!apsmpi_rsag_encode_seek(p, &r->enc))
        return 0;
    seg = p->order[r->enc.pos];
    j = r->enc.j;
    encode_cost(r, apsmpi_rsag_piece_len(p, seg, j));
    if (seg != p->rank)
        send_message(r,
                     (apsmpi_rsag_send){apsmpi_rsag_contribution_out(p, (int)r->enc.pos, j),
                                        apsmpi_rsag_request_first(p, APSMPI_RSAG_CONTRIB_OUT) + p->piece0[seg] + j, 0});
    apsmpi_rsag_encode_step(p, &r->enc);
    return 1;
}

/* Waits for message key, encoding and sending contributions meanwhile (wait_working). */
static void wait_working(struct run *r, uint64_t key)
{
    for (;;) {
        if (sim_ep_take(r->e, key))
            return;
        pump(r);
        if (!encode_next(r))
            break;
    }
    while (!sim_ep_take(r->e, key)) {
        sim_ep_progress(r->e);
        pump(r);
    }
}

static void wait_idle(struct run *r, uint64_t key)
{
    while (!sim_ep_take(r->e, key)) {
        sim_ep_progress(r->e);
        pump(r);
    }
}

void sim_lib_rsag(sim_ep *e, sim_group g, size_t n, int window, int op)
{
    struct run r = {.e = e, .g = g, .op = op};
    apsmpi_rsag_plan *p = &r.p;
    int *counts = sim_segments(n, g.size);
    size_t block_len = P.f.mx ? n : 4096;
    void *mem;

    r.bpe = (double)apsmpi_group_bytes(&P.f) / (double)apsmpi_group_elems(&P.f);
    apsmpi_rsag_plan_init(p, &P.f, counts, g.size, g.me, apsmpi_pipelined(n, P.piece) ? P.piece : 0, block_len, 1,
                          window, sizeof(void *));
    if (posix_memalign(&mem, 64, p->memory_bytes) != 0)
        abort();
    apsmpi_rsag_plan_bind(p, mem);
    apsmpi_rsag_sendq_init(&r.q, p, mem);
    r.gpu_encoded = r.gpu_decoded = simgrid_get_clock();
    for (size_t j = 0; j < p->own_pieces; j++) {
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++) {
            apsmpi_rsag_msg m = apsmpi_rsag_contribution_in(p, t, j);
            wait_working(&r, sim_key(g.members[m.peer], op, (uint32_t)m.tag));
            sim_compute((double)apsmpi_rsag_piece_len(p, g.me, j) / P.dec); /* add_decoded, on the host */
        }
        while (!apsmpi_rsag_encoded(p, &r.enc, (size_t)p->size - 1, j))
            encode_next(&r);
        /* this rank's own piece, encoded (on the GPU: copied back), decoded and added on the host */
        sim_compute((double)apsmpi_rsag_piece_len(p, g.me, j) / P.dec);
        /* share_piece: the sum encoded once (on the host), sent to every other rank, decoded here */
        sim_compute((double)apsmpi_rsag_piece_len(p, g.me, j) / P.enc);
        for (int t = 0; t < apsmpi_rsag_rounds(p); t++)
            send_message(&r, (apsmpi_rsag_send){apsmpi_rsag_result_out(p, t, j),
                                                apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_OUT) +
                                                    (size_t)t * p->own_pieces + j,
                                                1});
        decode_result_cost(&r, apsmpi_rsag_piece_len(p, g.me, j));
    }
    while (encode_next(&r))
        ;
    for (int t = 0; t < apsmpi_rsag_rounds(p); t++) {
        int from = apsmpi_rsag_recv_peer(p, t);
        for (size_t j = 0; j < apsmpi_rsag_pieces(p, from); j++) {
            apsmpi_rsag_msg m = apsmpi_rsag_result_in(p, t, j);
            wait_idle(&r, sim_key(g.members[m.peer], op, (uint32_t)m.tag));
            decode_result_cost(&r, apsmpi_rsag_piece_len(p, from, j));
        }
    }
    while (apsmpi_rsag_sendq_waiting(&r.q) || r.q.in_flight > 0) { /* drain */
        sim_ep_progress(e);
        pump(&r);
    }
    sim_ep_drain(e);
    if (P.gpu && r.gpu_decoded > simgrid_get_clock())
        sim_gpu(r.gpu_decoded - simgrid_get_clock());
    free(mem);
    free(counts);
}
