#!/bin/bash
# bench_nodes.sh: times MPI_Allreduce on fake nodes behind shaped links (scripts/netns_mpirun.sh), plain Open MPI against apsmpi's algorithms, in interleaved rounds, into one CSV.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/bench/bench_nodes.sh [options]
For each round, each layout NODESxRANKS and each configuration (in that order, so that every
configuration of a round ran under the same conditions), one run of
  flock /tmp/apsmpi-netns.lock scripts/netns_mpirun.sh --np NODES*RANKS --ranks-per-node RANKS \
      --rate RATE -- [MPI options] -- apps/apsmpi_bench --op allreduce --min MIN --max MAX ...
appending its rows (median of the iterations, slowest rank) to CSV with the label
"layout=NxK;cfg=CFG;round=R". Configurations:
  mpi:default        plain Open MPI, its own algorithm choice
  mpi:ring           plain Open MPI, ring (coll_tuned_allreduce_algorithm 4)
  zeroW:default|ring the zero-cost bound: the same plain call on count*W/32 floats
  FORMAT:ALG         LD_PRELOAD=LIB APSMPI_FORMAT=FORMAT APSMPI_ALGORITHM=ALG (ring = old,
                     rsag = new), Open MPI's own algorithm choice underneath
  FORMAT:ALG:ring    the same with Open MPI's ring forced (as in results/bench.csv)
  FORMAT:ALG:MPIALG:NAME=VALUE[:NAME=VALUE...]
                     the same with these APSMPI_* variables set too (MPIALG ring or default),
                     e.g. e4m3:rsag:ring:APSMPI_RSAG_WINDOW=3
  defaults:KEY       LD_PRELOAD of the library of --alg-lib KEY (else LIB), no APSMPI_* variable
  defaults:KEY:ring  the same with Open MPI's ring forced
--local runs every layout 1xK as plain "mpirun -np K --oversubscribe" on this machine (no
namespaces, no link shaping: one node), still under the lock.
Options:
  --lib PATH          (default .libs/libapsmpi.so)
  --alg-lib A=PATH    another library for APSMPI_ALGORITHM=A (repeatable)
  --bench PATH        (default apps/apsmpi_bench)
  --layouts "LIST"    NODESxRANKS (default "4x1 2x2")
  --configs "LIST"    (default "mpi:default mpi:ring zero8:default zero8:ring e4m3:ring e4m3:rsag")
  --rate RATE         (default 1gbit)
  --min B / --max B   sizes (default 16M / 64M, step x4)
  --rounds R          (default 3)
  --first-round K     number the rounds from K (default 1: a later call appending to the same
                      CSV continues the numbering)
  --iters N           timed iterations per size and run (default 5)
  --csv FILE          rows are appended (default results/nodes.csv)
  --run-timeout S     bound of one run (default 300)
  --local             one node, no namespaces (layouts 1xK only)
  --time-per-size S   timing budget per size and run (default 2)
  --step F            size factor (default 4)
  --node-cpus C       CPUs of each fake node (netns_mpirun.sh --node-cpus; default its own:
                      CPUs / nodes; "all": every node on every CPU, unpinned)
  --help
EOF
}

die() {
    echo "bench_nodes.sh: $*" >&2
    exit 2
}

root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/.libs/libapsmpi.so bench=$root/apps/apsmpi_bench
layouts="4x1 2x2" configs="mpi:default mpi:ring zero8:default zero8:ring e4m3:ring e4m3:rsag"
rate=1gbit min_b=16M max_b=64M rounds=3 iters=5 csv=$root/results/nodes.csv run_timeout=300 local=0 tps=2 step=4 first=1
alg_libs=() node_cpus=()
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --local) local=1; shift; continue ;;
    --lib | --alg-lib | --bench | --layouts | --configs | --rate | --min | --max | --rounds | --iters | --csv | \
        --run-timeout | --time-per-size | --step | --first-round | --node-cpus)
        [ $# -ge 2 ] || die "$1 needs a value"
        case $1 in
        --lib) lib=$(realpath -m -- "$2") ;;
        --alg-lib) alg_libs+=("${2%%=*}=$(realpath -m -- "${2#*=}")") ;;
        --bench) bench=$(realpath -m -- "$2") ;;
        --layouts) layouts=$2 ;;
        --configs) configs=$2 ;;
        --rate) rate=$2 ;;
        --min) min_b=$2 ;;
        --max) max_b=$2 ;;
        --rounds) rounds=$2 ;;
        --iters) iters=$2 ;;
        --csv) csv=$(realpath -m -- "$2") ;;
        --run-timeout) run_timeout=$2 ;;
        --time-per-size) tps=$2 ;;
        --step) step=$2 ;;
        --first-round) first=$2 ;;
        --node-cpus) node_cpus=(--node-cpus "$2") ;;
        esac
        shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done
