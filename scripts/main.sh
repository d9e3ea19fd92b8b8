#!/bin/bash
# main.sh: sets up a fresh Debian machine, builds apsmpi, and runs the main job: a short training comparison, library off and on.
# The training program (apps/apsmpi_train) trains the MLP on Fashion-MNIST at 4 and 8 ranks,
# once without the library (FP32) and once per format (fp16, bf16, e5m2, e4m3, e3m2) with
# APS and with scaling none, and prints the table (test accuracy, difference from FP32,
# bytes sent, divergence). The full study (5 epochs on all data, two models, five seeds):
# scripts/train_study.sh; the results: results/training/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/apt.sh
# the plot is a convenience: without gnuplot the table is still made, and the job still passes
if ! command -v gnuplot >/dev/null; then
    echo "main: installing gnuplot-nox (for the accuracy plot)"
    apt_install gnuplot-nox || echo "main: gnuplot-nox could not be installed; the table comes without a plot" >&2
fi
scripts/train_compare.sh --quick --model mlp --out "${APSMPI_MAIN_OUT:-results/main}"
