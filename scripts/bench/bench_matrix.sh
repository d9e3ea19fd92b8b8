#!/bin/bash
# bench_matrix.sh: runs the apsmpi benchmark matrix (ranks x link rates x plain MPI / formats / zero-cost bounds) through netns_mpirun.sh into one CSV.
#
# Usage: scripts/bench/bench_matrix.sh [OPTIONS]
#
# For every np, rate and op it runs, each through scripts/netns_mpirun.sh (one
# rank per network namespace, every link shaped to the rate):
#   1. plain FP32 MPI (library not preloaded), results checked to --tol 1e-5
#   2. for each format: the same benchmark with
#        -x LD_PRELOAD=$LIB -x APSMPI_FORMAT=<fmt>
#      checked to a per-format tolerance (1.5 * 2^-mantissa_bits: fp16 1.5e-3,
#      bf16 1.2e-2, e4m3 0.19, e5m2 and e3m2 0.375; see --tol), and required to
#      have the library really mapped (ld.so only warns about a bad LD_PRELOAD)
#   3. the zero-cost bound for each width W: plain MPI on count*W/32 floats
# all with the bandwidth-optimal algorithm forced for baseline and library
# alike (--alg ring): allreduce ring (coll_tuned_allreduce_algorithm 4),
# reduce_scatter ring (coll_tuned_reduce_scatter_algorithm 3); Open MPI 4.1 has
# no ring reduce_scatter_block, so it gets recursive halving
# (coll_tuned_reduce_scatter_block_algorithm 3), bandwidth-optimal for
# power-of-two np. --alg default leaves Open MPI's own choice.
#
# Every row of the CSV (op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label) has a
# label "rate=<rate>;cfg=<fp32|fmt|zeroW>;alg=<ring|default>" (plus
# ";env=VAR=VAL..." with --env, ";fail=1" when that run failed). Full output of
# every run (headers name the APSMPI_* environment) goes to the log.
#
# Options:
#   --lib PATH        library to preload (default $APSMPI_LIB, else ./.libs/libapsmpi.so)
#   --no-lib          no library runs: baseline and zero-cost rows only
#   --bench PATH      benchmark binary (default ./apps/apsmpi_bench)
#   --build           compile apps/apsmpi_bench.c with mpicc into a temp dir and use that
#   --out FILE        CSV (default results/bench.csv; replaced unless --append)
#   --log FILE        log (default: the CSV name with .log)
#   --append          append to the CSV instead of replacing it
#   --quick           sizes 4 KiB..16 MiB by x16, short timing, allreduce only
#   --np "LIST"       rank counts (default "2 4")
#   --rates "LIST"    link rates (default "1gbit 10gbit")
#   --formats "LIST"  (default "fp16 bf16 e5m2 e4m3 e3m2"; "" for none)
#   --zero-bits "LIST" zero-cost widths (default "16 8 6"; "" for none)
#   --ops "LIST"      (default "allreduce reduce_scatter_block"; --quick: "allreduce")
#   --alg "LIST"      ring and/or default (default "ring")
#   --min B / --max B size range in bytes (default 4096 / 268435456)
#   --step F          size factor (default 4)
#   --time-per-size S timing budget per size (default 3; --quick 0.5)
#   --env VAR=VAL     extra environment for library runs (repeatable)
#   --tol FMT=X       tolerance for one format (repeatable; fp32 = baseline)
#   --harness "OPTS"  extra netns_mpirun.sh options (e.g. "--delay 50us")
#   --max-time S      start no run after S seconds (default 10800; --quick 1800)
#   --run-timeout S   bound of a single run (default 1200; --quick 300)
#   -h, --help
# Exit status: 0 all runs passed, 1 some run failed, 2 usage or missing files.
set -euo pipefail

prog=bench_matrix.sh
die() {
    echo "$prog: $*" >&2
    exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
harness="$here/../netns_mpirun.sh"

lib=${APSMPI_LIB:-./.libs/libapsmpi.so}
no_lib=0
bench=./apps/apsmpi_bench
build=0
out=results/bench.csv
logf=
append=0
quick=0
nps="2 4"
rates="1gbit 10gbit"
formats="fp16 bf16 e5m2 e4m3 e3m2"
zero_bits="16 8 6"
ops=
algs="ring"
min_b=4096
max_b=268435456
step=4
tps=
max_time=
run_timeout=
harness_opts=
envs=()
tol_over=()

while [ $# -gt 0 ]; do
    case "$1" in
        --lib) lib=${2:?}; shift 2 ;;
        --no-lib) no_lib=1; shift ;;
        --bench) bench=${2:?}; shift 2 ;;
        --build) build=1; shift ;;
        --out) out=${2:?}; shift 2 ;;
        --log) logf=${2:?}; shift 2 ;;
        --append) append=1; shift ;;
        --quick) quick=1; shift ;;
        --np) nps=${2?}; shift 2 ;;
        --rates) rates=${2?}; shift 2 ;;
        --formats) formats=${2?}; shift 2 ;;
        --zero-bits) zero_bits=${2?}; shift 2 ;;
        --ops) ops=${2?}; shift 2 ;;
        --alg) algs=${2?}; shift 2 ;;
        --min) min_b=${2:?}; shift 2 ;;
        --max) max_b=${2:?}; shift 2 ;;
        --step) step=${2:?}; shift 2 ;;
        --time-per-size) tps=${2:?}; shift 2 ;;
        --env) envs+=("${2:?}"); shift 2 ;;
        --tol) tol_over+=("${2:?}"); shift 2 ;;
        --harness) harness_opts=${2?}; shift 2 ;;
        --max-time) max_time=${2:?}; shift 2 ;;
        --run-timeout) run_timeout=${2:?}; shift 2 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done

