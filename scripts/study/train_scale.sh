#!/bin/bash
# train_scale.sh: the training study across rank counts: MLP runs without the library (FP32) and with apsmpi's old and new algorithm per format and seed, then the table and plot.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/study/train_scale.sh [options]
For every seed (outermost, so that a study cut short still has whole seeds), rank count,
format and algorithm, one run on this machine (oversubscribed):
  timeout T mpirun -np N --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
      [-x LD_PRELOAD=LIB -x APSMPI_FORMAT=F -x APSMPI_ALGORITHM=A -x APSMPI_SCALING=block \
       -x APSMPI_MIN_BYTES=0 -x APSMPI_STATS=1 -x APSMPI_INTRANODE=compress] \
      apps/apsmpi_train --model mlp --seed S --epochs E [--train-limit ...] --csv OUT/runs/seedS/npN-NAME.csv
NAME is fp32 (no library) or F-A. A format written F+ef also sets APSMPI_ERROR_FEEDBACK=1
(error feedback). A run already done (its .rc holds 0) is not repeated. A library run without
compressed calls in its stats line counts as failed. RUN_WRAPPER (environment, empty by
default) is put in front of each run's command, so that each run alone takes a lock
(RUN_WRAPPER=heavy) while the study itself runs outside any. Then OUT/README.md:
the table (scripts/study/train_scale_summary.py, after OUT/intro.md if there is one: what the runs
were, written by hand) and the plot OUT/scale.png.
  --ranks "LIST"      (default "4 8 16 32")
  --seeds "LIST"      (default "1 2 3 4 5")
  --formats "LIST"    (default "e4m3 e3m2 e2m1")
  --algs "LIST"       APSMPI_ALGORITHM values (default "ring rsag")
  --no-fp32           no FP32 runs
  --epochs N          (default 5)
  --train-limit N / --test-limit N   only the first N images (default all)
  --bucket-bytes N    gradient buckets (default 0: one allreduce per tensor)
  --lib PATH          (default .libs/libapsmpi.so)
  --alg-lib A=PATH    another library for algorithm A (repeatable)
  --bin PATH          (default apps/apsmpi_train)
  --out DIR           (default results/training/scale)
  --timeout S         bound of one run (default 900)
  --title TEXT        the title of OUT/README.md
  --summary-only      only rewrite OUT/README.md and the plot
  --help
EOF
}

die() {
    echo "train_scale.sh: $*" >&2
    exit 2
}

root=$(cd "$(dirname "$0")/../.." && pwd)
ranks="4 8 16 32" seeds="1 2 3 4 5" formats="e4m3 e3m2 e2m1" algs="ring rsag" fp32=1 epochs=5
train_limit="" test_limit="" bucket=0 lib=$root/.libs/libapsmpi.so bin=$root/apps/apsmpi_train
out=$root/results/training/scale tmo=900 summary_only=0 alg_libs=() title=()
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --no-fp32) fp32=0; shift; continue ;;
    --summary-only) summary_only=1; shift; continue ;;
    --ranks | --seeds | --formats | --algs | --epochs | --train-limit | --test-limit | --bucket-bytes | --lib | \
        --alg-lib | --bin | --out | --timeout | --title)
        [ $# -ge 2 ] || die "$1 needs a value"
        case $1 in
        --ranks) ranks=$2 ;;
        --seeds) seeds=$2 ;;
        --formats) formats=$2 ;;
        --algs) algs=$2 ;;
        --epochs) epochs=$2 ;;
        --train-limit) train_limit=$2 ;;
        --test-limit) test_limit=$2 ;;
        --bucket-bytes) bucket=$2 ;;
        --lib) lib=$(realpath -m -- "$2") ;;
        --alg-lib) alg_libs+=("${2%%=*}=$(realpath -m -- "${2#*=}")") ;;
        --bin) bin=$(realpath -m -- "$2") ;;
        --out) out=$(realpath -m -- "$2") ;;
        --timeout) tmo=$2 ;;
        --title) title=(--title "$2") ;;
        esac
        shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done
for n in $ranks $seeds $epochs $bucket $tmo $train_limit $test_limit; do
    [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number"
done

summary() {
    local cmd="scripts/study/train_scale.sh --ranks \"$ranks\" --seeds \"$seeds\" --formats \"$formats\" --algs \"$algs\" --epochs $epochs"
    [ -n "$train_limit" ] && cmd+=" --train-limit $train_limit"
    [ -n "$test_limit" ] && cmd+=" --test-limit $test_limit"
    [ "$bucket" = 0 ] || cmd+=" --bucket-bytes $bucket"
    /usr/bin/python3 "$root/scripts/study/train_scale_summary.py" --command "$cmd" --intro "$out/intro.md" "${title[@]+"${title[@]}"}" \
        --plot "$out/scale.png" "$out/runs" \
        >"$out/README.md.new" && mv "$out/README.md.new" "$out/README.md" && echo "train_scale.sh: wrote $out/README.md"
}
mkdir -p "$out/runs"
if [ $summary_only = 1 ]; then
    summary
    exit
fi
[ -x "$bin" ] || die "no training program at $bin"
[ -r "$lib" ] || die "no library at $lib"

# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"

clean_mpi_env
args=(--model mlp --epochs "$epochs" --bucket-bytes "$bucket")
[ -n "$train_limit" ] && args+=(--train-limit "$train_limit")
[ -n "$test_limit" ] && args+=(--test-limit "$test_limit")

failures=0
# one SEED NP FORMAT ALG: one training run (FORMAT fp32: without the library)
one() {
    local seed=$1 np=$2 fmt=$3 alg=$4 name xs=() prefix
    name=$fmt
    if [ "$fmt" != fp32 ]; then
        name=$fmt-$alg
        xs=(-x "LD_PRELOAD=$(lib_for "$alg")" -x "APSMPI_FORMAT=${fmt%+ef}" -x "APSMPI_ALGORITHM=$alg"
            -x APSMPI_SCALING=block -x APSMPI_MIN_BYTES=0 -x APSMPI_STATS=1 -x APSMPI_INTRANODE=compress)
        [ "$fmt" = "${fmt%+ef}" ] || xs+=(-x APSMPI_ERROR_FEEDBACK=1)
    fi
    mkdir -p "$out/runs/seed$seed"
    prefix=$out/runs/seed$seed/np$np-$name
    study_run "$prefix" "$prefix.log" 6 "$(printf 'seed %d %3d ranks %-12s' "$seed" "$np" "$name")" \
        "$([ "$fmt" = fp32 ] && echo no || echo yes)" -- ${RUN_WRAPPER:-} \
        timeout -k 10 "$tmo" mpirun -np "$np" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
        "${xs[@]+"${xs[@]}"}" "$bin" "${args[@]}" --seed "$seed" --label "$name" --csv "$prefix.csv.new" ||
        failures=$((failures + 1))
}

for seed in $seeds; do
    for np in $ranks; do
        [ $fp32 = 1 ] && one "$seed" "$np" fp32 -
        for fmt in $formats; do
            for alg in $algs; do
                one "$seed" "$np" "$fmt" "$alg"
            done
        done
    done
done
summary
[ $failures = 0 ] || { echo "train_scale.sh: $failures run(s) failed" >&2; exit 1; }
