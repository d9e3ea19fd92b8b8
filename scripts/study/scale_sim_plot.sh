#!/bin/bash
# scale_sim_plot.sh: the study's plot (results/scale_sim/scale_sim.png): time per allreduce against nodes, 100 Gbit/s, 8 ranks a node, from scale_sim.csv.
# usage: scripts/study/scale_sim_plot.sh results/scale_sim/scale_sim.csv results/scale_sim/scale_sim.png
set -euo pipefail
csv=$1 png=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one data file per (size, series): nodes and ms, from the rows of the host, gpu, gpu2, scale1024
# and twolevel grids; the library as it chooses now: rsag's parts at window 4 (from 8 nodes: the
# decision and window grids' --part-window 4 rows) below 256 nodes, the two-level schedule from
# 256 (the twolevel grid's rows without --twolevel-from); rsag at window 4 at every node count
# apart (before: those rows, and the twolevel grid's --twolevel-from 0), and the host grid's
# window 1 (before that, in the CSV, not plotted)
for mib in 25 100; do
    b=$((mib * 1048576))
    awk -F, -v b=$b -v d="$tmp" -v m=$mib '
        $7 == b && $6 == 100 && $5 == 8 && $1 != "timeout" {
            s = ""
            if ($13 == "host" || $13 == "gpu" || $13 == "scale1024" || ($13 == "twolevel" && $1 != "lib")) {
                s = $1 "-" $2 "-" $3
                if ($1 != "lib") s = $1 "-" $3
                if ($1 == "zero") s = "zero8"
                if ($13 == "host" && $1 == "lib") s = s "-w1"
            }
            w4 = ($13 == "decision" || $13 == "window") && $14 ~ /--part-window 4$/ && $4 >= 8
            if ((w4 && $4 < 256) || ($13 == "twolevel" && $1 == "lib" && $14 !~ /--twolevel-from/))
                print $4, $8 >> (d "/" m "_lib-" $2 "-host.dat")
            if (w4 || ($13 == "twolevel" && $1 == "lib" && $14 ~ /--twolevel-from 0/))
                s = "lib-" $2 "-host-rsag"
            if ($13 == "gpu2")
                s = "lib-" $2 "-gpu-2l"
            if (s != "")
                print $4, $8 >> (d "/" m "_" s ".dat")
        }' "$csv"
done
for f in "$tmp"/*.dat; do sort -n -o "$f" "$f"; done
series() { # gnuplot plot clauses for one size, each series in its own line type in both
    local mib=$1 first=1 lt=0
    for s in lib-e4m3-host:"apsmpi e4m3 (node path; two-level from 256 nodes)" \
        lib-mxfp4-host:"apsmpi mxfp4 (node path; two-level from 256 nodes)" \
        lib-e4m3-host-rsag:"apsmpi e4m3, rsag across nodes (window 4, before)" \
        lib-mxfp4-host-rsag:"apsmpi mxfp4, rsag across nodes (window 4, before)" \
        lib-e4m3-gpu-2l:"apsmpi e4m3, GPU buffers (flat, two-level)" lib-mxfp4-gpu-2l:"apsmpi mxfp4, GPU buffers (flat, two-level)" \
        lib-e4m3-gpu:"apsmpi e4m3, GPU buffers (flat rsag, before)" lib-mxfp4-gpu:"apsmpi mxfp4, GPU buffers (flat rsag, before)" \
        mpi-node-host:"MPI node-aware fp32" mpi-node-gpu:"MPI node-aware fp32, GPU buffers (CUDA-aware)" mpi-rab-host:"MPI Rabenseifner fp32" mpi-ring-host:"MPI ring fp32" \
        zero8:"zero-cost 8-bit ring"; do
        local f="$tmp/${mib}_${s%%:*}.dat"
        lt=$((lt + 1))
        [ -s "$f" ] || continue
        [ $first = 1 ] || printf ', '
        printf "'%s' using 1:2 with linespoints lt %d title '%s'" "$f" $lt "${s#*:}"
        first=0
    done
}
gnuplot <<GP
set terminal pngcairo size 1400,560 font ",10"
set output "$png"
set multiplot layout 1,2
set logscale x 2
set logscale y
set xlabel "nodes (8 ranks each), 100 Gbit/s links, two-level fat tree"
set ylabel "ms per allreduce (simulated)"
set key outside below horizontal maxcols 2 font ",8"
set grid
set title "25 MiB"
plot $(series 25)
set title "100 MiB"
plot $(series 100)
unset multiplot
GP
