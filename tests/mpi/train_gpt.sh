#!/bin/bash
# train_gpt.sh: the transformer of apsmpi_train learns with the library off and on (one fused bucket, one call per tensor), repeats its bits, sees the same examples at every rank count, and refuses what it cannot do in one line.
. "$top_builddir/tests/mpi/env.sh"

# A small transformer on Debian's fortunes (scripts/setup.sh installs them): 60 steps of 8
# sequences of 32 characters. The vocabulary has 98 characters: chance is ln 98 = 4.58
# nats; a model that learns anything is below 3.3 nats by then.
small=(--model gpt --layers 1 --d-model 32 --heads 2 --context 32 --global-batch 8 --val-windows 64)
args=("${small[@]}" --steps 60 --eval-every 30)
# The program's last evaluation line: "eval 2/2  step 60  train loss L  val loss V (...)".
last_val() { awk '/^eval 2\/2 / { print $10 }' "$TMPOUT/out"; }
learns() { last_val | awk '{ ok = ($1 + 0 > 0 && $1 + 0 < 3.3) } END { exit !ok }'; }
# The CSV rows without their timings (columns 7 and 8): every evaluation's losses and accuracy.
results() { cut -d, -f1-6,9,10 "$TMPOUT/run.csv"; }
repeats() {
    local want=$1
    shift
    mpi 2 no -- "$TRAIN" "${args[@]}" --csv "$TMPOUT/run.csv" && [ -n "$want" ] && [ "$(results)" = "$want" ]
}

expect "transformer, plain MPI, 2 ranks" mpi 2 no -- "$TRAIN" "${args[@]}" --csv "$TMPOUT/run.csv"
expect "... learns (validation loss below 3.3 nats: $(last_val))" learns
expect "... the header names the model, the split and the bucket" \
    grep -q 'gpt: 1 layers, d_model 32, 2 heads, context 32, vocabulary 98 (output projection not tied).* validation characters; 1 allreduce calls per step (one fused bucket)' "$TMPOUT/out"
expect "... the CSV has a row per evaluation, with the validation loss and the step" \
    awk -F, 'NR == 1 && $9 == "test_loss" && $10 == "step" { h = 1 } NR == 3 && $10 == 60 { r = 1 } END { exit !(h && r) }' "$TMPOUT/run.csv"
expect "... plain MPI zeroes no gradient value" grep -q 'zeroed by the allreduce .*: 0 of [1-9]' "$TMPOUT/out"
want=$(results)
expect "... and the same seed repeats every evaluation's losses and accuracy" repeats "$want"

# Every rank count draws the same windows for a step and divides them among its ranks: 8
# steps give the same training and validation loss at 1, 2 and 4 ranks (up to the rounding
# of the gradient's sum, far below the 6 decimals of the CSV file), while other windows (the
# ranks drawing each their own, or another seed) would move both in the second or third.
eight() { mpi "$1" no -- "$TRAIN" "${small[@]}" --steps 8 --lr 0.01 --warmup 1 "${@:2}" --csv "$TMPOUT/one.csv" \
    >/dev/null && awk -F, 'NR == 2 { print $5, $9 }' "$TMPOUT/one.csv"; }
l1=$(eight 1) l2=$(eight 2) l4=$(eight 4) s2=$(eight 2 --seed 2)
close() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); d1 = x[1] - y[1]; d2 = x[2] - y[2];
    exit !(x[1] > 0 && d1 * d1 < 1e-10 && d2 * d2 < 1e-10) }'; }
expect "1, 2 and 4 ranks train on the same examples (training and validation loss after 8 steps: $l1; $l2; $l4)" \
    eval 'close "$l1" "$l2" && close "$l1" "$l4"'
differs() { [ -n "$1" ] && [ -n "$2" ] && ! close "$1" "$2"; }
expect "... and another seed on others ($s2)" differs "$l2" "$s2"

expect "library on, e4m3 with APS, one fused bucket" mpi 2 yes APSMPI_STATS=1 APSMPI_MIN_BYTES=0 -- \
    "$TRAIN" "${args[@]}"
expect "... learns ($(last_val))" learns
expect "... its 60 gradient calls on each of the 2 ranks were compressed" grep -q 'calls compressed 120,.*(4.00x)' "$TMPOUT/err"
expect "... and the program counts the values the allreduce zeroed" grep -q 'zeroed by the allreduce' "$TMPOUT/out"
expect "library on, 6-bit e3m2, one allreduce per tensor (--bucket-bytes 0)" \
    mpi 2 yes APSMPI_STATS=1 APSMPI_MIN_BYTES=0 APSMPI_FORMAT=e3m2 -- "$TRAIN" "${args[@]}" --bucket-bytes 0
expect "... learns ($(last_val))" learns
expect "... 17 calls per step, each compressed" grep -q 'calls compressed 2040,' "$TMPOUT/err"
expect "... as the header says" grep -q '17 allreduce calls per step (one per tensor)' "$TMPOUT/out"

clean_failure() { ! grep -qiE 'signal|segmentation|core dumped' "$TMPOUT/err"; }
expect_fail "--backend cuda with the transformer: one line, it is not built for it" \
    "apsmpi_train: --model gpt runs on the host only: it is not built for --backend cuda" \
    mpi 2 no -- "$TRAIN" "${args[@]}" --backend cuda
expect "... and ends cleanly" clean_failure
expect_fail "an option of the image models (--epochs) with the transformer" \
    "--epochs is not an option of --model gpt" mpi 1 no -- "$TRAIN" --model gpt --epochs 2
expect_fail "heads that do not divide d_model" "--heads 3 does not divide --d-model 32" \
    mpi 1 no -- "$TRAIN" "${small[@]}" --heads 3
expect_fail "a global batch that does not divide among the ranks" "--global-batch 8 does not divide among 3 ranks" \
    mpi 3 no -- "$TRAIN" "${small[@]}"
mkdir "$TMPOUT/empty"
expect_fail "a directory without fortunes" "no fortune files there" \
    mpi 1 no -- "$TRAIN" "${small[@]}" --data "$TMPOUT/empty"
if [ -n "$TRAIN_CUDA" ]; then
    expect_fail "apsmpi_train_cuda --backend cuda with the transformer: the same line" \
        "apsmpi_train: --model gpt runs on the host only: it is not built for --backend cuda" \
        mpi 1 no -- "$TRAIN_CUDA" "${args[@]}" --backend cuda
fi
finish
