#!/bin/bash
# main.sh: sets up a fresh Debian machine, builds apsmpi, and runs the main job: short training comparisons, library off and on.
# The training program (apps/apsmpi_train) trains the MLP on Fashion-MNIST at 4 and 8 ranks,
# once without the library (FP32), once per format (fp16, bf16, e5m2, e4m3, e3m2) with APS and
# with scaling none, and once with APSMPI_FORMAT=auto, and prints the table (test accuracy,
# difference from FP32, bytes sent, divergence); then its character-level transformer at 4 ranks,
# 150 steps, FP32 and e4m3, e3m2, e2m1 with APS and auto in one fused bucket, and prints that
# table (validation loss, difference from FP32, values flushed). Then the speed: MPI_Allreduce of
# 64 MiB of floats (apps/apsmpi_bench) on 4 emulated nodes of one rank behind 1 Gbit/s links
# (scripts/netns_mpirun.sh, through scripts/bench/bench_nodes.sh), plain MPI against apsmpi e4m3
# and mxfp4, Open MPI's ring underneath both, and prints the time per allreduce and the speed-up.
# The full studies: results/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/apt.sh
# the plot is a convenience: without gnuplot the table is still made, and the job still passes
if ! command -v gnuplot >/dev/null; then
    echo "main: installing gnuplot-nox (for the accuracy plot)"
    apt_install gnuplot-nox || echo "main: gnuplot-nox could not be installed; the table comes without a plot" >&2
fi
out=${APSMPI_MAIN_OUT:-results/main}
scripts/study/train_compare.sh --quick --model mlp --formats "fp16 bf16 e5m2 e4m3 e3m2 auto" --out "$out"
echo
scripts/study/train_gpt_study.sh --quick --ranks 4 --formats "e4m3 e3m2 e2m1 auto" --out "$out/transformer"
cat "$out/transformer/README.md"

# The speed: the same MPI call with the library off and on, where the network is the limit
echo
speed=$out/speed
mkdir -p "$speed"
rm -f "$speed/speed.csv"
rounds=${APSMPI_MAIN_SPEED_ROUNDS:-2}
echo "main: MPI_Allreduce of 64 MiB on 4 emulated nodes behind 1 Gbit/s links, $rounds rounds (a minute or two)"
# the training above leaves the 1-minute load average high: the timing starts once it is below
# the number of cores (a minute at most), and the table gives it
for _ in $(seq 12); do
    awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v n="$(nproc)" 'BEGIN { exit !(l < n) }' && break
    sleep 5
done
load=$(cut -d' ' -f1 /proc/loadavg)
scripts/bench/bench_nodes.sh --layouts 4x1 --rate 1gbit --min 64M --max 64M --rounds "$rounds" \
    --configs "mpi:ring e4m3:rsag:ring mxfp4:rsag:ring" --csv "$speed/speed.csv" >"$speed/runs.log" 2>&1 ||
    { cat "$speed/runs.log" >&2; echo "main: the speed runs failed" >&2; exit 1; }
# the median over the rounds of each configuration's time (slowest rank, median of its calls)
{
    echo "MPI_Allreduce of 64 MiB, 4 nodes x 1 rank, 1 Gbit/s links, Open MPI ring underneath both"
    scripts/bench/speed_table.sh "$speed/speed.csv" 67108864 "$load" "mpi:ring=plain_MPI_(FP32)" \
        "e4m3:rsag:ring=apsmpi_e4m3_(8_bits)" "mxfp4:rsag:ring=apsmpi_mxfp4_(4.25_bits)"
} | tee "$speed/README.md"
