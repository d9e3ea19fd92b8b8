#!/bin/bash
# bench_codec_pair.sh: two builds of apps/bench_codec against each other at one level, runs interleaved, one core; prints each run and the median ratio to memcpy per format and operation.
# usage: scripts/bench/bench_codec_pair.sh OLD_BENCH NEW_BENCH LEVEL FORMATS [ROUNDS] [CORE] [ELEMENTS]
set -euo pipefail
[ $# -ge 4 ] || { sed -n 3p "$0" >&2; exit 2; }
old=$1 new=$2 level=$3 formats=$4 rounds=${5:-5} core=${6:-1} elements=${7:-4194304}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u '+%F %T UTC'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# old: $old; new: $new; level $level; $elements elements; $rounds interleaved rounds; taskset -c $core; --reps 9"
for r in $(seq "$rounds"); do
    for v in old new; do
        bin=$old
        [ $v = new ] && bin=$new
        taskset -c "$core" "$bin" --level "$level" --reps 9 --formats "$formats" "$elements" >"$out/$v.$r"
        sed "s/^/$v $r: /" "$out/$v.$r"
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# median over rounds: ratio to memcpy (G elements/s)"
for op in encode decode sum; do
    for f in ${formats//,/ }; do
        line="$f $op:"
        for v in old new; do
            vals=$(cat "$out"/$v.* | awk -v f="$f" -v op="$op" '$2 == f && $3 == op {print $7, $6}' | sort -n)
            n=$(wc -l <<<"$vals")
            med=$(sed -n "$(((n + 1) / 2))p" <<<"$vals")
            line="$line $v ${med% *} (${med#* })"
        done
        echo "$line"
    done
done
