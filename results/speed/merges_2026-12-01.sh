#!/bin/bash
# paired speed: main before the merges (dab16c9, /tmp/auto-lib3) against now (/tmp/auto-lib4 = 5e6656c), interleaved rounds
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -f /tmp/pair_before.csv /tmp/pair_after.csv
for r in 1 2 3; do
  for side in before after; do
    lib=/tmp/auto-lib3/libapsmpi.so; [ $side = after ] && lib=/tmp/auto-lib4/libapsmpi.so
    echo "round $r $side $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
    scripts/bench/bench_nodes.sh --lib $lib --layouts "4x1 2x2" --rate 1gbit --min 64M --max 64M --rounds 1 --first-round $r \
      --configs "e4m3:rsag:ring mxfp4:rsag:ring" --csv /tmp/pair_$side.csv > /tmp/pair_$side.$r.log 2>&1 || echo "rc $?"
  done
done
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
