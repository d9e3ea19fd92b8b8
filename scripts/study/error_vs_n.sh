#!/bin/bash
# error_vs_n.sh: runs apps/error_vs_n with the library preloaded at many rank counts, formats and algorithms into one CSV, then the Markdown table.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/study/error_vs_n.sh [options]
For every rank count, format and algorithm it runs (on this machine, oversubscribed)
  timeout T mpirun -np N --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
      -x LD_PRELOAD=LIB -x APSMPI_FORMAT=F -x APSMPI_ALGORITHM=A -x APSMPI_STATS=1 [-x VAR=VAL ...] \
      apps/error_vs_n --count C --csv CSV --label F/A
(an in-place float MPI_Allreduce of normal data and of all-ones against an FP64 sum), and
once per rank count the same program without the library (label mpi/-). A run whose
stats line does not show compressed calls counts as failed (the library was not active).
Then it writes the table (scripts/study/error_vs_n_table.py) to MD. RUN_WRAPPER (environment,
empty by default) is put in front of each mpirun, so that each run alone takes a lock
(RUN_WRAPPER=heavy) while the script itself runs outside any.
  --lib PATH          the library (default .libs/libapsmpi.so)
  --alg-lib A=PATH    another library for algorithm A only (repeatable)
  --bin PATH          the program (default apps/error_vs_n)
  --np "LIST"         (default "2 4 8 16 32 64 129")
  --formats "LIST"    (default "fp16 bf16 e5m2 e4m3 e4m3ieee e3m2 e2m1 e5m7")
  --algs "LIST"       APSMPI_ALGORITHM values (default "ring rsag"); "-" leaves it unset; "rsag" is rsag
                      at every rank count (APSMPI_TWOLEVEL_FROM=0), "twolevel" rsag's two-level schedule at
                      every rank count (APSMPI_TWOLEVEL_FROM=2)
  --count N           floats per rank (default 2097152)
  --count-at NP=N     another count from NP ranks up (repeatable)
  --env VAR=VAL       extra environment of every library run (default APSMPI_INTRANODE=compress:
                      compress although all ranks share this one machine)
  --csv FILE          (default results/error_vs_n/error_vs_n.csv; rows are appended)
  --md FILE           (default results/error_vs_n/table.md; the study's README.md keeps its card)
  --timeout S         bound of one mpirun (default 600)
  --table-only        only rewrite MD from CSV
  --help
EOF
}

die() {
    echo "error_vs_n.sh: $*" >&2
    exit 2
}

root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/.libs/libapsmpi.so bin=$root/apps/error_vs_n
nps="2 4 8 16 32 64 129" formats="fp16 bf16 e5m2 e4m3 e4m3ieee e3m2 e2m1 e5m7" algs="ring rsag"
count=2097152 csv=$root/results/error_vs_n/error_vs_n.csv md=$root/results/error_vs_n/table.md tmo=600 table_only=0
count_at=() alg_libs=() envs=() envs_given=0
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --table-only) table_only=1; shift; continue ;;
    --lib | --alg-lib | --bin | --np | --formats | --algs | --count | --count-at | --env | --csv | --md | --timeout)
        [ $# -ge 2 ] || die "$1 needs a value"
        case $1 in
        --lib) lib=$(realpath -m -- "$2") ;;
        --alg-lib) alg_libs+=("${2%%=*}=$(realpath -m -- "${2#*=}")") ;;
        --bin) bin=$(realpath -m -- "$2") ;;
        --np) nps=$2 ;;
        --formats) formats=$2 ;;
        --algs) algs=$2 ;;
        --count) count=$2 ;;
        --count-at) count_at+=("$2") ;;
        --env) envs+=("$2"); envs_given=1 ;;
        --csv) csv=$(realpath -m -- "$2") ;;
        --md) md=$(realpath -m -- "$2") ;;
        --timeout) tmo=$2 ;;
        esac
        shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done
[ $envs_given = 1 ] || envs=(APSMPI_INTRANODE=compress)

