/* mpi_algos.c: plain MPI's allreduce algorithms as simulated actors: ring, Rabenseifner, recursive doubling, the ring's halves. */
#include <stdlib.h>

#include "sim.h"

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* One exchange: send `sbytes` to peer `to` and receive from `from` under tag, both complete. */
static void sendrecv(sim_ep *e, sim_group g, int to, size_t sbytes, int from, int op, uint32_t tag)
{
    if (to >= 0)
        sim_ep_send(e, g.members[to], sim_key(e->id, op, tag), sbytes, 0);
    if (from >= 0)
        sim_ep_wait(e, sim_key(g.members[from], op, tag));
    sim_ep_drain(e);
}

void sim_ring_reduce_scatter(sim_ep *e, sim_group g, const size_t *counts, double elem_bytes, double add_rate, int op)
{
    int P = g.size, me = g.me;

    for (int s = 0; s < P - 1; s++) {
        int seg_out = mod(me - s, P), seg_in = mod(me - s - 1, P);
        sendrecv(e, g, mod(me + 1, P), (size_t)((double)counts[seg_out] * elem_bytes + 0.5), mod(me - 1, P), op,
                 (uint32_t)s);
        if (add_rate > 0)
            sim_compute((double)counts[seg_in] / add_rate);
    }
}

void sim_ring_allgather(sim_ep *e, sim_group g, const size_t *counts, double elem_bytes, int op)
{
    int P = g.size, me = g.me;

    for (int s = 0; s < P - 1; s++) {
        int seg_out = mod(me + 1 - s, P);
        sendrecv(e, g, mod(me + 1, P), (size_t)((double)counts[seg_out] * elem_bytes + 0.5), mod(me - 1, P), op,
                 (uint32_t)(P + s));
    }
}

static size_t *even_counts(size_t n, int P)
{
    size_t *c = malloc((size_t)P * sizeof *c), base = n / (size_t)P;

    for (int i = 0; i < P; i++)
        c[i] = base + ((size_t)i < n % (size_t)P);
    return c;
}

void sim_ring_allreduce(sim_ep *e, sim_group g, size_t n, double elem_bytes, double add_rate, int op)
{
    size_t *c = even_counts(n, g.size);

    if (g.size > 1) {
        sim_ring_reduce_scatter(e, g, c, elem_bytes, add_rate, op);
        sim_ring_allgather(e, g, c, elem_bytes, op);
    }
    free(c);
}

void sim_rabenseifner(sim_ep *e, sim_group g, size_t n, double elem_bytes, double add_rate, int op)
{
    int P = g.size, me = g.me, steps = 0;
    size_t len = n;

    if (P & (P - 1)) { /* not a power of two: the ring (MPI libraries fold; not simulated here) */
        sim_ring_allreduce(e, g, n, elem_bytes, add_rate, op);
        return;
    }
    /* as MPICH: the vector halves while the distance doubles (the nearest ranks, on the same
     * node, first), then the halves are gathered back in the reverse order */
    for (int mask = 1; mask < P; mask *= 2, steps++) {
        size_t half = len / 2;
        sendrecv(e, g, me ^ mask, (size_t)((double)(len - half) * elem_bytes), me ^ mask, op, (uint32_t)steps);
        if (add_rate > 0)
            sim_compute((double)half / add_rate);
        len = half;
    }
    for (int mask = P / 2; mask >= 1; mask /= 2, steps++) {
        sendrecv(e, g, me ^ mask, (size_t)((double)len * elem_bytes), me ^ mask, op, (uint32_t)steps);
        len *= 2;
    }
}

void sim_recursive_doubling(sim_ep *e, sim_group g, size_t bytes, double add_sec, int op)
{
    int P = g.size, me = g.me, p2 = 1, rem, vr;
    uint32_t t = 0;

    while (p2 * 2 <= P)
        p2 *= 2;
    rem = P - p2;
    /* fold: the first 2*rem ranks pair up, the even one gives its vector to the odd one */
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            sendrecv(e, g, me + 1, bytes, -1, op, t);
            sim_ep_wait(e, sim_key(g.members[me + 1], op, 1000));
            return;
        }
        sendrecv(e, g, -1, 0, me - 1, op, t);
        sim_compute(add_sec);
        vr = me / 2;
    } else
        vr = me - rem;
    t++;
    for (int mask = 1; mask < p2; mask *= 2, t++) {
        int pv = vr ^ mask, peer = pv < rem ? pv * 2 + 1 : pv + rem;
        sendrecv(e, g, peer, bytes, peer, op, t);
        sim_compute(add_sec);
    }
    if (me < 2 * rem)
        sendrecv(e, g, me - 1, bytes, -1, op, 1000);
}
