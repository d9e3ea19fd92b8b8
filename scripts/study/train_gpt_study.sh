#!/bin/bash
# train_gpt_study.sh: the transformer study: apps/apsmpi_train --model gpt without the library (FP32) and with it in each format, per seed, rank count and bucketing; resumable; then the table and plots.
set -uo pipefail

usage() {
    cat <<'EOF_USAGE'
usage: scripts/study/train_gpt_study.sh [options] [-- more apsmpi_train options]
Trains the character-level transformer (apps/apsmpi_train --model gpt) once per seed
(outermost, so that a study cut short has whole seeds), rank count, bucketing and format:
  RUN_WRAPPER timeout T mpirun -np N --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
      [-x LD_PRELOAD=LIB -x APSMPI_FORMAT=F -x APSMPI_SCALING=S -x APSMPI_MIN_BYTES=0 \
       -x APSMPI_STATS=1 -x APSMPI_INTRANODE=compress -x (each --env)] \
      apps/apsmpi_train --model gpt --seed K --steps STEPS --bucket-bytes all|0 [...] \
      --csv OUT/runs/seedK/npN-F-B.csv
F is fp32 (no library) or an APSMPI_FORMAT; B is fused (one allreduce of the whole gradient
per step, --bucket-bytes all) or pertensor (one per parameter tensor, --bucket-bytes 0).
RUN_WRAPPER (environment, empty by default) prefixes every run, e.g. RUN_WRAPPER=heavy to take
a lock per run on a shared machine; the script itself takes none. A run whose .rc holds 0 is
not repeated: the script resumes where it stopped. A library run whose statistics line shows
no compressed call counts as failed (rc 99). Every run keeps its CSV, its output (.out:
the program's lines and apsmpi's statistics line) and its exit status (.rc). Then OUT/README.md (scripts/study/train_gpt_summary.py,
with OUT/intro.md and OUT/notes.md if there are any: written by hand), OUT/curves.png and
OUT/table.md (the short table that results/training/README.md shows).

Without --ranks, --formats and --buckets, the whole study (about 90 runs for 5 seeds):
  4, 8 and 16 ranks, fused:  fp32 e4m3 e3m2 e2m1
  8 ranks, fused:            fp16 bf16 e5m2
  8 ranks, pertensor:        fp32 e4m3 e3m2 e2m1
With any of them, that one grid (and its FP32 runs, unless --no-fp32), into the same OUT:
  --ranks "LIST"      rank counts (default "8")
  --formats "LIST"    APSMPI_FORMAT values (default "e4m3 e3m2 e2m1")
  --buckets "LIST"    fused, pertensor (default "fused")
Other options:
  --seeds "LIST"      (default "1 2 3 4 5")
  --steps N           optimizer steps of every run (default 400)
  --scaling S         APSMPI_SCALING of the library runs (default block: APS per block)
  --env NAME=VALUE    one more variable for the library runs (repeatable; also in the run's name
                      when given with --tag)
  --tag TEXT          appended to the name of the library runs (F-TEXT-B), to keep apart runs
                      that differ by --env or --lib
  --no-fp32           no FP32 runs
  --lib PATH          (default .libs/libapsmpi.so)
  --bin PATH          (default apps/apsmpi_train)
  --out DIR           (default results/training/transformer)
  --timeout S         bound of one run (default 900)
  --summary-only      only rewrite OUT/README.md and the plots
  --quick             a short comparison (scripts/main.sh): seed 1, 4 ranks, fused, fp32 e4m3 e3m2
                      e2m1, 150 steps evaluated every 25, into results/main/transformer (options
                      given explicitly win)
  --help
For example the MX formats at 8 ranks, beside this study's runs:
  RUN_WRAPPER=heavy scripts/study/train_gpt_study.sh --ranks 8 --formats "MXFORMAT ..."   # the FP32 runs there are reused
EOF_USAGE
}

die() {
    echo "train_gpt_study.sh: $*" >&2
    exit 2
}

root=$(cd "$(dirname "$0")/../.." && pwd)
# The command that made the runs, for the page: --summary-only only rewrites it.
args=" $* "
args=${args// --summary-only / }
args=${args# }
args=${args% }
invocation="scripts/study/train_gpt_study.sh${args:+ $args}"
ranks="" formats="" buckets="" seeds="1 2 3 4 5" steps=400 scaling=block fp32=1 tag=""
lib=$root/.libs/libapsmpi.so bin=$root/apps/apsmpi_train out=$root/results/training/transformer tmo=900
summary_only=0 quick=0 envs=() extra=()
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --no-fp32) fp32=0; shift; continue ;;
    --summary-only) summary_only=1; shift; continue ;;
    --quick) quick=1; shift; continue ;;
    --) shift; extra=("$@"); break ;;
    --ranks | --formats | --buckets | --seeds | --steps | --scaling | --env | --tag | --lib | --bin | --out | --timeout)
        [ $# -ge 2 ] || die "$1 needs a value"
        case $1 in
        --ranks) ranks=$2 ;;
        --formats) formats=$2 ;;
        --buckets) buckets=$2 ;;
        --seeds) seeds=$2 ;;
        --steps) steps=$2 ;;
        --scaling) scaling=$2 ;;
        --env) [[ $2 == APSMPI_*=* ]] || die "--env '$2': want APSMPI_NAME=VALUE"; envs+=("$2") ;;
        --tag) [[ $2 =~ ^[A-Za-z0-9.]+$ ]] || die "--tag '$2': letters, digits and dots only"; tag=$2 ;;
        --lib) lib=$(realpath -m -- "$2") ;;
        --bin) bin=$(realpath -m -- "$2") ;;
        --out) out=$(realpath -m -- "$2") ;;
        --timeout) tmo=$2 ;;
        esac
        shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done
