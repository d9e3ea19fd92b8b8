/* platform.c: writes the simulated platform as a SimGrid XML file: nodes of several cores behind one link each, a non-blocking switch or a two-level fat tree. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim.h"

const char *sim_platform_write(void)
{
    static char path[64];
    int N = P.nodes, fd;
    double Bps = P.link_bps / 8 * P.eff;
    FILE *f;

    snprintf(path, sizeof path, "/tmp/apsmpi_sim_XXXXXX");
    fd = mkstemp(path);
    if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
        perror("sim: platform file");
        exit(2);
    }
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n");
    fprintf(f,
            "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-%d\" speed=\"%.6gf\" core=\"%d\" bw=\"%.6gBps\" "
            "lat=\"%.6gs\" sharing_policy=\"SPLITDUPLEX\" loopback_bw=\"%.6gBps\" loopback_lat=\"%.6gs\"",
            N - 1, P.core_speed * 1e9, P.cores, Bps, P.lat, P.loop_Bps, P.loop_lat);
    if (P.topo[0] == 'f' && N >= 4) {
        /* two levels: leaves of `a` nodes, a/oversub spines, every link the node links' rate */
        int a = N < 32 ? N / 2 : 32, leaves = N / a, up = a / P.oversub > 0 ? a / P.oversub : 1;
        if (a * leaves != N) {
            fprintf(stderr, "sim: a fat tree needs the node count a multiple of %d\n", a);
            exit(2);
        }
        fprintf(f, " topology=\"FAT_TREE\" topo_parameters=\"2;%d,%d;1,%d;1,1\"", a, leaves, up);
    } else
        fprintf(f, " bb_bw=\"%.6gBps\" bb_lat=\"%.6gs\" bb_sharing_policy=\"FATPIPE\"", Bps * 1e3, P.sw_lat);
    fprintf(f, "/>\n</platform>\n");
    fclose(f);
    return path;
}