table() {
    /usr/bin/python3 "$root/scripts/study/error_vs_n_table.py" "$csv" >"$md.new" && mv "$md.new" "$md" &&
        echo "error_vs_n.sh: wrote $md"
}
if [ $table_only = 1 ]; then
    table
    exit
fi

for n in $nps $count $tmo; do
    [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number"
done
[ -x "$bin" ] || die "no program at $bin (make apps/error_vs_n)"
[ -r "$lib" ] || die "no library at $lib"

# the count for NP ranks, and the library of algorithm A
count_for() {
    local c=$count spec
    for spec in "${count_at[@]+"${count_at[@]}"}"; do
        [ "$1" -ge "${spec%%=*}" ] && c=${spec#*=}
    done
    echo "$c"
}
# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"

clean_mpi_env
mkdir -p "$(dirname "$csv")"
tmp=$(mktemp -d /tmp/error_vs_n.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

failures=0
# one NP FORMAT ALG: one mpirun (FORMAT mpi: without the library); appends its rows to the CSV
one() {
    local np=$1 fmt=$2 alg=$3 c xs=() label rc start
    c=$(count_for "$np")
    label=$fmt/$alg
    if [ "$fmt" != mpi ]; then
        xs=(-x "LD_PRELOAD=$(lib_for "$alg")" -x "APSMPI_FORMAT=$fmt" -x APSMPI_STATS=1)
        case $alg in
        -) ;;
        twolevel) xs+=(-x APSMPI_ALGORITHM=rsag -x APSMPI_TWOLEVEL_FROM=2) ;; # the two-level schedule forced
        rsag) xs+=(-x APSMPI_ALGORITHM=rsag -x APSMPI_TWOLEVEL_FROM=0) ;;     # rsag at every rank count
        *) xs+=(-x "APSMPI_ALGORITHM=$alg") ;;
        esac
        for e in "${envs[@]+"${envs[@]}"}"; do xs+=(-x "$e"); done
    fi
    rm -f "$tmp/run.csv"
    start=$SECONDS
    ${RUN_WRAPPER:-} timeout -k 10 "$tmo" mpirun -np "$np" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
        "${xs[@]+"${xs[@]}"}" "$bin" --count "$c" --csv "$tmp/run.csv" --label "$label" >"$tmp/run.log" 2>&1
    rc=$?
    if [ $rc = 0 ] && [ "$fmt" != mpi ] && ! grep -q 'apsmpi stats: .*calls compressed [1-9]' "$tmp/run.log"; then
        rc=99 # the library did not compress: not a measurement of it
    fi
    if [ $rc = 0 ] && [ -s "$tmp/run.csv" ]; then
        if [ ! -s "$csv" ]; then head -1 "$tmp/run.csv" >"$csv"; fi
        tail -n +2 "$tmp/run.csv" >>"$csv"
        printf '%4d ranks %-14s %3d s  %s\n' "$np" "$label" $((SECONDS - start)) \
            "$(grep -o 'data=[a-z]* .*rel_l2=[^ ]* max_abs=[^ ]*' "$tmp/run.log" | tr '\n' ' ')"
    else
        failures=$((failures + 1))
        [ -s "$csv" ] || echo "np,count,data,label,rel_l2,max_abs,zeroed,nonfinite,r_min,r_max,ranks_differ" >"$csv"
        echo "$np,$c,failed(rc=$rc),$label,,,,,,," >>"$csv"
        printf '%4d ranks %-14s FAILED rc %d\n' "$np" "$label" "$rc"
        tail -5 "$tmp/run.log" | sed 's/^/    | /'
    fi
}

echo "error_vs_n.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), library $lib, env ${envs[*]-}"
for np in $nps; do
    one "$np" mpi -
    for fmt in $formats; do
        for alg in $algs; do
            one "$np" "$fmt" "$alg"
        done
    done
done
table
[ $failures = 0 ] || { echo "error_vs_n.sh: $failures run(s) failed" >&2; exit 1; }
