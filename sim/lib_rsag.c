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
    sim_window w;
    sim_codec codec;
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

static int encode_next(struct run *r)
{
    const apsmpi_rsag_plan *p = &r->p;
    int seg;
    size_t j;

    if (!apsmpi_rsag_encode_seek(p, &r->enc))
        return 0;
    seg = p->order[r->enc.pos];
    j = r->enc.j;
    sim_encode_cost(&r->codec, apsmpi_rsag_piece_len(p, seg, j));
    if (seg != p->rank)
        sim_window_send(
            &r->w, (apsmpi_rsag_send){apsmpi_rsag_contribution_out(p, (int)r->enc.pos, j),
                                      apsmpi_rsag_request_first(p, APSMPI_RSAG_CONTRIB_OUT) + p->piece0[seg] + j, 0});
    apsmpi_rsag_encode_step(p, &r->enc);
    return 1;
}

static int encode_work(void *r) { return encode_next(r); }

/* Waits for message key, encoding and sending contributions meanwhile (wait_working). */
static void wait_working(struct run *r, uint64_t key) { sim_window_wait_working(&r->w, key, encode_work, r); }

void sim_lib_rsag(sim_ep *e, sim_group g, size_t n, int window, int op)
{
    struct run r = {.e = e, .g = g, .op = op};
    apsmpi_rsag_plan *p = &r.p;
    int *counts = sim_segments(n, g.size);
    size_t block_len = P.f.mx ? n : 4096;
    void *mem;

    apsmpi_rsag_plan_init(p, &P.f, counts, g.size, g.me, apsmpi_pipelined(n, P.piece) ? P.piece : 0, block_len, 1,
                          window, sizeof(void *));
    if (posix_memalign(&mem, 64, p->memory_bytes) != 0)
        abort();
    apsmpi_rsag_plan_bind(p, mem);
    sim_window_init(&r.w, e, g.members, op, (apsmpi_rsag_send *)(void *)((char *)mem + p->at_queue), p->window);
    sim_codec_init(&r.codec);
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
            sim_window_send(&r.w, (apsmpi_rsag_send){apsmpi_rsag_result_out(p, t, j),
                                                     apsmpi_rsag_request_first(p, APSMPI_RSAG_RESULT_OUT) +
                                                         (size_t)t * p->own_pieces + j,
                                                     1});
        sim_decode_result_cost(&r.codec, apsmpi_rsag_piece_len(p, g.me, j));
    }
    while (encode_next(&r))
        ;
    for (int t = 0; t < apsmpi_rsag_rounds(p); t++) {
        int from = apsmpi_rsag_recv_peer(p, t);
        for (size_t j = 0; j < apsmpi_rsag_pieces(p, from); j++) {
            apsmpi_rsag_msg m = apsmpi_rsag_result_in(p, t, j);
            sim_window_wait(&r.w, sim_key(g.members[m.peer], op, (uint32_t)m.tag));
            sim_decode_result_cost(&r.codec, apsmpi_rsag_piece_len(p, from, j));
        }
    }
    sim_window_drain(&r.w);
    sim_codec_end(&r.codec);
    free(mem);
    free(counts);
}
