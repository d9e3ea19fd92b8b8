/* lib_ring.c: the library's pipelined ring (APSMPI_ALGORITHM=ring) run by a simulated rank: its own plan (src/algo/ring_plan.c), sums in the wire format at every hop. */
#include <stdlib.h>

#include "algo/ring_plan.h"
#include "sim.h"

void sim_lib_ring(sim_ep *e, sim_group g, size_t n, int op)
{
    int *counts = sim_segments(n, g.size), *order, left = g.members[(g.me + g.size - 1) % g.size],
        right = g.members[(g.me + 1) % g.size];
    apsmpi_ring_sizes z;
    apsmpi_ring_plan p;
    void *mem, *req;

    apsmpi_ring_sizes_init(&z, counts, g.size, apsmpi_pipelined(n, P.piece) ? P.piece : n, sizeof(void *));
    if (posix_memalign(&mem, 64, z.bytes) != 0)
        abort();
    apsmpi_ring_plan_bind(&p, &z, mem, &P.f, counts, g.size, g.me, 1, &req, &order);
    /* step s sends segment send_segment(s): at step 0 this rank's encoding, later what it received
     * at step s-1, summed with its own encoding of it while the steps reduce */
    for (int s = 0; s <= p.last_step; s++) {
        int seg = apsmpi_ring_send_segment(&p, s);
        for (size_t j = 0; j < apsmpi_ring_pieces(&p, seg); j++) {
            size_t len = apsmpi_ring_piece_len(&p, seg, j);
            if (s == 0)
                sim_compute((double)len / P.enc);
            else {
                sim_ep_wait(e, sim_key(left, op + s - 1, (uint32_t)j));
                if (apsmpi_ring_is_reduce_step(&p, s - 1)) /* own encoding, then the packed sum */
                    sim_compute((double)len / P.enc + 2.0 * (double)len / P.dec + (double)len / P.enc);
                if (apsmpi_ring_is_final(&p, s - 1))
                    sim_compute((double)len / P.dec);
            }
            sim_ep_send(e, right, sim_key(e->id, op + s, (uint32_t)j),
                        (size_t)apsmpi_ring_piece_groups(&p, seg, j) * p.gbytes, -1);
        }
    }
    {
        int seg = apsmpi_ring_recv_segment(&p, p.last_step);
        for (size_t j = 0; j < apsmpi_ring_pieces(&p, seg); j++) {
            sim_ep_wait(e, sim_key(left, op + p.last_step, (uint32_t)j));
            sim_compute((double)apsmpi_ring_piece_len(&p, seg, j) / P.dec);
        }
    }
    free(mem);
    free(counts);
}
