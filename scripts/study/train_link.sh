#!/bin/bash
# train_link.sh: time per training epoch with apsmpi off and on, each rank behind a rate-limited link (netns_mpirun.sh).
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/study/train_link.sh [options]   (as root: it makes network namespaces)
Trains apps/apsmpi_train with one rank per network namespace behind a shaped link
(scripts/netns_mpirun.sh), once with plain MPI (FP32) and once per format with the
library preloaded (APS per block, other settings at their defaults), in rounds so that
slow drifts of the machine hit every configuration alike. Reports per configuration the
median over rounds of the mean epoch time and of the time in allreduce, the speedup over
FP32 measured in the same rounds, and the final test accuracy. Allreduce runs the ring
algorithm (coll_tuned_allreduce_algorithm 4) for both, so that the comparison is of bytes.
  --np N              ranks (default 4)
  --rate RATE         link rate per rank (default 1gbit)
  --formats "F ..."   (default "fp16 e4m3 e3m2")
  --model mlp|cnn     (default mlp)
  --epochs N          per run (default 2)
  --bucket-bytes N    gradient buckets (default 0: one allreduce per tensor)
  --rounds N          (default 3)
  --csv FILE          one row per run (default: none)
  --lib PATH, --bin PATH
  --help
EOF
}

root=$(cd "$(dirname "$0")/../.." && pwd)
np=4 rate=1gbit formats="fp16 e4m3 e3m2" model=mlp epochs=2 bucket=0 rounds=3 csv=""
lib=$root/.libs/libapsmpi.so bin=$root/apps/apsmpi_train
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --np | --rate | --formats | --model | --epochs | --bucket-bytes | --rounds | --csv | --lib | --bin)
        [ $# -ge 2 ] || { echo "train_link.sh: $1 needs a value" >&2; exit 2; }
        case $1 in
        --np) np=$2 ;; --rate) rate=$2 ;; --formats) formats=$2 ;; --model) model=$2 ;;
        --epochs) epochs=$2 ;; --bucket-bytes) bucket=$2 ;; --rounds) rounds=$2 ;;
        --csv) csv=$(realpath -m -- "$2") ;;
        --lib) lib=$(realpath -m -- "$2") ;; --bin) bin=$(realpath -m -- "$2") ;;
        esac
        shift 2 ;;
    *) echo "train_link.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "train_link.sh: needs root (network namespaces)" >&2; exit 2; }
[ -x "$bin" ] && [ -r "$lib" ] || { echo "train_link.sh: build first (no $bin or $lib)" >&2; exit 2; }
unset LD_PRELOAD
for v in $(compgen -e | grep '^APSMPI_'); do unset "$v"; done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$csv" ] && echo "round,config,epoch_s,allreduce_s,test_acc" >"$csv"
configs=(fp32 $formats)
for round in $(seq 1 "$rounds"); do
    for cfg in "${configs[@]}"; do
        xs=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4)
        [ "$cfg" = fp32 ] || xs+=(-x "LD_PRELOAD=$lib" -x "APSMPI_FORMAT=$cfg" -x APSMPI_STATS=1)
        out=$tmp/$cfg-$round.csv
        "$root/scripts/netns_mpirun.sh" --np "$np" --rate "$rate" --timeout $((120 + 120 * epochs)) -- "${xs[@]}" -- \
            "$bin" --model "$model" --epochs "$epochs" --bucket-bytes "$bucket" --csv "$out" --label "$cfg" \
            >"$tmp/$cfg-$round.log" 2>&1
        rc=$?
        if [ $rc != 0 ] || [ ! -s "$out" ]; then
            echo "round $round $cfg: FAILED (rc $rc)"
            tail -5 "$tmp/$cfg-$round.log" | sed 's/^/    | /'
            continue
        fi
        if [ "$cfg" != fp32 ] && ! grep -q "calls compressed [1-9]" "$tmp/$cfg-$round.log"; then
            echo "round $round $cfg: the library compressed nothing"
            continue
        fi
        row=$(awk -F, 'NR > 1 { e += $7; a += $8; n++; acc = $6 } END { printf "%.3f,%.3f,%.2f", e / n, a / n, acc }' "$out")
        echo "round $round $cfg: epoch s, allreduce s, test acc: $row"
        echo "$round,$cfg,$row" >>"$tmp/all.csv"
        [ -n "$csv" ] && echo "$round,$cfg,$row" >>"$csv"
    done
done

echo
echo "$model, $np ranks, $rate per rank, $epochs epochs per run, bucket bytes $bucket, $rounds rounds (medians)"
echo
echo "| config | epoch s | allreduce s | epoch speedup vs FP32 | allreduce speedup | test acc % |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
/usr/bin/python3 - "$tmp/all.csv" "${configs[@]}" <<'PY'
import os, sys, statistics as st
rows = [l.strip().split(",") for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
by = {}
for r, cfg, e, a, acc in rows:
    by.setdefault(cfg, []).append((int(r), float(e), float(a), float(acc)))
base = {r: (e, a) for r, e, a, _ in by.get("fp32", [])}
for cfg in sys.argv[2:]:
    runs = by.get(cfg)
    if not runs:
        print(f"| {cfg} | failed | | | | |")
        continue
    e = st.median(x[1] for x in runs)
    a = st.median(x[2] for x in runs)
    acc = runs[-1][3]
    # speedup per round against FP32 of the same round, then the median
    se = [base[r][0] / x for r, x, _, _ in runs if r in base]
    sa = [base[r][1] / y for r, _, y, _ in runs if r in base]
    f = lambda v: f"{st.median(v):.2f}x" if v else "—"
    print(f"| {'FP32 (plain MPI)' if cfg == 'fp32' else cfg} | {e:.2f} | {a:.2f} | {f(se)} | {f(sa)} | {acc:.2f} |")
PY
