#!/bin/bash
# results/codec_xeon/rounds.sh: apps/bench_codec of main at 113ce4c on the lent H200 machine's Xeon, 5 interleaved rounds on core 2 (results/codec_xeon/README.md)
D=$(dirname "$0")
{ uptime; lscpu | grep -E "Model name|Flags" | cut -c1-200; } > $OUT/codec_env.txt
for r in 1 2 3 4 5; do
  for lv in avx512 avx2; do
    taskset -c 2 $D/bench_codec --csv --level $lv --formats e4m3,e5m2,e3m2,fp16 | sed "s/^/$r,/" >> $OUT/codec.csv
  done
  taskset -c 2 $D/bench_codec --csv --level scalar --formats e4m3 | sed "s/^/$r,/" >> $OUT/codec.csv
done
uptime >> $OUT/codec_env.txt
