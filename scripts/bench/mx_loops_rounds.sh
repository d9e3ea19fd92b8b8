#!/bin/bash
# mx_loops_rounds.sh: apps/bench_codec's MX loops over ROUNDS rounds as CSV, for a study of how fast they run on one machine (results/codec/mx_loops_*_runs.csv).
# usage: scripts/bench/mx_loops_rounds.sh ROUNDS N [N...]
#
# Each round runs every size N (floats) at the avx2 and the avx512 level in turn, --reps 21, the
# formats below; a row is the tree's commit and the round, then apps/bench_codec --csv's columns
# (encode and sum rows only), then the run's exit status. HEADER=0 leaves out the header line (a
# second commit's or size's runs appended to the same file). The core's issue rate
# (scripts/bench/issue_rate.c) and the load go to stderr before and after.
set -u
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: $0 ROUNDS N [N...]" >&2; exit 2; }
rounds=$1
shift
F=mxfp4,mxfp5,mxfp6,mxfp6e2m3,mxfp8,mxfp8e5m2,e4m3
probe() { uptime >&2; /tmp/issue_rate >&2; }
gcc -O2 -mavx512f scripts/bench/issue_rate.c -o /tmp/issue_rate && probe
commit=$(git rev-parse --short=7 HEAD)
[ "${HEADER:-1}" = 0 ] || echo "commit,round,level,format,op,elements,ms,gelem_per_s,ratio_to_memcpy,status"
for r in $(seq 1 "$rounds"); do
  for n in "$@"; do
    for L in avx2 avx512; do
      out=$(apps/bench_codec --csv --level $L --reps 21 --formats $F "$n"); rc=$?
      echo "$out" | grep -E ',(encode|sum),' | sed "s/^/$commit,$r,/; s/\$/,$rc/"
    done
  done
done
probe
