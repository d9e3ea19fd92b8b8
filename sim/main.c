/* main.c: the allreduce simulator's command line: one call of one algorithm on a generated platform, one CSV row of its time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>

#include "sim.h"

sim_params P;

static const char *usage =
    "usage: apsmpi_sim [options]\n"
    "  --alg A      lib (the library's choice: the node path with several ranks per node on host buffers, else\n"
    "               flat: rsag, or two-level from --twolevel-from ranks), rsag, twolevel, node, ring (the\n"
    "               library's), mpi-ring, mpi-rab (Rabenseifner), mpi-rd\n"
    "               (recursive doubling), mpi-node (fp32: ring reduce-scatter in the node, Rabenseifner across\n"
    "               nodes, allgather in the node), zero (plain ring moving --zero-bits per element, no codec)\n"
    "  --fmt F      wire format (e4m3, mxfp4, fp16, ...)          --zero-bits B  (default: the format's)\n"
    "  --bytes S    fp32 bytes of the allreduce                  --nodes N --ppn K\n"
    "  --gbps R     node link rate                               --eff E   payload share of it (0.9)\n"
    "  --lat-us L   one-way latency of each link (2)             --sw-lat-us  switch latency, star (0.5)\n"
    "  --topo T     star | fattree                               --oversub O  fat tree taper (1)\n"
    "  --loop-gbs G a node's shared memory, GB/s (50)            --cores C  per node (ppn)\n"
    "  --profile P  xeon (AVX-512 server, default) | vm (the 2-core AVX2 VM of results/nodes)\n"
    "  --core-speed S  each core's speed in the profile's cores (1)\n"
    "  --gpu        GPU buffers (H200 kernels, PCIe 25 GB/s)     --window W --piece E  (4, 256k)\n"
    "  --part-window W  the node path's parts across nodes: W in flight (default: the library's choice)\n"
    "  --twolevel-from N  APSMPI_TWOLEVEL_FROM: ranks (a part: nodes) from which an allreduce goes two-level\n"
    "               (256, the library's default; 0: never)\n"
    "  --verbose\n";

/* Per-core rates (elements/s) of the codec (results/codec_xeon, results/codec), the fp32 add, block maxima. */
static void rates(const char *profile)
{
    int vm = strcmp(profile, "vm") == 0, mx4 = strcmp(P.f.name, "mxfp4") == 0, f16 = strcmp(P.f.name, "fp16") == 0;

    if (vm) { /* AMD EPYC, avx2: e4m3 1.46/2.13 (results/codec/README.md); mxfp4, fp16 scaled from avx2 rows */
        P.enc = mx4 ? 1.71e9 : f16 ? 3.62e9 : 1.46e9;
        P.dec = mx4 ? 2.37e9 : f16 ? 4.80e9 : 2.13e9;
        P.add = 1.0e9;
        P.amax = 3.0e9;
    } else { /* Xeon, avx512 (results/codec_xeon/README.md; fp16 results/codec/README.md) */
        P.enc = mx4 ? 2.69e9 : f16 ? 3.99e9 : 2.99e9;
        P.dec = mx4 ? 5.53e9 : f16 ? 4.99e9 : 5.08e9;
        P.add = 2.2e9;
        P.amax = 5.0e9;
    }
    /* H200 kernels (results/gpu_h200/README.md): GB/s of fp32 input / 4 */
    P.gpu_enc = (mx4 ? 1143 : f16 ? 1165 : 1160) / 4.0 * 1e9;
    P.gpu_dec = (mx4 ? 933 : f16 ? 1738 : 1583) / 4.0 * 1e9;
    P.pcie = 25e9;
    P.kernel_lat = 10e-6;
}

