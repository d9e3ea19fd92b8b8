#!/bin/bash
# overlap_bench.sh: MPI_Iallreduce issued before computation and waited for after it, against the two in sequence, plain Open MPI and apsmpi, on 4 fake nodes behind 1 Gbit/s links (scripts/netns_mpirun.sh), in alternating rounds, into one CSV (results/overlap.md).
#   scripts/bench/overlap_bench.sh [--rounds R] [--reps N] [--mib M] [--compute-ms MS] [--format F] [--csv FILE]
# Run it alone on the machine (the timings are the result): under `quiet` on the shared VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=3 reps=5 mib=16 compute=300 format=e4m3 csv=results/overlap.csv
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2 ;;
    --reps) reps=$2 ;;
    --mib) mib=$2 ;;
    --compute-ms) compute=$2 ;;
    --format) format=$2 ;;
    --csv) csv=$2 ;;
    *) echo "overlap_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
case $csv in /*) ;; *) csv="$PWD/$csv" ;; esac
[ -x apps/overlap_bench ] || { echo "overlap_bench.sh: build first (make)" >&2; exit 2; }
lib="$PWD/.libs/libapsmpi.so"
[ -f "$csv" ] || echo "label,mode,mib,compute_ms,rep,seconds" >"$csv"
for round in $(seq 1 "$rounds"); do
    for cfg in plain "$format"; do
        extra=()
        [ "$cfg" = plain ] || extra=(-x "LD_PRELOAD=$lib" -x "APSMPI_FORMAT=$cfg" -x APSMPI_STATS=1)
        scripts/netns_mpirun.sh --np 4 --rate 1gbit --timeout 300 -- --bind-to none "${extra[@]}" -- \
            "$PWD/apps/overlap_bench" --mib "$mib" --compute-ms "$compute" --reps "$reps" --label "$cfg-r$round" --csv "$csv"
    done
done
