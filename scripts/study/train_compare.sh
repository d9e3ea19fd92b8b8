#!/bin/bash
# train_compare.sh: trains apps/train's program with apsmpi off (FP32) and preloaded in each format and scaling; writes a Markdown table and an accuracy plot.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/study/train_compare.sh [options] [-- extra apsmpi_train options]
Runs the training program at each rank count once without the library (FP32, plain MPI)
and once per format and scaling with LD_PRELOAD=libapsmpi.so, then writes
OUT/TAG.md (final test accuracy, difference from FP32, bytes sent, values flushed to zero,
divergence) and OUT/TAG.png (test accuracy per epoch of every run), TAG being the model
(with _quick appended in --quick mode). Every run's CSV and log are kept in OUT/runs/TAG/.
  --lib PATH           the library (default: .libs/libapsmpi.so in the repository root)
  --bin PATH           the training program (default: apps/apsmpi_train in the repository root)
  --out DIR            where the results go (default: results/training in the repository root)
  --model mlp|cnn      (default mlp)
  --epochs N           (default 5)
  --ranks "N ..."      rank counts (default "4 8")
  --formats "F ..."    APSMPI_FORMAT values (default "fp16 bf16 e5m2 e4m3 e3m2")
  --scalings "S ..."   APSMPI_SCALING values (default "block none"; block is APS per block, the default)
  --bucket-bytes N     gradient buckets of up to N bytes; 0: one allreduce per tensor (default 0)
  --min-bytes N        APSMPI_MIN_BYTES (default 0: every gradient call is compressed, small ones too)
  --train-limit N      train on the first N images only (default: all 60000)
  --test-limit N       test on the first N images only (default: all 10000)
  --timeout S          limit of each mpirun in seconds (default 120 + 90 per epoch)
  --quick              a short comparison: 2 epochs on 12000 training and 5000 test images
                       (explicit --epochs and limits win)
  --help
Plots with gnuplot (Debian: gnuplot-nox) when it is there; without it, or when it fails, the
table is made all the same and the script does not fail. Needs Open MPI's mpirun; runs as
root are allowed.
EOF
}

die() {
    echo "train_compare.sh: $*" >&2
    exit 2
}

root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/.libs/libapsmpi.so
bin=$root/apps/apsmpi_train
out=$root/results/training
model=mlp epochs="" ranks="4 8" formats="fp16 bf16 e5m2 e4m3 e3m2" scalings="block none"
bucket=0 min_bytes=0 train_limit="" test_limit="" timeout_s="" quick=0
extra=()
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --quick) quick=1; shift; continue ;;
    --) shift; extra=("$@"); break ;;
    --lib | --bin | --out | --model | --epochs | --ranks | --formats | --scalings | --bucket-bytes | --min-bytes | \
        --train-limit | --test-limit | --timeout)
        [ $# -ge 2 ] || die "$1 needs a value"
        case $1 in
        --lib) lib=$(realpath -m -- "$2") ;;
        --bin) bin=$(realpath -m -- "$2") ;;
        --out) out=$(realpath -m -- "$2") ;;
        --model) model=$2 ;;
        --epochs) epochs=$2 ;;
        --ranks) ranks=$2 ;;
        --formats) formats=$2 ;;
        --scalings) scalings=$2 ;;
        --bucket-bytes) bucket=$2 ;;
        --min-bytes) min_bytes=$2 ;;
        --train-limit) train_limit=$2 ;;
        --test-limit) test_limit=$2 ;;
        --timeout) timeout_s=$2 ;;
        esac
        shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done

tag=$model
if [ $quick = 1 ]; then
    tag=${model}_quick
    : "${epochs:=2}" "${train_limit:=12000}" "${test_limit:=5000}"