static void rank_main(int argc, char **argv)
{
    int rank = atoi(argv[1]), R = P.nodes * P.ppn, *all = malloc((size_t)R * sizeof *all);
    const char *a = P.alg;
    double bits =
        P.zero_bits > 0 ? P.zero_bits : (double)apsmpi_group_bytes(&P.f) * 8 / (double)apsmpi_group_elems(&P.f);
    sim_ep e;
    sim_group g;
    (void)argc;

    for (int i = 0; i < R; i++)
        all[i] = sim_ep_id(i, 0);
    g = (sim_group){all, R, rank};
    sim_ep_init(&e, sim_ep_id(rank, 0));
    if (strcmp(a, "lib") == 0)
        a = P.ppn > 1 && P.nodes > 1 && !P.gpu ? "node" : "flat";
    if (strcmp(a, "rsag") == 0 || strcmp(a, "twolevel") == 0 || strcmp(a, "flat") == 0) {
        sim_recursive_doubling(&e, g, 4, 0, 1); /* the route's agreement */
        sim_lib_agree(&e, g, P.n, 2);
        if (strcmp(a, "flat") == 0)
            sim_lib_allreduce(&e, g, P.n, P.window, P.nodes > 1 && P.ppn > 1, 3);
        else if (strcmp(a, "twolevel") == 0)
            sim_lib_twolevel(&e, g, P.n, P.window, 3);
        else
            sim_lib_rsag(&e, g, P.n, P.window, 3);
    } else if (strcmp(a, "node") == 0)
        sim_lib_node(&e, rank, 1);
    else if (strcmp(a, "ring") == 0) {
        sim_recursive_doubling(&e, g, 4, 0, 1);
        sim_lib_agree(&e, g, P.n, 2);
        sim_lib_ring(&e, g, P.n, 3);
    } else if (strcmp(a, "mpi-ring") == 0)
        sim_ring_allreduce(&e, g, P.n, 4, P.gpu ? P.gpu_dec : P.add, 1);
    else if (strcmp(a, "zero") == 0)
        sim_ring_allreduce(&e, g, P.n, bits / 8, 0, 1);
    else if (strcmp(a, "mpi-rab") == 0)
        sim_rabenseifner(&e, g, P.n, 4, P.gpu ? P.gpu_dec : P.add, 1);
    else if (strcmp(a, "mpi-rd") == 0)
        sim_recursive_doubling(&e, g, P.n * 4, (double)P.n / (P.gpu ? P.gpu_dec : P.add), 1);
    else if (strcmp(a, "mpi-node") == 0) {
        int L = P.ppn, node = rank / L, *nm = malloc((size_t)L * sizeof *nm),
            *cm = malloc((size_t)P.nodes * sizeof *cm);
        size_t *c = malloc((size_t)L * sizeof *c), part;
        for (int i = 0; i < L; i++) {
            nm[i] = all[node * L + i];
            c[i] = P.n / (size_t)L + ((size_t)i < P.n % (size_t)L);
        }
        for (int m = 0; m < P.nodes; m++)
            cm[m] = all[m * L + rank % L];
        part = c[rank % L];
        double add = P.gpu ? P.gpu_dec : P.add;
        if (L > 1)
            sim_ring_reduce_scatter(&e, (sim_group){nm, L, rank % L}, c, 4, add, 1);
        sim_rabenseifner(&e, (sim_group){cm, P.nodes, node}, part, 4, add, 2);
        if (L > 1)
            sim_ring_allgather(&e, (sim_group){nm, L, rank % L}, c, 4, 3);
    } else {
        fprintf(stderr, "sim: unknown --alg %s\n%s", a, usage);
        exit(2);
    }
    sim_ep_free(&e);
}

