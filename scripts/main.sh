#!/bin/bash
# main.sh: sets up a fresh Debian machine, builds apsmpi, and runs the main job: the same MPI
# benchmark with the library off and on, 4 ranks on 1 Gbit/s links (network namespaces + tc).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out=${APSMPI_MAIN_OUT:-results/main-quick.csv}
scripts/bench_matrix.sh --quick --np 4 --rates 1gbit --formats "fp16 e4m3 e3m2" --zero-bits "16 8" \
    --lib .libs/libapsmpi.so --bench apps/apsmpi_bench --out "$out"
/usr/bin/python3 scripts/perf_model.py --csv "$out" --summary
