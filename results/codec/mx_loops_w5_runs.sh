#!/bin/bash
# mx_loops_w5_runs.sh: an A/B of two apps/bench_codec binaries as CSV (binary, round, then apps/bench_codec --csv's columns, encode and sum rows, exit status): /tmp/bench_before against /tmp/bench_after, both built as README.md builds them, 5 rounds interleaved per level, --reps 21. For results/codec/mx_loops_w5.md, before is cddff34 and after the commit that .md names; mx_loops_w8_avx2_runs.sh runs it for its own pair.
F=mxfp4,mxfp5,mxfp6,mxfp6e2m3,mxfp8,mxfp8e5m2,e4m3
echo "binary,round,level,format,op,elements,ms,gelem_per_s,ratio_to_memcpy,status"
for r in 1 2 3 4 5; do
  for L in avx2 avx512; do
    for v in before after; do
      out=$(/tmp/bench_$v --csv --level $L --reps 21 --formats $F); rc=$?
      echo "$out" | grep -E ',(encode|sum),' | sed "s/^/$v,$r,/; s/\$/,$rc/"
    done
  done
done
