/* sim.h: the network simulator's shared parts: its parameters, the cost model, the ranks' endpoints (SimGrid S4U C API). */
#ifndef APSMPI_SIM_H
#define APSMPI_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <simgrid/comm.h>
#include <simgrid/forward.h>

#include "algo/rsag_plan.h"
#include "core/format.h"

/* Everything one simulated call depends on (sim/main.c fills it from the command line). */
typedef struct sim_params {
    int nodes, ppn;                /* nodes, ranks per node */
    double link_bps, eff;          /* node link rate (bits/s) and the share of it that carries payload */
    double lat, sw_lat;            /* one-way latency of a node link and of a switch link (s) */
    double loop_Bps, loop_lat;     /* a node's shared memory, as SimGrid's loopback link (bytes/s, s) */
    const char *topo;              /* "star" (non-blocking switch) or "fattree" (two levels) */
    int oversub;                   /* fat tree: leaf down ports per up port */
    double core_speed;             /* a core's speed, in cores of the rate profile (0.5: half of one) */
    int cores;                     /* cores per node (the host's) */
    size_t n;                      /* elements of the allreduce */
    const char *alg;               /* see sim/main.c's usage */
    apsmpi_format f;               /* the library's wire format */
    double zero_bits;              /* "zero": bits per element plain MPI moves */
    size_t piece;                  /* APSMPI_CHUNK_SIZE */
    int window;                    /* APSMPI_RSAG_WINDOW */
    int part_window;               /* the node path's parts across nodes: -1 the library's choice */
    size_t twolevel_from;          /* APSMPI_TWOLEVEL_FROM */
    int gpu;                       /* buffers in GPU memory */
    double enc, dec, add, amax;    /* per-core rates, elements/s: encode, decode(-add), fp32 a+b, block maxima */
    double gpu_enc, gpu_dec, pcie; /* GPU kernels (elements/s) and PCIe (bytes/s) */
    double kernel_lat;             /* a kernel launch or copy's fixed cost (s) */
    int verbose;
} sim_params;

extern sim_params P;

/* Statistics over every endpoint: bytes and messages sent. */
extern double sim_bytes_sent, sim_bytes_max_rank;
extern long sim_msgs;

/* A CPU step of `sec` seconds on one whole core (scaled by P.core_speed, shared with the node's
 * other actors by SimGrid's host model). */
void sim_compute(double sec);
/* A GPU step: the actor waits `sec`, no CPU taken. */
void sim_gpu(double sec);

/* One actor's endpoint: a mailbox it receives on (as its permanent receiver: every message
 * is sent as soon as it is posted, like a receive posted in advance), the messages arrived but
 * not yet taken, its sends in flight. Messages are named by a key: sender, operation, tag. */
enum { SIM_GETS = 16 };
typedef struct sim_ep {
    int id;
    sg_mailbox_t mb;
    sg_comm_t gets[SIM_GETS];
    void *gdata[SIM_GETS];
    sg_comm_t *sends; /* tracked sends in flight */
    long *stok;
    int nsends, scap;
    uint64_t *keys; /* arrived, not taken: open addressing, 0 empty, 1 deleted */
    size_t kcap, kn, kdel;
    long *done_tok; /* completed tracked sends, to be read by the caller */
    int ndone, dcap;
    double bytes;
} sim_ep;

uint64_t sim_key(int src_ep, int op, uint32_t tag);
void sim_ep_init(sim_ep *e, int id);
void sim_ep_free(sim_ep *e);
/* Sends `bytes` to endpoint dst under key; tok >= 0: its completion is reported by
 * sim_ep_progress (in e->done_tok); tok < 0: nobody waits for it. */
void sim_ep_send(sim_ep *e, int dst, uint64_t key, size_t bytes, long tok);
/* Takes the message `key` if it has arrived: 1, else 0. */
int sim_ep_take(sim_ep *e, uint64_t key);
/* Waits for one event: a message arriving or a tracked send completing. */
void sim_ep_progress(sim_ep *e);
/* Waits for message `key` and takes it. */
void sim_ep_wait(sim_ep *e, uint64_t key);
/* Waits until every tracked send is complete. */
void sim_ep_drain(sim_ep *e);