int main(int argc, char **argv)
{
    const char *fmt = "e4m3", *profile = "xeon";
    double bytes = 64.0 * 1024 * 1024, gbps = 100, lat_us = 2, sw_us = 0.5, loop = 50;
    char *sg_argv[] = {argv[0], "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
                       "--log=root.thres:critical",
                       /* beyond about 20,000 actors (three a rank) their stacks and guard pages
                        * pass Linux's 65,536 mappings a process: stacks of 64 KiB without guards
                        * (the simulated time does not depend on them: 1,024 nodes of 8, 25 MiB,
                        * 5.576734 ms either way) */
                       "--cfg=contexts/guard-size:0", "--cfg=contexts/stack-size:64", NULL};
    int sg_argc = 5;
    struct timespec t0, t1;
    char host[32];

    P = (sim_params){.nodes = 4,
                     .ppn = 1,
                     .eff = 0.9,
                     .topo = "star",
                     .oversub = 1,
                     .core_speed = 1,
                     .alg = "lib",
                     .piece = 256 * 1024,
                     .window = 4,
                     .part_window = -1,
                     .twolevel_from = 256}; /* APSMPI_TWOLEVEL_FROM's default (src/core/config_table.h) */
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        int used = 1;
        if (!strcmp(o, "--alg"))
            P.alg = v;
        else if (!strcmp(o, "--fmt"))
            fmt = v;
        else if (!strcmp(o, "--zero-bits"))
            P.zero_bits = atof(v);
        else if (!strcmp(o, "--bytes"))
            bytes = atof(v);
        else if (!strcmp(o, "--nodes"))
            P.nodes = atoi(v);
        else if (!strcmp(o, "--ppn"))
            P.ppn = atoi(v);
        else if (!strcmp(o, "--gbps"))
            gbps = atof(v);
        else if (!strcmp(o, "--eff"))
            P.eff = atof(v);
        else if (!strcmp(o, "--lat-us"))
            lat_us = atof(v);
        else if (!strcmp(o, "--sw-lat-us"))
            sw_us = atof(v);
        else if (!strcmp(o, "--topo"))
            P.topo = v;
        else if (!strcmp(o, "--oversub"))
            P.oversub = atoi(v);
        else if (!strcmp(o, "--loop-gbs"))
            loop = atof(v);
        else if (!strcmp(o, "--cores"))
            P.cores = atoi(v);
        else if (!strcmp(o, "--profile"))
            profile = v;
        else if (!strcmp(o, "--core-speed"))
            P.core_speed = atof(v);
        else if (!strcmp(o, "--window"))
            P.window = atoi(v);
        else if (!strcmp(o, "--part-window"))
            P.part_window = atoi(v);
        else if (!strcmp(o, "--twolevel-from"))
            P.twolevel_from = (size_t)atol(v);
        else if (!strcmp(o, "--piece"))
            P.piece = (size_t)atof(v);
        else if (!strcmp(o, "--gpu")) {
            P.gpu = 1;
            used = 0;
        } else if (!strcmp(o, "--verbose")) {
            P.verbose = 1;
            used = 0;
        } else {
            fprintf(stderr, "%s", usage);
            return 2;
        }
        i += used;
    }
    if (apsmpi_format_parse(fmt, &P.f) != 0) {
        fprintf(stderr, "sim: unknown format %s\n", fmt);
        return 2;
    }
    P.n = (size_t)(bytes / 4);
    P.link_bps = gbps * 1e9;
    P.lat = lat_us * 1e-6;
    P.sw_lat = sw_us * 1e-6;
    P.loop_Bps = loop * 1e9;
    P.loop_lat = 0.5e-6;
    if (P.cores == 0)
        P.cores = P.ppn;
    rates(profile);
    if (P.nodes * P.ppn * 3 > 20000)
        sg_argc = 7;
    simgrid_init(&sg_argc, sg_argv);
    simgrid_load_platform(sim_platform_write());
    for (int r = 0; r < P.nodes * P.ppn; r++) {
        char rs[16];
        const char *av[] = {"rank", rs};
        snprintf(rs, sizeof rs, "%d", r);
        snprintf(host, sizeof host, "n%d", r / P.ppn);
        sg_actor_create(rs, sg_host_by_name(host), rank_main, 2, (char **)av);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    simgrid_run();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%s,%s,%s,%d,%d,%g,%.0f,%.6f,%.0f,%.0f,%ld,%.2f\n", P.alg, fmt, P.gpu ? "gpu" : "host", P.nodes, P.ppn, gbps,
           bytes, simgrid_get_clock() * 1e3, sim_bytes_sent, sim_bytes_max_rank, sim_msgs,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return 0;
}
