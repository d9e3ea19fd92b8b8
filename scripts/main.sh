#!/bin/bash
# main.sh: sets up a fresh Debian machine, builds apsmpi, and runs the main job: short training comparisons, library off and on.
# The training program (apps/apsmpi_train) trains the MLP on Fashion-MNIST at 4 and 8 ranks,
# once without the library (FP32) and once per format (fp16, bf16, e5m2, e4m3, e3m2) with
# APS and with scaling none, and prints the table (test accuracy, difference from FP32,
# bytes sent, divergence); then its character-level transformer at 4 ranks, 150 steps, FP32
# and e4m3, e3m2, e2m1 with APS in one fused bucket, and prints that table (validation loss,
# difference from FP32, values flushed). The full studies (scripts/study/train_study.sh,
# scripts/study/train_gpt_study.sh): results/training/README.md.
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
scripts/study/train_compare.sh --quick --model mlp --out "$out"
echo
scripts/study/train_gpt_study.sh --quick --out "$out/transformer"
cat "$out/transformer/README.md"