fi
: "${epochs:=5}"
case $model in mlp | cnn) ;; *) die "--model: '$model' is not mlp or cnn" ;; esac
for n in "$epochs" $ranks $bucket ${timeout_s:-1}; do
    [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number"
done
: "${timeout_s:=$((120 + 90 * epochs))}"
[ -x "$bin" ] || die "no training program at $bin (build it, or give --bin)"
[ -r "$lib" ] || die "no library at $lib (build it, or give --lib)"
command -v mpirun >/dev/null || die "mpirun is not on PATH"

args=(--model "$model" --epochs "$epochs" --bucket-bytes "$bucket" "${extra[@]}")
[ -n "$train_limit" ] && args+=(--train-limit "$train_limit")
[ -n "$test_limit" ] && args+=(--test-limit "$test_limit")

# Nothing from the caller's environment may leak into a run: the FP32 baseline must be plain
# MPI, and every apsmpi run gets exactly the settings named in the table.
unset LD_PRELOAD
for v in $(compgen -e | grep '^APSMPI_'); do unset "$v"; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0

rundir=$out/runs/$tag
mkdir -p "$rundir" || die "cannot create $rundir"
rm -f "$rundir"/*.csv "$rundir"/*.log "$rundir"/*.rc

# run NP FORMAT SCALING: one training job (FORMAT fp32: without the library); returns its status.
run() {
    local np=$1 fmt=$2 sc=$3 name xs=()
    if [ "$fmt" = fp32 ]; then
        name=fp32
    else
        name=$fmt-$sc
        # all ranks run on this one machine, where apsmpi would hand the calls to MPI
        # uncompressed: APSMPI_INTRANODE=compress stands in for ranks on separate nodes
        xs=(-x "LD_PRELOAD=$lib" -x "APSMPI_FORMAT=$fmt" -x "APSMPI_SCALING=$sc" -x APSMPI_STATS=1
            -x "APSMPI_MIN_BYTES=$min_bytes" -x APSMPI_INTRANODE=compress)
    fi
    timeout -k 10 "$timeout_s" mpirun -np "$np" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
        "${xs[@]}" "$bin" "${args[@]}" --label "$name" --csv "$rundir/np$np-$name.csv" \
        >"$rundir/np$np-$name.log" 2>&1
}

jobs_list=()
for np in $ranks; do
    jobs_list+=("$np fp32 -")
    for fmt in $formats; do
        for sc in $scalings; do
            # auto and the MX formats carry their own scales: scaling none does not apply to them
            case $fmt:$sc in auto:none | mx*:none) continue ;; esac
            jobs_list+=("$np $fmt $sc")
        done
    done
done

failures=0
i=0
for job in "${jobs_list[@]}"; do
    read -r np fmt sc <<<"$job"
    i=$((i + 1))
    name=$fmt
    [ "$fmt" = fp32 ] || name=$fmt-$sc
    start=$SECONDS
    run "$np" "$fmt" "$sc"
    rc=$?
    echo "$rc" >"$rundir/np$np-$name.rc"
    acc=$(awk -F, 'NR > 1 { a = $6 } END { print a }' "$rundir/np$np-$name.csv" 2>/dev/null)
    printf '[%d/%d] %d ranks %-12s rc %d  final test acc %s%%  (%d s)\n' "$i" "${#jobs_list[@]}" "$np" "$name" \
        "$rc" "${acc:-?}" $((SECONDS - start))
    if [ "$rc" != 0 ]; then
        failures=$((failures + 1))
        tail -5 "$rundir/np$np-$name.log" | sed 's/^/    | /'
    fi
done

# ---- the table ----
header=$(grep -m1 '^apsmpi_train: ' "$rundir/np${ranks%% *}-fp32.log" 2>/dev/null)
table=$out/$tag.md
{
    echo "# apsmpi training comparison: $model on Fashion-MNIST"
    echo
    echo "- Program: \`$(basename "$bin") ${args[*]}\`"
    echo "- Run: ${header#apsmpi_train: }"
    echo "- FP32 rows: the same binary without the library (plain MPI). Other rows: \`LD_PRELOAD=$(basename "$lib")\`"
    echo "  with \`APSMPI_FORMAT\`, \`APSMPI_SCALING\` as listed, \`APSMPI_MIN_BYTES=$min_bytes\`, \`APSMPI_INTRANODE=compress\` (one machine standing in for several nodes), all other settings at their defaults."
    echo "- Bytes: the FP32 bytes of the compressed gradient calls summed over ranks -> the bytes sent in their place"
    echo "  (from \`APSMPI_STATS=1\`); FP32 rows: the program's own count. Flushed: non-zero inputs that became zero."
    echo "- Epoch and allreduce seconds are means per epoch, with $(nproc) cores shared by all ranks (and by whatever"
    echo "  else ran on the machine): rough. Accuracy is what this table is about."
    echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(mpirun --version 2>/dev/null | head -1)."
    echo
    echo "| ranks | format | scaling | test acc % | vs FP32 (pp) | bytes sent (all ranks) | ratio | flushed | diverged | epoch s | allreduce s |"
    echo "| ---: | --- | --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: |"
    for np in $ranks; do
        base=$(awk -F, 'NR > 1 { a = $6 } END { print a }' "$rundir/np$np-fp32.csv" 2>/dev/null)
        for job in "${jobs_list[@]}"; do
            read -r jnp fmt sc <<<"$job"
            [ "$jnp" = "$np" ] || continue
            name=$fmt
            [ "$fmt" = fp32 ] || name=$fmt-$sc
            csv=$rundir/np$np-$name.csv log=$rundir/np$np-$name.log rc=$(cat "$rundir/np$np-$name.rc")
            stats=$(grep -m1 '^apsmpi stats: ' "$log")
            if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                status="timeout after ${timeout_s} s"
            elif [ "$rc" != 0 ]; then
                status="failed (exit $rc)"
            elif [ "$fmt" != fp32 ] && ! grep -q "format=$fmt scaling=$sc " <<<"$stats"; then
                status="failed (no apsmpi stats line for $fmt/$sc: library not active?)"
                failures=$((failures + 1))
            else
                status=ok
            fi
            if [ "$status" != ok ]; then
                echo "| $np | $fmt | ${sc/-/—} | $status | | | | | | | |"
                continue
            fi
            if [ "$fmt" = fp32 ]; then
                per_rank=$(sed -n 's/.*gradient allreduce calls, \([0-9]*\) bytes of MPI_FLOAT.*/\1/p' "$log")
                bytes="$((per_rank * np)) (plain MPI)" ratio=1.00x flushed=—
            else
                bytes=$(sed -n 's/.*; bytes \([0-9]*\) -> \([0-9]*\) .*/\1 -> \2/p' <<<"$stats")
                ratio=$(sed -n 's/.*; bytes [0-9]* -> [0-9]* (\([0-9.]*x\)[;)].*/\1/p' <<<"$stats")
                flushed=$(sed -n 's/.*flushed to zero [0-9]* of [0-9]* (\([0-9.]*\)%).*/\1/p' <<<"$stats")
                flushed=$(printf '%.3g%%' "$flushed")
            fi
            # the program warns when the ranks' parameters stopped being identical
            apart=$(grep -c 'ranks hold different parameters' "$log")
            awk -F, -v np="$np" -v fmt="$fmt" -v sc="${sc/-/—}" -v base="$base" -v bytes="$bytes" \
                -v ratio="$ratio" -v flushed="$flushed" -v apart="$apart" '
                NR > 1 {
                    acc = $6; n++; t += $7; ar += $8
                    if (!div && tolower($5) ~ /nan|inf/) div = "yes (epoch " $4 ")"
                }
                END {
                    delta = (fmt == "fp32") ? "—" : sprintf("%+.2f", acc - base)
                    div = div ? div : "no"
                    if (apart > 0) div = div ", ranks disagree"
                    printf "| %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %.1f | %.1f |\n", np, fmt, sc, acc,
                        delta, bytes, ratio, flushed, div, t / n, ar / n
                }' "$csv"
        done
    done
} >"$table"

