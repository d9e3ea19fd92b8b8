#!/bin/bash
# train_auto.sh: the APSMPI_FORMAT=auto study (results/training/auto/): the MLP of the MX study, per seed and rank count, FP32 without the library and the library under each configuration NAME=SETTINGS, then a table of accuracy against FP32 of the same seed, bytes ratio and widths chosen.
# usage: scripts/study/train_auto.sh OUT "SEEDS" "RANKS" NAME=APSMPI_X=V,APSMPI_Y=W ...   (NAME fp32: no library;
#   a value may hold commas: APSMPI_AUTO_LADDER=e2m1,e3m2,e4m3)
# Each run: mpirun -np N --oversubscribe ... apps/apsmpi_train --model mlp --epochs 2 --train-limit 20000
# --test-limit 5000 --bucket-bytes 1048576 --seed S, library runs with APSMPI_MIN_BYTES=0 APSMPI_STATS=1
# APSMPI_INTRANODE=compress and the settings of NAME (the MX study's setting: results/training/mx/).
# LIB, BIN (environment): the library and the program (default: this tree's); RUN_WRAPPER: put in front of each run.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 seeds=$2 ranks=$3
shift 3
lib=${LIB:-$root/.libs/libapsmpi.so} bin=${BIN:-$root/apps/apsmpi_train}
# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"
clean_mpi_env
for seed in $seeds; do
    for np in $ranks; do
        for conf in "$@"; do
            name=${conf%%=*} settings=${conf#*=} xs=()
            if [ "$name" != fp32 ]; then
                xs=(-x "LD_PRELOAD=$lib" -x APSMPI_MIN_BYTES=0 -x APSMPI_STATS=1 -x APSMPI_INTRANODE=compress)
                # settings are split at the commas that start another APSMPI_ variable, so that a
                # value may hold commas (APSMPI_AUTO_LADDER=e2m1,e3m2,e4m3)
                mapfile -t kv <<<"${settings//,APSMPI_/$'\n'APSMPI_}"
                for s in "${kv[@]}"; do xs+=(-x "$s"); done
            fi
            mkdir -p "$out/runs/seed$seed"
            prefix=$out/runs/seed$seed/np$np-$name
            [ "$(cat "$prefix.rc" 2>/dev/null)" = 0 ] && continue
            ${RUN_WRAPPER:-} timeout -k 10 600 mpirun -np "$np" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
                "${xs[@]+"${xs[@]}"}" "$bin" --model mlp --epochs 2 --train-limit 20000 --test-limit 5000 \
                --bucket-bytes 1048576 --seed "$seed" --label "$name" --csv "$prefix.csv" >"$prefix.log" 2>&1 </dev/null
            echo $? >"$prefix.rc"
            echo "seed $seed np $np $name rc $(cat "$prefix.rc") acc $(tail -1 "$prefix.csv" 2>/dev/null | cut -d, -f6)"
        done
    done
done