iters=20
min_iters=3
if [ "$quick" = 1 ]; then
    min_b=4096 max_b=16777216 step=16 iters=5 min_iters=2
    : "${ops:=allreduce}" "${tps:=0.5}" "${max_time:=1800}" "${run_timeout:=300}"
fi
: "${ops:=allreduce reduce_scatter_block}" "${tps:=3}" "${max_time:=10800}" "${run_timeout:=1200}"

for v in "$max_time" "$run_timeout" "$min_b" "$max_b" "$step"; do
    [[ "$v" =~ ^[0-9]+$ ]] || die "expected a whole number, got '$v'"
done
for o in $ops; do
    case "$o" in allreduce | reduce_scatter_block | reduce_scatter) ;; *) die "unknown op '$o'" ;; esac
done
for a in $algs; do
    case "$a" in ring | default) ;; *) die "unknown --alg '$a' (ring, default)" ;; esac
done
for e in "${envs[@]+"${envs[@]}"}"; do
    [[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*=.*$ ]] || die "--env wants VAR=VALUE, got '$e'"
done
[ -x "$harness" ] || die "harness $harness missing"
[ "$(id -u)" = 0 ] || die "must run as root (the harness creates network namespaces)"
[ "$no_lib" = 1 ] && formats=""

# mantissa bits of a format name -> default tolerance 1.5 * 2^-m
default_tol() {
    local f=$1 m
    case "$f" in
        fp32) echo 1e-5; return ;;
        fp16) m=10 ;;
        bf16) m=7 ;;
        e4m3 | e4m3ieee) m=3 ;;
        e[2-8]m[0-9] | e[2-8]m[12][0-9]) m=${f#e?m} ;;
        *) die "cannot derive a tolerance for format '$f'; pass --tol $f=X" ;;
    esac
    awk -v m="$m" 'BEGIN { printf "%.3g\n", 1.5 * 2 ^ -m }'
}
tol_for() {
    local f=$1 t
    for t in "${tol_over[@]+"${tol_over[@]}"}"; do
        if [ "${t%%=*}" = "$f" ]; then echo "${t#*=}"; return; fi
    done
    default_tol "$f"
}
for f in fp32 $formats; do tol_for "$f" >/dev/null; done

tmp=$(mktemp -d /tmp/bench_matrix.XXXXXX)
k=0
total=0
# fd 3 = the script's own stderr: a trap may run while a run's output is
# redirected into its log
exec 3>&2
interrupted() {
    echo >&3
    echo "$prog: interrupted by SIG$1 during run $k of $total; rows so far are in $out" >&3
    exit "$2"
}
trap 'rm -rf "$tmp"' EXIT
trap 'interrupted INT 130' INT
trap 'interrupted TERM 143' TERM
trap 'interrupted HUP 129' HUP

if [ "$build" = 1 ]; then
    src="$here/../../apps/apsmpi_bench.c"
    [ -f "$src" ] || die "$src not found"
    mpicc -O3 -Wall -Wextra -I"$here/../../src" "$src" -o "$tmp/apsmpi_bench" -lm -ldl || die "building $src failed"
    bench="$tmp/apsmpi_bench"
fi
[ -x "$bench" ] || die "benchmark $bench not found or not executable (build it, pass --bench, or use --build)"
bench=$(realpath "$bench")

if [ -n "$formats" ]; then
    if [ ! -f "$lib" ] || [ ! -r "$lib" ]; then
        die "library '$lib' not found (build it, pass --lib PATH or set APSMPI_LIB, or use --no-lib for the baseline and zero-cost rows only)"
    fi
    lib=$(realpath "$lib")
fi

[ -n "$logf" ] || logf="${out%.csv}.log"
mkdir -p "$(dirname "$out")" "$(dirname "$logf")"
if [ "$append" = 0 ] || [ ! -s "$out" ]; then
    echo "op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label" >"$out"
fi
: >"$logf"

