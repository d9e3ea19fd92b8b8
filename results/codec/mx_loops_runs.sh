#!/bin/bash
# mx_loops_runs.sh: results/codec/mx_loops.md's runs; /tmp/bench_main is main's apps/bench_codec (184e355), /tmp/bench_final this branch's (1614423), both built as README.md says.
# the committed table's runs: main's bench_codec (before) and this branch's (after), 3 interleaved rounds per level, --reps 21
F=mxfp4,mxfp5,mxfp6,mxfp8,e4m3
for r in 1 2 3; do
  for L in avx2 avx512; do
    for v in before after; do
      b=/tmp/bench_main; [ $v = after ] && b=/tmp/bench_final
      $b --level $L --reps 21 --formats $F | sed "s/^/$v $r: /"
    done
  done
done
for r in 1 2 3; do
  for L in scalar avx2 avx512; do
    /tmp/bench_final --level $L --reps 21 --measured --formats mxfp4,mxfp5,mxfp6,mxfp8 | grep encode | grep -v encode-sr | sed "s/^/measured $r: /"
  done
done
