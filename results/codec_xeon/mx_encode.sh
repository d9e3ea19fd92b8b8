#!/bin/bash
# results/codec_xeon/mx_encode.sh (run on the lent GPU machine as .devpack2/bench.sh, with .devpack2 = bench_old, bench_new (apps/bench_codec before and after), tests/unit/test_mx and libcmocka.so.0 carried): test_mx at every level of that CPU, then the codec of both binaries, interleaved
set -u
D=$PWD/.devpack2; export LD_LIBRARY_PATH=$D
{ date; lscpu | grep -E "Model name|MHz"; grep -o "avx512[a-z_]*" /proc/cpuinfo | sort -u | tr '\n' ' '; echo; uptime; } > $OUT/machine.txt
timeout 120 $D/test_mx > $OUT/test_mx.txt 2>&1; echo "test_mx rc=$?"; grep -E "PASSED|FAILED|avx512" $OUT/test_mx.txt | head -5
F=e4m3,mxfp8,mxfp8e5m2,mxfp6,mxfp6e2m3,mxfp4
for r in 1 2 3 4 5 6 7; do for v in old new; do
  timeout 60 taskset -c 2 $D/bench_$v --level avx512 --reps 9 --formats $F > $OUT/avx512_${v}_$r.txt 2>&1
done; done
for r in 1 2 3; do for v in old new; do
  timeout 60 taskset -c 2 $D/bench_$v --level avx2 --reps 9 --formats $F > $OUT/avx2_${v}_$r.txt 2>&1
done; done
uptime >> $OUT/machine.txt
grep encode $OUT/avx512_*_1.txt
