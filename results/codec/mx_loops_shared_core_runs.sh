#!/bin/bash
# mx_loops_shared_core_runs.sh: results/codec/mx_loops_shared_core.md's runs, as CSV (round, stat, then apps/bench_codec --csv's columns, encode and sum rows, the run's exit status); apps/bench_codec as README.md builds it, 5 rounds alternating the levels, --reps 21, each run once with the median and once with --fastest. The core's issue rate (scripts/bench/issue_rate.c) goes to stderr before and after.
F=mxfp4,mxfp5,mxfp6,mxfp6e2m3,mxfp8,mxfp8e5m2,e4m3
gcc -O2 -mavx512f scripts/bench/issue_rate.c -o /tmp/issue_rate && /tmp/issue_rate >&2
echo "round,stat,level,format,op,elements,ms,gelem_per_s,ratio_to_memcpy,status"
for r in 1 2 3 4 5; do
  for L in avx2 avx512; do
    for stat in median fastest; do
      out=$(apps/bench_codec --csv --level $L --reps 21 $([ $stat = fastest ] && echo --fastest) --formats $F); rc=$?
      echo "$out" | grep -E ',(encode|sum),' | sed "s/^/$r,$stat,/; s/\$/,$rc/"
    done
  done
done
/tmp/issue_rate >&2
