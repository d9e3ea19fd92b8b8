/* lib_window.c: what the simulated rsag and two-level schedule share: their sends through the window (send_window.c in the library), and the codec's time per step on host or GPU buffers. */
#include <simgrid/engine.h>

#include "core/packed_layout.h"
#include "sim.h"

void sim_window_init(sim_window *w, sim_ep *e, const int *members, int op, apsmpi_rsag_send *queue, int window)
{
    *w = (sim_window){.e = e, .members = members, .op = op, .q = {.queue = queue, .window = window}};
}

static void post(sim_window *w, const apsmpi_rsag_send *s)
{
    sim_ep_send(w->e, w->members[s->m.peer], sim_key(w->e->id, w->op, (uint32_t)s->m.tag), s->m.bytes,
                (long)s->request);
}

void sim_window_pump(sim_window *w)
{
    const apsmpi_rsag_send *s;

    for (int d = 0; d < w->e->ndone; d++)
        for (int i = 0; i < w->q.in_flight; i++)
            if ((long)w->q.flying[i] == w->e->done_tok[d]) {
                apsmpi_rsag_sendq_done(&w->q, i);
                break;
            }
    w->e->ndone = 0;
    while ((s = apsmpi_rsag_sendq_next(&w->q)) != NULL)
        post(w, s);
}

void sim_window_send(sim_window *w, apsmpi_rsag_send s)
{
    if (w->q.window == 0) {
        post(w, &s);
        return;
    }
    apsmpi_rsag_sendq_push(&w->q, s);
    sim_window_pump(w);
}

void sim_window_wait(sim_window *w, uint64_t key)
{
    while (!sim_ep_take(w->e, key)) {
        sim_ep_progress(w->e);
        sim_window_pump(w);
    }
}

void sim_window_wait_working(sim_window *w, uint64_t key, int (*work)(void *arg), void *arg)
{
    for (;;) {
        if (sim_ep_take(w->e, key))
            return;
        sim_window_pump(w);
        if (!work(arg))
            break;
    }
    sim_window_wait(w, key);
}

void sim_window_drain(sim_window *w)
{
    while (apsmpi_rsag_sendq_waiting(&w->q) || w->q.in_flight > 0) {
        sim_ep_progress(w->e);
        sim_window_pump(w);
    }
    sim_ep_drain(w->e);
}

void sim_codec_init(sim_codec *c)
{
    c->gpu_encoded = c->gpu_decoded = simgrid_get_clock();
    c->bpe = (double)apsmpi_group_bytes(&P.f) / (double)apsmpi_group_elems(&P.f);
}

void sim_encode_cost(sim_codec *c, size_t len)
{
    if (!P.gpu) {
        sim_compute((double)len / P.enc);
        return;
    }
    c->gpu_encoded += P.kernel_lat + (double)len / P.gpu_enc + (double)len * c->bpe / P.pcie;
    if (c->gpu_encoded > simgrid_get_clock())
        sim_gpu(c->gpu_encoded - simgrid_get_clock());
}

void sim_decode_result_cost(sim_codec *c, size_t len)
{
    double now = simgrid_get_clock();
    if (!P.gpu) {
        sim_compute((double)len / P.dec);
        return;
    }
    c->gpu_decoded = (c->gpu_decoded > now ? c->gpu_decoded : now) + P.kernel_lat + (double)len * c->bpe / P.pcie +
                     (double)len / P.gpu_dec;
}

void sim_codec_end(sim_codec *c)
{
    if (P.gpu && c->gpu_decoded > simgrid_get_clock())
        sim_gpu(c->gpu_decoded - simgrid_get_clock());
}