alg_mca() {
    if [ "$1" = ring ]; then
        printf '%s\n' --mca coll_tuned_use_dynamic_rules 1 \
            --mca coll_tuned_allreduce_algorithm 4 \
            --mca coll_tuned_reduce_scatter_block_algorithm 3 \
            --mca coll_tuned_reduce_scatter_algorithm 3
    fi
}

# the list of runs: np rate op alg cfg
runs=()
for np in $nps; do
    for rate in $rates; do
        for op in $ops; do
            for alg in $algs; do
                runs+=("$np $rate $op $alg fp32")
                for f in $formats; do runs+=("$np $rate $op $alg $f"); done
                for w in $zero_bits; do runs+=("$np $rate $op $alg zero$w"); done
            done
        done
    done
done
total=${#runs[@]}
[ "$total" -gt 0 ] || die "nothing to run"

env_label=
for e in "${envs[@]+"${envs[@]}"}"; do env_label+=";env=$e"; done
echo "$prog: $total runs -> $out (log $logf); sizes $min_b..$max_b x$step; bound ${max_time} s" \
    "${formats:+; library $lib}"
start=$SECONDS
failed=0
skipped=0
for spec in "${runs[@]}"; do
    k=$((k + 1))
    read -r np rate op alg cfg <<<"$spec"
    elapsed=$((SECONDS - start))
    left=$((max_time - elapsed))
    if [ "$left" -le 0 ]; then
        skipped=$((skipped + 1))
        continue
    fi
    tmo=$run_timeout
    [ "$left" -lt "$tmo" ] && tmo=$left

    label="rate=$rate;cfg=$cfg;alg=$alg"
    mpiopts=()
    mapfile -t mpiopts < <(alg_mca "$alg")
    bargs=(--op "$op" --min "$min_b" --max "$max_b" --step "$step" --iters "$iters"
        --min-iters "$min_iters" --time-per-size "$tps" --csv "$tmp/run.csv")
    case "$cfg" in
        fp32)
            bargs+=(--tol "$(tol_for fp32)")
            ;;
        zero*)
            bargs+=(--zero-cost-bits "${cfg#zero}")
            ;;
        *)
            label+="$env_label"
            mpiopts+=(-x "LD_PRELOAD=$lib" -x "APSMPI_FORMAT=$cfg")
            for e in "${envs[@]+"${envs[@]}"}"; do mpiopts+=(-x "$e"); done
            bargs+=(--tol "$(tol_for "$cfg")" --require-preload "$(basename "$lib")")
            ;;
    esac
    bargs+=(--label "$label")
    rm -f "$tmp/run.csv"
    printf '[%3d/%d] np=%s rate=%-7s op=%-20s alg=%-7s cfg=%-6s ' "$k" "$total" "$np" "$rate" "$op" "$alg" "$cfg"
    t0=$SECONDS
    rc=0
    # shellcheck disable=SC2086  # harness_opts is a word list on purpose
    {
        echo "=== [$k/$total] np=$np rate=$rate op=$op alg=$alg cfg=$cfg $(date -Is)"
        "$harness" --np "$np" --rate "$rate" --timeout "$tmo" $harness_opts -- \
            "${mpiopts[@]+"${mpiopts[@]}"}" -- "$bench" "${bargs[@]}"
    } >"$tmp/run.log" 2>&1 </dev/null || rc=$?
    cat "$tmp/run.log" >>"$logf" 2>/dev/null || true
    dt=$((SECONDS - t0))
    if [ -s "$tmp/run.csv" ]; then
        if [ "$rc" = 0 ]; then
            tail -n +2 "$tmp/run.csv" >>"$out"
        else
            tail -n +2 "$tmp/run.csv" | sed 's/$/;fail=1/' >>"$out"
        fi
    elif [ "$rc" = 0 ]; then
        rc=99 # success without a single row: count it as a failure
        echo "    (no CSV rows written)" >>"$logf"
    fi
    if [ "$rc" = 0 ]; then
        big=$(tail -n 1 "$tmp/run.csv" | awk -F, '{ printf "%s B %.3f GB/s bus", $3, $6 }' || true)
        echo "ok ${dt}s ($big)"
    else
        failed=$((failed + 1))
        echo "FAILED rc=$rc ${dt}s"
        { grep -E "FAIL|ERROR|rror|timed out|not found|set-up failed" "$tmp/run.log" || true; } |
            head -n 5 | sed 's/^/      /'
    fi
done
elapsed=$((SECONDS - start))
printf '%s: %d runs, %d failed, %d skipped (time bound) in %d min %d s -> %s\n' "$prog" \
    "$((total - skipped))" "$failed" "$skipped" $((elapsed / 60)) $((elapsed % 60)) "$out"
[ "$failed" = 0 ] && [ "$skipped" = 0 ] || exit 1