/* Endpoint ids: actor role r (0 the rank, 1 and 2 its node-path helpers) of global rank g. */
static inline int sim_ep_id(int g, int role) { return g * 3 + role; }

/* The collectives (sim/mpi_algos.c): members[] are endpoint ids, me this actor's index. */
typedef struct sim_group {
    const int *members;
    int size, me;
} sim_group;
void sim_ring_allreduce(sim_ep *e, sim_group g, size_t n, double elem_bytes, double add_rate, int op);
void sim_ring_reduce_scatter(sim_ep *e, sim_group g, const size_t *counts, double elem_bytes, double add_rate, int op);
void sim_ring_allgather(sim_ep *e, sim_group g, const size_t *counts, double elem_bytes, int op);
void sim_rabenseifner(sim_ep *e, sim_group g, size_t n, double elem_bytes, double add_rate, int op);
void sim_recursive_doubling(sim_ep *e, sim_group g, size_t bytes, double add_sec, int op);

/* A rank's sends through the window (sim/lib_window.c, as src/algo/send_window.c): to
 * members[peer] under op's keys, tokens the requests' indices, queue from the plan's memory. */
typedef struct sim_window {
    sim_ep *e;
    const int *members;
    int op;
    apsmpi_rsag_sendq q;
} sim_window;
void sim_window_init(sim_window *w, sim_ep *e, const int *members, int op, apsmpi_rsag_send *queue, int window);
void sim_window_send(sim_window *w, apsmpi_rsag_send s);
void sim_window_pump(sim_window *w);
/* Waits for message key, keeping the window going; then until every send is complete. */
void sim_window_wait(sim_window *w, uint64_t key);
/* Waits for message key, doing work(arg) meanwhile (encoding and sending) while it returns 1. */
void sim_window_wait_working(sim_window *w, uint64_t key, int (*work)(void *arg), void *arg);
void sim_window_drain(sim_window *w);

/* The codec's time (sim/lib_window.c): on the host one core's rate; GPU buffers: encoding runs
 * ahead on its own stream (encoded bytes over PCIe), decoding queues on a second stream,
 * waited for at the end. */
typedef struct sim_codec {
    double gpu_encoded, gpu_decoded; /* the times the two streams have reached */
    double bpe;                      /* encoded bytes per element */
} sim_codec;
void sim_codec_init(sim_codec *c);
void sim_encode_cost(sim_codec *c, size_t len);
void sim_decode_result_cost(sim_codec *c, size_t len);
void sim_codec_end(sim_codec *c);

/* The library's algorithms (sim/lib_rsag.c, lib_twolevel.c, lib_ring.c, lib_node.c), on host
 * or GPU buffers (P.gpu). */
void sim_lib_rsag(sim_ep *e, sim_group g, size_t n, int window, int op);
void sim_lib_twolevel(sim_ep *e, sim_group g, size_t n, int window, int op);
/* The allreduce of n elements (a flat call or a node path's part) over g, as the library
 * chooses it: two-level from P.twolevel_from ranks on, a quarter of that for small calls,
 * always for a flat call over several nodes of several ranks (shared; apsmpi_twolevel_chosen),
 * else rsag. */
void sim_lib_allreduce(sim_ep *e, sim_group g, size_t n, int window, int shared, int op);
void sim_lib_ring(sim_ep *e, sim_group g, size_t n, int op);
void sim_lib_node(sim_ep *e, int rank, int op);
/* The agreements a compressed call starts with: block maxima, a small MAX allreduce. */
void sim_lib_agree(sim_ep *e, sim_group g, size_t n, int op);
/* An allreduce's segments, one per rank (allreduce_segments in src/entry/reductions.c). */
int *sim_segments(size_t n, int P);

/* The platform file (sim/platform.c) for P; returns its path. */
const char *sim_platform_write(void);

#endif
