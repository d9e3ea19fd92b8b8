#!/bin/bash
# auto_widths.sh: the widths APSMPI_FORMAT=auto chose call by call over training (results/training/auto/widths.csv, widths.png): the study's MLP, seed 1, from rank 0's debug lines.
# usage: scripts/study/auto_widths.sh OUTDIR ["[gpt:]NP=BUDGET[=LADDER] ..."]
#   (default "4=0.3 16=0.3 gpt:8=0.3 4=0.3=e2m1,e3m2,e4m3 gpt:8=0.3=e2m1,e3m2,e4m3"; LADDER: APSMPI_AUTO_LADDER)
# Each run is the auto study's with APSMPI_LOG_LEVEL=debug, which logs each call's width and the
# share this rank's encoding flushed: the MLP as scripts/study/train_auto.sh runs it (2 epochs on
# 20000 images, one bucket of up to 1 MiB), gpt: the transformer as train_gpt_study.sh does (400
# steps, one fused bucket, APSMPI_SCALING=block); APSMPI_MIN_BYTES=0, APSMPI_INTRANODE=compress.
# Its last line (accuracy, or the transformer's validation loss) is the study's run of the same
# seed, bit for bit. CSV: model,np,budget,call,width,flushed_pct,final,exit_status.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 runs=${2:-4=0.3 16=0.3 gpt:8=0.3 4=0.3=e2m1,e3m2,e4m3 gpt:8=0.3=e2m1,e3m2,e4m3}
lib=${LIB:-$root/.libs/libapsmpi.so} bin=${BIN:-$root/apps/apsmpi_train}
# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"
clean_mpi_env
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "model,np,budget,ladder,call,width,flushed_pct,final,exit_status" >"$out/widths.csv"
# spec_of RUN: sets model, np, budget and ladder from [gpt:]NP=BUDGET[=LADDER]
spec_of() {
    local spec=$1
    model=mlp
    [[ $spec == gpt:* ]] && model=gpt spec=${spec#gpt:}
    IFS== read -r np budget ladder <<<"$spec"
    ladder=${ladder:-mxfp4,mxfp5,mxfp6,mxfp8}
}
for run in $runs; do
    spec_of "$run"
    if [ $model = mlp ]; then
        args=(--model mlp --epochs 2 --train-limit 20000 --test-limit 5000 --bucket-bytes 1048576) col=6
    else
        args=(--model gpt --steps 400 --bucket-bytes all) col=9
    fi
    timeout -k 10 900 mpirun -np "$np" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
        -x "LD_PRELOAD=$lib" -x APSMPI_MIN_BYTES=0 -x APSMPI_STATS=1 -x APSMPI_INTRANODE=compress \
        -x APSMPI_FORMAT=auto -x APSMPI_SCALING=block -x "APSMPI_ERROR_BUDGET=$budget" -x "APSMPI_AUTO_LADDER=$ladder" \
        -x APSMPI_LOG_LEVEL=debug \
        "$bin" "${args[@]}" --seed 1 --label "auto-$budget" --csv "$tmp/run.csv" >"$tmp/run.log" 2>&1 </dev/null
    rc=$?
    final=$(tail -n 1 "$tmp/run.csv" 2>/dev/null | cut -d, -f$col)
    sed -n 's/^apsmpi\[0\] DEBUG: auto: a [0-9]*-element call on \([a-z0-9]*\), flushed \([0-9.]*\)%.*/\1 \2/p' "$tmp/run.log" |
        awk -v m="$model" -v np="$np" -v b="$budget" -v l="${ladder//,/ }" -v f="$final" -v rc="$rc" \
            '{printf "%s,%s,%s,%s,%d,%s,%s,%s,%s\n", m, np, b, l, NR, $1, $2, f, rc}' >>"$out/widths.csv"
    echo "$model np $np budget $budget ladder $ladder: exit $rc, final $final," \
        "$(grep -c "^$model,$np,$budget,${ladder//,/ }," "$out/widths.csv") calls"
done
# the plot: one panel per run, the bits an element of each call's width (4: mxfp4 or e2m1, 5:
# mxfp5, 6: mxfp6 or e3m2, 8: mxfp8 or e4m3, 32: fp32, drawn at 10), and the share rank 0's
# encoding flushed
awk -F, 'NR > 1 {w = $6; r = (w == "mxfp4" || w == "e2m1") ? 4 : (w == "mxfp5") ? 5 : (w == "mxfp6" || w == "e3m2") ? 6 : (w == "mxfp8" || w == "e4m3") ? 8 : 10
    f = $1 "_" $2 "_" $3 "_" $4; gsub(/ /, "-", f)
    printf "%d %d %s\n", $5, r, $7 > ("'"$tmp"'/" f ".dat")}' "$out/widths.csv"
{
    echo "set terminal pngcairo noenhanced size 1200,$((300 * $(wc -w <<<"$runs"))) font 'sans,10'"
    echo "set output '$out/widths.png'"
    echo "set multiplot layout $(wc -w <<<"$runs"),1"
    echo "set ytics ('4 bits' 4, '5' 5, '6' 6, '8' 8, 'fp32' 10); set yrange [3.5:10.5]"
    echo "set y2tics; set y2label 'flushed by rank 0 (%)'; set xlabel 'call (one per training step)'"
    for run in $runs; do
        spec_of "$run"
        echo "set title '$([ $model = mlp ] && echo MLP || echo transformer), $np ranks, APSMPI_ERROR_BUDGET=$budget, ladder $ladder (seed 1)'"
        echo "plot '$tmp/${model}_${np}_${budget}_${ladder//,/-}.dat' using 1:2 with steps lw 2 title 'width', '' using 1:3 axes x1y2 with points pt 7 ps 0.3 title 'flushed %'"
    done
    echo "unset multiplot"
} | gnuplot
echo "auto_widths: $out/widths.csv, $out/widths.png"
