#!/bin/bash
# train_study.sh: the full training comparison: train_compare.sh for several seeds and both models, then the multi-seed tables.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/study/train_study.sh [options]
Runs scripts/study/train_compare.sh (library off, then on in every format and scaling, at 4 and
8 ranks) once per seed and model, into OUT/seeds/seedK/, then writes OUT/README.md: per
model, the final test accuracy of every format against FP32 of the same seed over all
seeds (scripts/study/train_summary.py), the plot of seed 1 (OUT/MODEL.png), the transformer's
short table (OUT/transformer/table.md, from scripts/study/train_gpt_study.sh) and OUT/link.md
(epoch times on a shaped link, from scripts/study/train_link.sh) where they are.
  --seeds "K ..."     (default "1 2 3 4 5")
  --models "M ..."    (default "mlp cnn")
  --epochs N          (default 5)
  --out DIR           (default results/training)
  --lib PATH, --bin PATH   as for train_compare.sh
  --summary-only      only rebuild OUT/README.md from the runs already in OUT/seeds/
  --help
Any further options after -- go to train_compare.sh.
EOF
}

root=$(cd "$(dirname "$0")/../.." && pwd)
seeds="1 2 3 4 5" models="mlp cnn" epochs=5 out=$root/results/training summary_only=0 pass=()
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --summary-only) summary_only=1; shift ;;
    --seeds | --models | --epochs | --out | --lib | --bin)
        [ $# -ge 2 ] || { echo "train_study.sh: $1 needs a value" >&2; exit 2; }
        case $1 in
        --seeds) seeds=$2 ;;
        --models) models=$2 ;;
        --epochs) epochs=$2 ;;
        --out) out=$(realpath -m -- "$2") ;;
        --lib | --bin) pass+=("$1" "$(realpath -m -- "$2")") ;;
        esac
        shift 2 ;;
    --) shift; pass+=(-- "$@"); break ;;
    *) echo "train_study.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
for s in $seeds; do
    [[ $s =~ ^[0-9]+$ ]] || { echo "train_study.sh: seed '$s' is not a whole number" >&2; exit 2; }
done

failures=0
if [ $summary_only = 0 ]; then
    for seed in $seeds; do
        for model in $models; do
            echo "== seed $seed, $model: $(date -u +%H:%M:%S)"
            # the seed goes after any caller's options: train_compare passes them to the program
            extra=("${pass[@]}")
            [[ " ${extra[*]} " == *" -- "* ]] || extra+=(--)
            "$root/scripts/study/train_compare.sh" --model "$model" --epochs "$epochs" --out "$out/seeds/seed$seed" \
                "${extra[@]}" --seed "$seed" | grep '^\[' || failures=$((failures + 1))
        done
    done
fi

dirs=()
for seed in $seeds; do
    dirs+=("$out/seeds/seed$seed")
done
first=${seeds%% *}
{
    echo "# Training with apsmpi on and off: Fashion-MNIST, several seeds"
    echo
    echo "Made by \`scripts/study/train_study.sh --seeds \"$seeds\" --models \"$models\" --epochs $epochs\`"
    echo "($(date -u '+%Y-%m-%d'), $(nproc) cores, $(mpirun --version 2>/dev/null | head -1)). Each seed is one"
    echo "\`scripts/study/train_compare.sh\` run (its table and plot: \`seeds/seedK/MODEL.md\`, \`.png\`; every run's"
    echo "CSV and log: \`seeds/seedK/runs/MODEL/\`)."
    echo
    echo "How to read it: FP32 is the same program without the library. A compressed run starts"
    echo "from the same initial weights and data order as FP32 of its seed, and \"vs FP32\" is its"
    echo "final test accuracy minus that FP32 run's. Any difference in the gradients, even one"
    echo "rounding, sends SGD down another trajectory, so two runs of one seed end about as far"
    echo "apart as two seeds do: FP32's own seed-to-seed standard deviation (in its row) is the"
    echo "noise floor against which a difference means something. \"within target\" counts the"
    echo "seeds whose difference is inside the issue's target (0.1 pp for 8 bits and fewer,"
    echo "0.05 pp for 16 bits); \"diverged\" counts runs whose loss became inf/NaN or whose"
    echo "accuracy fell to chance. Epoch and allreduce seconds are means with every rank on 2"
    echo "shared cores and no network: not a speed measurement (see the shaped-link timing)."
    for model in $models; do
        echo
        echo "## $model"
        echo
        head -4 "$out/seeds/seed$first/$model.md" 2>/dev/null | sed -n 's/^- Run: /Run (seed '"$first"'): /p'
        echo
        /usr/bin/python3 "$root/scripts/study/train_summary.py" "$model" "${dirs[@]}" || failures=$((failures + 1))
        if [ -f "$out/seeds/seed$first/$model.png" ]; then
            cp "$out/seeds/seed$first/$model.png" "$out/$model.png"
            echo
            echo "Test accuracy per epoch, seed $first: ![$model]($model.png)"
        fi
    done
    if [ -f "$out/transformer/table.md" ]; then # written by scripts/study/train_gpt_study.sh
        echo
        echo "## The transformer"
        echo
        echo "A character-level transformer trained with AdamW (\`apps/apsmpi_train --model gpt\`, 5 seeds,"
        echo "\`scripts/study/train_gpt_study.sh\`): final validation loss minus FP32's of the same seed, mean ± s.e."
        echo "over the seeds; the model, the text, every column and the loss curves: \`transformer/README.md\`."
        echo
        cat "$out/transformer/table.md"
    fi
    if [ -f "$out/link.md" ]; then # written by hand from scripts/study/train_link.sh runs
        echo
        echo "## Time per epoch on a shaped link"
        echo
        cat "$out/link.md"
    fi
} >"$out/README.md.new" && mv "$out/README.md.new" "$out/README.md"
cat "$out/README.md"
[ $failures = 0 ] || { echo "train_study.sh: $failures step(s) failed" >&2; exit 1; }
