/* endpoint.c: a simulated rank's messages: SimGrid mailboxes as receives posted in advance, arrivals by key, tracked sends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/mailbox.h>

#include "sim.h"

double sim_bytes_sent, sim_bytes_max_rank;
long sim_msgs;

void sim_compute(double sec)
{
    if (sec > 0)
        sg_actor_execute(sec * 1e9); /* hosts run 1e9 * core_speed flops/s per core */
}

void sim_gpu(double sec)
{
    if (sec > 0)
        sg_actor_sleep_for(sec);
}

uint64_t sim_key(int src_ep, int op, uint32_t tag)
{
    return ((uint64_t)(src_ep + 1) << 40) | ((uint64_t)(op & 0xffff) << 24) | (tag & 0xffffff);
}

static char *mb_name(char *buf, int id)
{
    snprintf(buf, 32, "e%d", id);
    return buf;
}

static void post_get(sim_ep *e, int i) { e->gets[i] = sg_mailbox_get_async(e->mb, &e->gdata[i]); }

void sim_ep_init(sim_ep *e, int id)
{
    char name[32];

    memset(e, 0, sizeof *e);
    e->id = id;
    e->mb = sg_mailbox_by_name(mb_name(name, id));
    sg_mailbox_set_receiver(name);
    for (int i = 0; i < SIM_GETS; i++)
        post_get(e, i);
    e->kcap = 64;
    e->keys = calloc(e->kcap, sizeof *e->keys);
}

void sim_ep_free(sim_ep *e)
{
    if (e->bytes > sim_bytes_max_rank)
        sim_bytes_max_rank = e->bytes;
    free(e->keys);
    free(e->sends);
    free(e->stok);
    free(e->done_tok);
    /* the posted gets stay: the simulation ends with them */
}

static size_t slot_of(uint64_t k, size_t cap) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1); }

static void keys_put(sim_ep *e, uint64_t k);

static void keys_grow(sim_ep *e)
{
    uint64_t *old = e->keys;
    size_t oc = e->kcap;

    e->kcap = e->kn * 4 > oc ? oc * 2 : oc;
    e->keys = calloc(e->kcap, sizeof *e->keys);
    e->kn = e->kdel = 0;
    for (size_t i = 0; i < oc; i++)
        if (old[i] > 1)
            keys_put(e, old[i]);
    free(old);
}

static void keys_put(sim_ep *e, uint64_t k)
{
    size_t i;

    if ((e->kn + e->kdel + 1) * 2 > e->kcap)
        keys_grow(e);
    for (i = slot_of(k, e->kcap); e->keys[i] > 1; i = (i + 1) & (e->kcap - 1))
        ;
    if (e->keys[i] == 1)
        e->kdel--;
    e->keys[i] = k;
    e->kn++;
}

int sim_ep_take(sim_ep *e, uint64_t k)
{
    for (size_t i = slot_of(k, e->kcap); e->keys[i] != 0; i = (i + 1) & (e->kcap - 1))
        if (e->keys[i] == k) {
            e->keys[i] = 1;
            e->kn--;
            e->kdel++;
            return 1;
        }
    return 0;
}

void sim_ep_send(sim_ep *e, int dst, uint64_t key, size_t bytes, long tok)
{
    char name[32];
    sg_mailbox_t to = sg_mailbox_by_name(mb_name(name, dst));
    void *payload = (void *)(uintptr_t)key;
    long size = (long)(bytes ? bytes : 1);
    sg_comm_t c;

    e->bytes += (double)bytes;
    sim_bytes_sent += (double)bytes;
    sim_msgs++;
    if (tok < 0) { /* started by detach */
        sg_comm_detach(sg_mailbox_put_init(to, payload, size), NULL);
        return;
    }
    c = sg_mailbox_put_async(to, payload, size);
    if (e->nsends == e->scap) {
        e->scap = e->scap ? 2 * e->scap : 64;
        e->sends = realloc(e->sends, (size_t)e->scap * sizeof *e->sends);
        e->stok = realloc(e->stok, (size_t)e->scap * sizeof *e->stok);
    }
    e->sends[e->nsends] = c;
    e->stok[e->nsends++] = tok;
}

void sim_ep_progress(sim_ep *e)
{
    size_t n = SIM_GETS + (size_t)e->nsends;
    sg_comm_t stack[SIM_GETS + 256], *all = n <= SIM_GETS + 256 ? stack : malloc(n * sizeof *all);
    ssize_t i;

    memcpy(all, e->gets, sizeof e->gets);
    memcpy(all + SIM_GETS, e->sends, (size_t)e->nsends * sizeof *all);
    i = sg_comm_wait_any(all, n);
    if (all != stack)
        free(all);
    if (i < 0) {
        fprintf(stderr, "sim: wait_any failed on endpoint %d\n", e->id);
        abort();
    }
    if (i < SIM_GETS) {
        keys_put(e, (uint64_t)(uintptr_t)e->gdata[i]);
        post_get(e, (int)i);
        return;
    }
    i -= SIM_GETS;
    if (e->ndone == e->dcap) {
        e->dcap = e->dcap ? 2 * e->dcap : 64;
        e->done_tok = realloc(e->done_tok, (size_t)e->dcap * sizeof *e->done_tok);
    }
    e->done_tok[e->ndone++] = e->stok[i];
    e->sends[i] = e->sends[e->nsends - 1];
    e->stok[i] = e->stok[e->nsends - 1];
    e->nsends--;
}

void sim_ep_wait(sim_ep *e, uint64_t key)
{
    while (!sim_ep_take(e, key))
        sim_ep_progress(e);
}

void sim_ep_drain(sim_ep *e)
{
    while (e->nsends > 0)
        sim_ep_progress(e);
    e->ndone = 0;
}
