/* lib_node.c: the library's node path run by a simulated rank: its own plan (src/algo/node_plan.c), batches overlapped as node_path.c does, parts across nodes by rsag or the two-level schedule. */
#include <stdio.h>
#include <stdlib.h>
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>

#include "algo/node_plan.h"
#include "algo/rsag_plan.h"
#include "sim.h"

/* The small agreements every compressed call starts with (src/call/compressed_call.c): block
 * maxima over the input, then a MAX allreduce of one 16-bit exponent per block of 4096 (two
 * for an MX format), recursive doubling as MPI's small allreduce. */
void sim_lib_agree(sim_ep *e, sim_group g, size_t n, int op)
{
    size_t count = P.f.mx ? 2 : (n + 4095) / 4096 + 2;

    if (P.gpu)
        sim_gpu(P.kernel_lat + (double)n / P.gpu_dec + 2 * P.kernel_lat);
    else if (!P.f.mx)
        sim_compute((double)n / P.amax);
    if (g.size > 1)
        sim_recursive_doubling(e, g, count * 2, 0, op);
}

/* The node's ranks and its batches: what a rank's two helpers (the nonblocking fp32
 * reduce-scatter and allgather of node_path.c, progressing while the part crosses) share. */
struct node_rank {
    apsmpi_node_plan plan;
    int rank, node, L;
    int *node_members[2]; /* endpoint ids of the node's helpers: reduce-scatter, allgather */
    sg_sem_t rs_go, rs_done, ag_go, ag_done;
};

static void batch_parts(const struct node_rank *nr, size_t k, size_t *counts)
{
    int c[256], f[256];
    size_t len = apsmpi_node_batch_len(&nr->plan, k);

    apsmpi_node_parts(len, nr->plan.unit, nr->plan.min_node_size, nr->L, c, f);
    for (int i = 0; i < nr->L; i++)
        counts[i] = (size_t)c[i];
}

/* A helper: the node's fp32 reduce-scatter (role 1) or allgather (role 2) of each batch in
 * turn, over shared memory (Open MPI's ring within the node). */
static void helper(int argc, char **argv)
{
    struct node_rank *nr = (struct node_rank *)(uintptr_t)strtoull(argv[1], NULL, 16);
    int role = argc > 2 ? atoi(argv[2]) : 1;
    sim_ep e;
    sim_group g = {nr->node_members[role - 1], nr->L, nr->rank % nr->L};
    size_t counts[256];

    sim_ep_init(&e, sim_ep_id(nr->rank, role));
    for (size_t k = 0; k < nr->plan.batches; k++) {
        sg_sem_acquire(role == 1 ? nr->rs_go : nr->ag_go);
        batch_parts(nr, k, counts);
        if (role == 1)
            sim_ring_reduce_scatter(&e, g, counts, 4, P.add, (int)k);
        else
            sim_ring_allgather(&e, g, counts, 4, (int)k);
        sg_sem_release(role == 1 ? nr->rs_done : nr->ag_done);
    }
    sim_ep_free(&e);
}

static void spawn(struct node_rank *nr, int role)
{
    char ptr[32], r[8], name[32];
    const char *argv[] = {"helper", ptr, r};

    snprintf(ptr, sizeof ptr, "%llx", (unsigned long long)(uintptr_t)nr);
    snprintf(r, sizeof r, "%d", role);
    snprintf(name, sizeof name, "h%d.%d", nr->rank, role);
    sg_actor_create(name, sg_host_self(), helper, 3, (char **)argv);
}

void sim_lib_node(sim_ep *e, int rank, int op)
{
    int L = P.ppn, N = P.nodes, node = rank / L;
    struct node_rank *nr = calloc(1, sizeof *nr);
    size_t piece = P.piece, counts[256];
    int *cross = malloc((size_t)N * sizeof *cross), *all = malloc((size_t)N * L * sizeof *all);
    sim_group world;

    nr->rank = rank;
    nr->node = node;
    nr->L = L;
    /* node_plan in node_path.c: batches of 4 pieces per node rank, parts in whole blocks */
    apsmpi_node_plan_init(&nr->plan, P.n, P.f.mx ? 64 : 4096, piece * 4 * (size_t)L, L, rank % L, L, 0);
    for (int role = 0; role < 2; role++) {
        nr->node_members[role] = malloc((size_t)L * sizeof(int));
        for (int i = 0; i < L; i++)
            nr->node_members[role][i] = sim_ep_id(node * L + i, role + 1);
    }
    for (int m = 0; m < N; m++)
        cross[m] = sim_ep_id(m * L + rank % L, 0);
    for (int i = 0; i < N * L; i++)
        all[i] = sim_ep_id(i, 0);
    nr->rs_go = sg_sem_init(0);
    nr->rs_done = sg_sem_init(0);
    nr->ag_go = sg_sem_init(0);
    nr->ag_done = sg_sem_init(0);
    spawn(nr, 1);
    spawn(nr, 2);
    world = (sim_group){all, N * L, rank};
    sim_recursive_doubling(e, world, 4, 0, op); /* the route's agreement (MAX of one int) */
    /* node_progress: batch k summed in the node while k-1 crosses and k-2 is gathered */
    for (size_t k = 0; k <= nr->plan.batches; k++) {
        if (k < nr->plan.batches) {
            if (k >= APSMPI_NODE_SLOTS)
                sg_sem_acquire(nr->ag_done);
            sg_sem_release(nr->rs_go);
        }
        if (k > 0) {
            sg_sem_acquire(nr->rs_done);
            batch_parts(nr, k - 1, counts);
            if (N > 1 && counts[rank % L] > 0) {
                sim_group g = {cross, N, node};
                int pop = op + 1 + 2 * (int)(k - 1); /* the part's agreement, then its rsag or two-level */
                sim_lib_agree(e, g, counts[rank % L], pop);
                sim_lib_allreduce(e, g, counts[rank % L],
                                  P.part_window >= 0 ? P.part_window : apsmpi_node_part_window(P.window, N), 0,
                                  pop + 1);
            }
            sg_sem_release(nr->ag_go);
        }
    }
    for (size_t k = nr->plan.batches > APSMPI_NODE_SLOTS ? nr->plan.batches - APSMPI_NODE_SLOTS : 0;
         k < nr->plan.batches; k++)
        sg_sem_acquire(nr->ag_done);
    free(cross);
    free(all);
    /* nr and its arrays stay: the helpers may still be ending */
}
