#!/bin/bash
# mx_loops_w8_avx2_runs.sh: results/codec/mx_loops_w8_avx2.md's runs: the same A/B as mx_loops_w5_runs.sh (its CSV, 5 rounds interleaved per level, --reps 21), with /tmp/bench_before apps/bench_codec built at c5dfb01 and /tmp/bench_after at e8740ed.
exec "$(dirname "$0")/mx_loops_w5_runs.sh"
