#!/bin/bash
# mx_sum_fp16_runs.sh: results/codec/mx_sum_fp16.md's runs; /tmp/bench_before is main's apps/bench_codec (f3d3d10), /tmp/bench_after branch mxfast's, both built as README.md says; 5 rounds interleaved per level, --reps 21.
F=mxfp4,mxfp5,mxfp6,mxfp6e2m3,mxfp8,mxfp8e5m2,e4m3
for r in 1 2 3 4 5; do
  for L in avx2 avx512; do
    for v in before after; do
      /tmp/bench_$v --level $L --reps 21 --formats $F | sed "s/^/$v $r: /"
    done
  done
done