for n in $ranks $seeds $steps $tmo; do
    [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number"
done
for b in $buckets; do
    case $b in fused | pertensor) ;; *) die "--buckets: '$b' is not fused or pertensor" ;; esac
done

if [ $quick = 1 ]; then
    [ -n "$ranks$formats$buckets" ] || ranks=4
    [ "$seeds" != "1 2 3 4 5" ] || seeds=1
    [ "$steps" != 400 ] || steps=150
    [[ " ${extra[*]-} " == *" --eval-every "* ]] || extra+=(--eval-every 25)
    [ "$out" != "$root/results/training/transformer" ] || out=$root/results/main/transformer
fi

# The grids: "RANKS|FORMATS|BUCKET" each.
grids=()
if [ -z "$ranks$formats$buckets" ]; then
    grids=("4 8 16|e4m3 e3m2 e2m1|fused" "8|fp16 bf16 e5m2|fused" "8|e4m3 e3m2 e2m1|pertensor")
else
    for b in ${buckets:-fused}; do
        grids+=("${ranks:-8}|${formats:-e4m3 e3m2 e2m1}|$b")
    done
fi

summary() {
    /usr/bin/python3 "$root/scripts/study/train_gpt_summary.py" --command "$invocation" \
        --intro "$out/intro.md" --notes "$out/notes.md" --plot "$out/curves.png" --table "$out/table.md" "$out/runs" \
        >"$out/README.md.new" && mv "$out/README.md.new" "$out/README.md" && echo "train_gpt_study.sh: wrote $out/README.md"
}
mkdir -p "$out/runs" || die "cannot create $out/runs"
if [ $summary_only = 1 ]; then
    summary
    exit
fi
[ -x "$bin" ] || die "no training program at $bin (build it, or give --bin)"
[ -r "$lib" ] || die "no library at $lib (build it, or give --lib)"

# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"
clean_mpi_env
read -ra wrapper <<<"${RUN_WRAPPER:-}"

failures=0
# one SEED NP FORMAT BUCKET: one training run (FORMAT fp32: without the library)
one() {
    local seed=$1 np=$2 fmt=$3 bucket=$4 name xs=() prefix e
    name=$fmt-$bucket
    if [ "$fmt" != fp32 ]; then
        name=$fmt${tag:+-$tag}-$bucket
        xs=(-x "LD_PRELOAD=$lib" -x "APSMPI_FORMAT=$fmt" -x "APSMPI_SCALING=$scaling" -x APSMPI_MIN_BYTES=0
            -x APSMPI_STATS=1 -x APSMPI_INTRANODE=compress)
        for e in "${envs[@]+"${envs[@]}"}"; do
            xs+=(-x "$e")
        done
    fi
    mkdir -p "$out/runs/seed$seed"
    prefix=$out/runs/seed$seed/np$np-$name
    study_run "$prefix" "$prefix.out" 9 "$(printf 'seed %s %3d ranks %-20s' "$seed" "$np" "$name")" \
        "$([ "$fmt" = fp32 ] && echo no || echo yes)" -- \
        "${wrapper[@]+"${wrapper[@]}"}" timeout -k 10 "$tmo" mpirun -np "$np" --oversubscribe --bind-to none \
        --mca mpi_yield_when_idle 1 "${xs[@]+"${xs[@]}"}" "$bin" --model gpt --seed "$seed" --steps "$steps" \
        --bucket-bytes "$([ "$bucket" = fused ] && echo all || echo 0)" --label "$name" --csv "$prefix.csv.new" \
        "${extra[@]+"${extra[@]}"}" || failures=$((failures + 1))
}

for seed in $seeds; do
    for grid in "${grids[@]}"; do
        IFS='|' read -r g_ranks g_formats g_bucket <<<"$grid"
        for np in $g_ranks; do
            [ $fp32 = 1 ] && one "$seed" "$np" fp32 "$g_bucket"
            for fmt in $g_formats; do
                one "$seed" "$np" "$fmt" "$g_bucket"
            done
        done
    done
done
summary
[ $failures = 0 ] || { echo "train_gpt_study.sh: $failures run(s) failed" >&2; exit 1; }
