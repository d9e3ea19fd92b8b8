#!/bin/bash
# mx_loops_zen4_runs.sh: results/codec/mx_loops_zen4.md's runs, as CSV (the tree's commit and the round, then apps/bench_codec --csv's columns, encode and sum rows, the run's exit status): 11 rounds, each at 4 Mi floats (the bench's default, half the 32 MiB L3 of this machine for in and out) and at 32 Mi (past it), the levels alternating, --reps 21. HEADER=0 leaves out the header line (a second commit's runs appended). The core's issue rate (scripts/bench/issue_rate.c) and the load go to stderr before and after.
F=mxfp4,mxfp5,mxfp6,mxfp6e2m3,mxfp8,mxfp8e5m2,e4m3
probe() { uptime >&2; /tmp/issue_rate >&2; }
gcc -O2 -mavx512f scripts/bench/issue_rate.c -o /tmp/issue_rate && probe
commit=$(git rev-parse --short=7 HEAD)
[ "${HEADER:-1}" = 0 ] || echo "commit,round,level,format,op,elements,ms,gelem_per_s,ratio_to_memcpy,status"
for r in $(seq 1 11); do
  for n in 4194304 33554432; do
    for L in avx2 avx512; do
      out=$(apps/bench_codec --csv --level $L --reps 21 --formats $F $n); rc=$?
      echo "$out" | grep -E ',(encode|sum),' | sed "s/^/$commit,$r,/; s/\$/,$rc/"
    done
  done
done
probe
