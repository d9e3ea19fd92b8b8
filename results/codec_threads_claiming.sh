#!/bin/bash
# codec_threads_claiming.sh: the runs of results/codec_threads.md, "Parts claimed by the first thread free": main's thread pool against codec_threads_claiming.patch, on fake nodes unpinned and in apps/bench_codec beside a busy loop.
# Run from the repository root of a built tree at main; builds the patched library and benchmark beside it in /tmp.
set -eu
root=$PWD
mkdir -p /tmp/pool_before /tmp/pool_after
cp -L .libs/libapsmpi.so /tmp/pool_before/ && cp apps/bench_codec /tmp/bench_codec_old
git apply results/codec_threads_claiming.patch
trap 'git apply -R results/codec_threads_claiming.patch; make -j2 >/dev/null' EXIT
make -j2 >/dev/null && cp -L .libs/libapsmpi.so /tmp/pool_after/ && cp apps/bench_codec /tmp/bench_codec_new

# 1. 4 fake nodes of 1 rank at 1 Gbit/s, every node on both CPUs (auto: 2 threads per rank, 8 on 2 cores),
#    one round per call, each started when the 1-minute load is below 1
for r in $(seq 1 16); do
    for i in $(seq 60); do awk '{exit !($1 < 1.0)}' /proc/loadavg && break; sleep 2; done
    echo "round $r load-before $(cut -d' ' -f1-3 /proc/loadavg)"
    cfgs="zero8:ring defaults:before:ring defaults:after:ring"
    [ "$r" -le 7 ] && cfgs="$cfgs e4m3:rsag:ring:APSMPI_CODEC_THREADS=1"
    scripts/bench/bench_nodes.sh --rounds 1 --first-round "$r" --csv results/codec_threads_claiming_nodes.csv \
        --min 64M --max 64M --layouts 4x1 --rate 1gbit --node-cpus all \
        --alg-lib before=/tmp/pool_before/libapsmpi.so --alg-lib after=/tmp/pool_after/libapsmpi.so \
        --configs "$cfgs" >/dev/null 2>&1
done

# 2. e4m3 encode and decode (avx2, 4 Mi elements, median of 21) on 1 and 2 threads, with 0 and 1 busy loops beside
out=results/codec_threads_claiming_codec.csv
echo "hogs,bin,threads,level,format,op,elements,ms,gelem_per_s,ratio" >"$out"
for r in $(seq 15); do
    for hogs in 0 1; do
        pids=()
        for ((h = 0; h < hogs; h++)); do (while :; do :; done) & pids+=($!); done
        for bin in old new; do for t in 1 2; do
            /tmp/bench_codec_$bin --csv --reps 21 --threads $t --level avx2 --formats e4m3 |
                grep -E "encode,|decode," | sed "s/^/$hogs,$bin,$t,/" >>"$out"
        done; done
        for p in "${pids[@]+"${pids[@]}"}"; do kill "$p"; done
        wait 2>/dev/null || true
    done
done
