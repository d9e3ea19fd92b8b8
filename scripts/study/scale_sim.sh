#!/bin/bash
# scale_sim.sh: the simulated scale study and validation (results/scale_sim/README.md): sim/apsmpi_sim over a grid, one CSV row per run, resumable.
# usage: scripts/study/scale_sim.sh OUT.csv GRID [MAX_SECONDS]
#   GRID: validation (the 1 Gbit/s fake nodes of results/speed), host (8-1024 nodes x 8 ranks,
#   100 Gbit/s), rates (10 and 400 Gbit/s), gpu (GPU buffers), scale1024 (host's runs at 1,024
#   nodes, 25 MiB), window (the node path's part window: FMT (e4m3), WINDOWS at NODES, 100 Gbit/s),
#   fp16 (the library's fp16 and the 16-bit zero-cost ring, 8 and 64 nodes, 100 Gbit/s), twolevel (the library
#   as it chooses, the two-level schedule from 256 nodes, at NODES (256-1,024), SIZES, FMTS (e4m3 and mxfp4),
#   plain MPI beside; BEFORE=1 adds rsag's rows, --twolevel-from 0), threshold (rsag against the two-level
#   schedule forced, --twolevel-from 0 and 2, at NODES (16-128) and SIZES (4, 25, 100 MiB)), gpu2 (GPU
#   buffers: the flat allreduce two-level, --twolevel-from 2, beside the gpu grid's rsag). Runs already in OUT.csv are
#   skipped, so a grid can be run in batches (each under the heavy lock, stopped after
#   MAX_SECONDS, default 540). Each run is bounded by RUN_TIMEOUT seconds (default 500).
set -euo pipefail
out=$1 grid=$2 budget=${3:-540}
SIM=${SIM:-sim/apsmpi_sim}
RUN_TIMEOUT=${RUN_TIMEOUT:-500}
start=$(date +%s)
[ -s "$out" ] || echo "alg,format,buffers,nodes,ppn,gbps,bytes,time_ms,bytes_sent,bytes_max_rank,messages,wall_s,grid,args" >"$out"

# run GRIDNAME ARGS...: one simulation, unless its row is there
run() {
    local g=$1 args
    shift
    args="$*"
    grep -qF ",$g,$args" "$out" && return 0
    if [ $(($(date +%s) - start)) -ge "$budget" ]; then
        echo "scale_sim: budget of $budget s spent; rerun to go on" >&2
        exit 3
    fi
    local row
    if row=$(timeout "$RUN_TIMEOUT" "$SIM" "$@"); then
        echo "$row,$g,$args" >>"$out"
        echo "$row"
    else
        echo "scale_sim: timed out or failed: $args" >&2
        echo "timeout,,,,,,,,,,,$RUN_TIMEOUT,$g,$args" >>"$out"
    fi
}

MiB=1048576
case $grid in
validation)
    # the 2-core VM (results/speed): 1 Gbit/s tc links, fitted once (README): 0.9 of the rate,
    # 1.75 ms a message; the codec at 1.5x the profile's one-core rates (4 ranks, 2 cores,
    # codec threads)
    V="--gbps 1 --eff 0.9 --lat-us 875 --profile vm --core-speed 1.5"
    for s in 16 64; do
        for lay in "4 1" "2 2"; do
            set -- $lay
            L="--nodes $1 --ppn $2 --cores $2 --bytes $((s * MiB))"
            run validation --alg mpi-ring $V $L
            run validation --alg zero --zero-bits 8 $V $L
            run validation --alg zero --zero-bits 4.25 $V $L
            run validation --alg lib --fmt e4m3 $V $L
            run validation --alg lib --fmt mxfp4 $V $L
        done
    done
    ;;
host | rates | scale1024)
    # NODES, SIZES (MiB): a part of the grid (the node path's messages grow as N^2: 512 nodes
    # of 8 ranks is 4.2 million messages a 25 MiB call, 1024 nodes 16.7 million)
    rates="100"
    nodes=${NODES:-"8 16 32 64 128 256"}
    sizes=${SIZES:-25 100}
    [ "$grid" = rates ] && rates="10 400" && nodes=${NODES:-"8 64 256"}
    [ "$grid" = scale1024 ] && nodes=${NODES:-1024} && sizes=${SIZES:-25}
    for r in $rates; do
        for N in $nodes; do
            for s in $sizes; do
                A="--nodes $N --ppn 8 --gbps $r --topo fattree --bytes $((s * MiB))"
                run "$grid" --alg lib --fmt e4m3 $A
                run "$grid" --alg lib --fmt mxfp4 $A
                run "$grid" --alg mpi-node $A
                run "$grid" --alg mpi-rab $A
                [ "$N" -le 64 ] && run "$grid" --alg mpi-ring $A
                [ "$N" -le 64 ] && run "$grid" --alg zero --zero-bits 8 $A
            done
        done
    done
    ;;
window)
    # the part window at the node counts where it decides (docs/design.md, the node path)
    for N in ${NODES:-256 512}; do
        for s in ${SIZES:-25}; do
            for w in ${WINDOWS:-4 8 16}; do
                run window --alg lib --fmt ${FMT:-e4m3} --nodes $N --ppn 8 --gbps 100 --topo fattree \
                    --bytes $((s * MiB)) --part-window $w
            done
        done
    done
    ;;
fp16)
    for N in ${NODES:-8 64}; do
        for s in ${SIZES:-25 100}; do
            A="--nodes $N --ppn 8 --gbps 100 --topo fattree --bytes $((s * MiB))"
            run fp16 --alg lib --fmt fp16 $A
            run fp16 --alg zero --fmt fp16 $A
        done
    done
    ;;
twolevel)
    for N in ${NODES:-256 512 1024}; do
        for s in ${SIZES:-25 100}; do
            A="--nodes $N --ppn 8 --gbps 100 --topo fattree --bytes $((s * MiB))"
            for f in ${FMTS:-e4m3 mxfp4}; do
                run twolevel --alg lib --fmt $f $A
                [ "${BEFORE:-0}" = 1 ] && run twolevel --alg lib --fmt $f $A --twolevel-from 0
            done
            [ "${MPI:-1}" = 1 ] && run twolevel --alg mpi-node $A && run twolevel --alg mpi-rab $A
        done
    done
    ;;
threshold)
    for N in ${NODES:-16 32 64 128}; do
        for s in ${SIZES:-4 25 100}; do
            for from in 0 2; do
                run threshold --alg lib --fmt ${FMT:-e4m3} --nodes $N --ppn 8 --gbps 100 --topo fattree \
                    --bytes $((s * MiB)) --twolevel-from $from
            done
        done
    done
    ;;
gpu2)
    for N in ${NODES:-2 4 8 16 64 128}; do
        for s in ${SIZES:-25}; do
            A="--nodes $N --ppn 8 --gbps 100 --topo fattree --gpu --bytes $((s * MiB))"
            for f in ${FMTS:-e4m3 mxfp4}; do
                run gpu2 --alg lib --fmt $f $A --twolevel-from 2
            done
        done
    done
    ;;
gpu)
    for N in ${NODES:-8 16 32 64 128}; do
        for s in ${SIZES:-25 100}; do
            A="--nodes $N --ppn 8 --gbps 100 --topo fattree --gpu --bytes $((s * MiB))"
            run gpu --alg lib --fmt e4m3 $A
            run gpu --alg lib --fmt mxfp4 $A
            run gpu --alg mpi-node $A
        done
    done
    ;;
*)
    echo "scale_sim: unknown grid $grid" >&2
    exit 2
    ;;
esac