for n in $rounds $iters $run_timeout $first; do
    [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number"
done
for l in $layouts; do
    [[ $l =~ ^[0-9]+x[0-9]+$ ]] || die "layout '$l' is not NODESxRANKS"
    [ $local = 0 ] || [[ $l =~ ^1x ]] || die "--local runs one node: layout '$l' is not 1xK"
done
[ -x "$bench" ] || die "no benchmark at $bench"
[ "$(id -u)" = 0 ] || die "must run as root (network namespaces)"

# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"
# tolerance of the result check: 1.5 * 2^-mantissa bits, as scripts/bench/bench_matrix.sh
tol_for() {
    case $1 in
    fp16) echo 1.5e-3 ;;
    bf16) echo 1.2e-2 ;;
    e4m3 | e4m3ieee) echo 0.19 ;;
    defaults) echo 0.19 ;; # the default format, e4m3, when it compresses
    # MX: an element's error is up to half a step or the saturation of its own block of 32
    # (tests/mpi/fuzz.c's error_bound: 0.5625 of N times the block maximum for mxfp4)
    mxfp4*) echo 0.6 ;;
    mxfp6* | mxfp8*) echo 0.3 ;;
    e[2-8]m[0-9]*) awk -v m="${1#e?m}" 'BEGIN { printf "%.3g\n", 1.5 * 2 ^ -m }' ;;
    *) die "no tolerance for format '$1'" ;;
    esac
}
ring_mca=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4)

clean_mpi_env
mkdir -p "$(dirname "$csv")"
tmp=$(mktemp -d /tmp/bench_nodes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

failures=0
echo "bench_nodes.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); layouts $layouts; rate $rate; $rounds rounds; -> $csv"
for round in $(seq "$first" $((first + rounds - 1))); do
    for layout in $layouts; do
        nodes=${layout%x*} ppn=${layout#*x}
        for cfg in $configs; do
            IFS=: read -r what alg mpialg settings <<<"$cfg"
            mpiopts=()
            if [ -n "${settings:-}" ]; then
                IFS=: read -ra pairs <<<"$settings"
                for kv in "${pairs[@]}"; do
                    [[ $kv =~ ^APSMPI_[A-Z0-9_]+=.+$ ]] || die "configuration '$cfg': '$kv' is not APSMPI_NAME=VALUE"
                    mpiopts+=(-x "$kv")
                done
            fi
            bargs=(--op allreduce --min "$min_b" --max "$max_b" --step "$step" --iters "$iters" --min-iters 3
                --time-per-size "$tps" --warmup 1)
            case $what in
            mpi)
                [ "$alg" = ring ] && mpiopts+=("${ring_mca[@]}")
                bargs+=(--tol 1e-5) ;;
            zero*)
                [ "$alg" = ring ] && mpiopts+=("${ring_mca[@]}")
                bargs+=(--zero-cost-bits "${what#zero}") ;;
            defaults)
                [ "${mpialg:-}" = ring ] && mpiopts+=("${ring_mca[@]}")
                mpiopts+=(-x "LD_PRELOAD=$(lib_for "$alg")")
                bargs+=(--tol "$(tol_for defaults)" --require-preload libapsmpi) ;;
            *)
                [ "${mpialg:-}" = ring ] && mpiopts+=("${ring_mca[@]}")
                mpiopts+=(-x "LD_PRELOAD=$(lib_for "$alg")" -x "APSMPI_FORMAT=$what" -x "APSMPI_ALGORITHM=$alg")
                bargs+=(--tol "$(tol_for "$what")" --require-preload libapsmpi) ;;
            esac
            label="layout=$layout;cfg=$cfg;round=$round;rate=$rate"
            rm -f "$tmp/run.csv"
            start=$SECONDS
            if [ $local = 1 ]; then
                label="layout=$layout;cfg=$cfg;round=$round;rate=local"
                run=(timeout -k 10 "$run_timeout" mpirun -np "$ppn" --oversubscribe --bind-to none
                    --mca mpi_yield_when_idle 1)
                sep=()
            else
                run=("$root/scripts/netns_mpirun.sh" --np $((nodes * ppn)) --ranks-per-node "$ppn" --rate "$rate"
                    "${node_cpus[@]+"${node_cpus[@]}"}" --timeout "$run_timeout" --)
                sep=(--) # between the MPI options and the program
            fi
            flock /tmp/apsmpi-netns.lock "${run[@]}" "${mpiopts[@]+"${mpiopts[@]}"}" \
                "${sep[@]+"${sep[@]}"}" "$bench" "${bargs[@]}" --label "$label" --csv "$tmp/run.csv" \
                >"$tmp/run.log" 2>&1 </dev/null
            rc=$?
            if [ -s "$tmp/run.csv" ]; then
                if [ $rc = 0 ]; then
                    tail -n +2 "$tmp/run.csv" >>"$csv.rows"
                else
                    tail -n +2 "$tmp/run.csv" | sed 's/$/;fail=1/' >>"$csv.rows"
                fi
            fi
            if [ $rc = 0 ]; then
                printf '[round %d] %-4s %-18s %3d s  %s\n' "$round" "$layout" "$cfg" $((SECONDS - start)) \
                    "$(awk -F, 'NR > 1 { big = ($3 >= 1048576); printf "%d %s %.3f ms  ", (big ? $3 / 1048576 : $3 / 1024), (big ? "MiB" : "KiB"), $4 * 1e3 }' "$tmp/run.csv")"
            else
                failures=$((failures + 1))
                printf '[round %d] %-4s %-18s FAILED rc %d\n' "$round" "$layout" "$cfg" "$rc"
                grep -E "FAIL|rror|timed out" "$tmp/run.log" | head -5 | sed 's/^/    | /'
            fi
        done
    done
done
# the CSV: header once, then every row
if [ -s "$csv.rows" ]; then
    [ -s "$csv" ] || echo "op,np,bytes,time_s,algbw_GBs,busbw_GBs,err,label" >"$csv"
    cat "$csv.rows" >>"$csv" && rm -f "$csv.rows"
fi
[ $failures = 0 ] || { echo "bench_nodes.sh: $failures run(s) failed" >&2; exit 1; }