# ---- the plot: test accuracy per epoch, one panel per rank count ----
# Colors: FP32 black, the formats from a palette in the order given; line style: the scaling.
palette=('#1f77b4' '#d62728' '#2ca02c' '#ff7f0e' '#9467bd' '#8c564b' '#e377c2' '#17becf' '#bcbd22' '#7f7f7f')
color() {
    local k=0 f
    [ "$1" = fp32 ] && { echo black; return; }
    for f in $formats; do
        [ "$f" = "$1" ] && break
        k=$((k + 1))
    done
    echo "${palette[k % ${#palette[@]}]}"
}
styles=(solid dashed dotted dash-dotted)
dash() {
    local k=1 s
    [ "$1" = - ] && { echo 1; return; }
    for s in $scalings; do
        [ "$s" = "$1" ] && break
        k=$((k + 1))
    done
    echo $(((k - 1) % ${#styles[@]} + 1))
}
legend=""
k=0
for sc in $scalings; do
    legend="$legend${legend:+, }${styles[k % ${#styles[@]}]}: $sc"
    k=$((k + 1))
done
# The y range holds every run that did not diverge; collapsed runs fall below it (marked in the key).
yrange=$(cat "$rundir"/*.csv 2>/dev/null | awk -F, '$1 != "label" && tolower($5) !~ /nan|inf/ && $6 > 15 {
    if (lo == "" || $6 < lo) lo = $6; if ($6 > hi) hi = $6 }
    END { if (lo == "") print "[0:100]"; else printf "[%d:%d]", lo - 1, hi + 1.99 }')
nr=$(wc -w <<<"$ranks")
plot=$out/$tag.png
gp=$rundir/plot.gp
term=pngcairo
command -v gnuplot >/dev/null && { gnuplot -e 'set terminal pngcairo' 2>/dev/null || term=png; }
{
    echo "set terminal $term size $((700 * nr)),720 font ',10' noenhanced"
    echo "set output '$plot'"
    echo "set datafile separator ','"
    echo "set multiplot layout 1,$nr title 'apsmpi: $model on Fashion-MNIST, test accuracy per epoch (line style by APSMPI_SCALING: $legend)'"
    echo "set xlabel 'epoch'; set ylabel 'test accuracy (%)'; set grid; set yrange $yrange"
    echo "set xrange [1:$epochs]; set key below font ',9'"
    [ "$epochs" -le 20 ] && echo "set xtics 1"
    for np in $ranks; do
        echo "set title '$np ranks'"
        plots=()
        for job in "${jobs_list[@]}"; do
            read -r jnp fmt sc <<<"$job"
            [ "$jnp" = "$np" ] || continue
            name=$fmt
            [ "$fmt" = fp32 ] || name=$fmt-$sc
            csv=$rundir/np$np-$name.csv
            [ -s "$csv" ] || continue
            title=$name
            [ "$fmt" = fp32 ] && title="FP32 (no library)"
            awk -F, 'NR > 1 && tolower($5) ~ /nan|inf/ { f = 1 } END { exit !f }' "$csv" && title="$title (diverged)"
            width=1.5
            [ "$fmt" = fp32 ] && width=3
            plots+=("'$csv' skip 1 using 4:6 with linespoints lw $width pt 7 ps 0.5 dt $(dash "$sc") lc rgb '$(color "$fmt")' title '$title'")
        done
        if [ ${#plots[@]} -gt 0 ]; then
            (IFS=,; echo "plot ${plots[*]}")
        fi
    done
    echo "unset multiplot"
} >"$gp"
# a missing or failing plot is said, never counted as a failed run
if ! command -v gnuplot >/dev/null; then
    echo "train_compare.sh: gnuplot is not installed (Debian: gnuplot-nox): no plot" >&2
    plot="(none: no gnuplot; its script is $gp)"
elif ! gnuplot "$gp"; then
    echo "train_compare.sh: gnuplot failed on $gp: no plot" >&2
    plot="(none: gnuplot failed on $gp)"
fi

cat "$table"
echo
echo "table: $table"
echo "plot:  $plot"
echo "runs:  $rundir"
[ "$failures" = 0 ] || { echo "train_compare.sh: $failures run(s) failed" >&2; exit 1; }
