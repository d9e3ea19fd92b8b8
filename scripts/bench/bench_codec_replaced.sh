#!/bin/bash
# bench_codec_replaced.sh: the codec as it is against the codec it replaced (fb76bbc, before the instruction-set levels), both with and without AVX2, interleaved on one core.
# usage: scripts/bench/bench_codec_replaced.sh NEW_BENCH [ROUNDS] [CORE] [ELEMENTS]
#
# The codec before a567afe had one set of loops built twice by gcc's target_clones: an AVX2
# clone and a "default" clone (SSE2 on x86-64), chosen at run time. This script builds that
# codec from the repository's history (git archive of fb76bbc) twice: as it shipped ("old,
# clones": the AVX2 clone on a CPU with AVX2) and with the clones removed ("old, default":
# what a CPU without AVX2 ran). It times both beside NEW_BENCH (apps/bench_codec of this tree)
# at its portable level (scalar: what a CPU without AVX2 runs now) and, where the CPU has it,
# its avx2 level; every variant once per round, rounds interleaved, one core, and prints the
# median over rounds of G elements/s and of the ratio to memcpy measured in the same run.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 3p "$0" >&2; exit 2; }
new=$(realpath "$1") rounds=${2:-5} core=${3:-1} elements=${4:-4194304}
root=$(cd "$(dirname "$0")/../.." && pwd)
old_commit=fb76bbc
formats="fp16 bf16 e5m2 e4m3 e3m2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the old codec: its own bench_codec.c and the core sources it needs
git -C "$root" archive "$old_commit" src/core apps/bench_codec.c | tar -x -C "$work"
build_old() { # build_old NAME: compile the old tree in $work into $work/NAME
    gcc -O3 -pthread -I"$work/src" -o "$work/$1" "$work/apps/bench_codec.c" "$work/src/core/codec.c" \
        "$work/src/core/format.c" "$work/src/core/log.c" -lm
}
build_old old_clones
grep -q '^#define HOT __attribute__((target_clones("avx2", "default")))' "$work/src/core/codec.c" ||
    { echo "bench_codec_replaced.sh: $old_commit's codec.c has no target_clones line" >&2; exit 1; }
sed -i 's/^#define HOT __attribute__((target_clones("avx2", "default")))/#define HOT/' "$work/src/core/codec.c"
build_old old_default

variants="old_default new_scalar"
if grep -qw avx2 /proc/cpuinfo; then variants="$variants old_clones new_avx2"; fi

echo "# $(date -u '+%F %T UTC'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
    "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# old: $old_commit's codec (default = its SSE2 clone alone, clones = as shipped); new: $new;" \
    "$rounds interleaved rounds; taskset -c $core; $elements elements"
# each run's rows as: variant format op gelem_per_s ratio_to_memcpy
for r in $(seq "$rounds"); do
    for v in $variants; do
        case $v in
        old_*)
            taskset -c "$core" "$work/$v" "$elements" >"$work/raw"
            awk -v v="$v" '$2 == "memcpy" { m = $5 } $1 != "format" && $2 != "memcpy" { print v, $1, $2, $5, $5 / m }' \
                "$work/raw" ;;
        new_*)
            taskset -c "$core" "$new" --level "${v#new_}" --reps 9 --formats "${formats// /,}" "$elements" >"$work/raw"
            awk -v v="$v" '$1 != "level" && $3 != "memcpy" { print v, $2, $3, $6, $7 }' "$work/raw" ;;
        esac
    done
done >"$work/rows"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# the median round by G elements/s: G elements/s (its ratio to memcpy in the same run)"
printf '%-6s %-7s' format op
for v in $variants; do printf ' %-18s' "$v"; done
echo
for f in $formats; do
    for op in encode decode sum; do
        printf '%-6s %-7s' "$f" "$op"
        for v in $variants; do
            printf ' %-18s' "$(awk -v v="$v" -v f="$f" -v op="$op" '$1 == v && $2 == f && $3 == op { print $4, $5 }' \
                "$work/rows" | sort -n | awk '{ a[NR] = $0 } END { split(a[int((NR + 1) / 2)], m, " ");
                    printf "%.3f (%.2f)", m[1], m[2] }')"
        done
        echo
    done
done
