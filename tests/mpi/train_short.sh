#!/bin/bash
# train_short.sh: a short data-parallel training run learns with the library off and on, and the library is used.
. "$top_builddir/tests/mpi/env.sh"

# 2 epochs on 6000 Fashion-MNIST images, 2 ranks: chance is 10%; every run must pass 50%.
# The program's last epoch line: "epoch 2/2  train loss L  test acc A%  ...".
last_epoch() { awk '/^epoch 2\/2/ { sub("%", "", $8); print $5, $8 }' "$TMPOUT/out"; }
learns() { last_epoch | awk '{ ok = ($2 + 0 > 50) } END { exit !ok }'; }
args=(--epochs 2 --train-limit 6000 --test-limit 2000)
same_epoch_of() { mpi 2 no -- "$1" --model mlp "${args[@]}" && [ -n "$2" ] && [ "$(last_epoch)" = "$2" ]; }
same_epoch() { same_epoch_of "$TRAIN" "$1"; }

expect "MLP with plain MPI" mpi 2 no -- "$TRAIN" --model mlp "${args[@]}"
expect "... learns (test accuracy above 50%)" learns
plain=$(last_epoch)
expect "... and repeats: the same loss and accuracy ($plain)" same_epoch "$plain"
expect "MLP with e4m3 and APS" mpi 2 yes APSMPI_STATS=1 APSMPI_MIN_BYTES=0 -- "$TRAIN" --model mlp "${args[@]}"
expect "... learns" learns
expect "... and its gradients were compressed" grep -q 'calls compressed [1-9][0-9]*,.*(4.00x)' "$TMPOUT/err"
expect "CNN, gradients fused into 100 kB buckets, 6-bit e3m2" mpi 2 yes APSMPI_FORMAT=e3m2 APSMPI_MIN_BYTES=0 -- \
    "$TRAIN" --model cnn --bucket-bytes 100000 "${args[@]}"
expect "... learns" learns

# --backend cuda where it cannot run fails before reading any data, with one clear line on
# stderr and exit status 1: an error, not a crash.
clean_failure() { ! grep -qiE 'signal|segmentation|core dumped' "$TMPOUT/err"; }
expect "--probe: the cpu backend" mpi 1 no -- "$TRAIN" --probe
expect "... names it" grep -q 'cpu backend' "$TMPOUT/out"
expect_fail "--backend cuda in apsmpi_train (CPU only): this build has no CUDA backend" \
    "this build has no CUDA backend" mpi 2 no -- "$TRAIN" --backend cuda --model mlp "${args[@]}"
expect "... and ends cleanly" clean_failure
if [ -n "$TRAIN_CUDA" ]; then
    if mpi 1 no -- "$TRAIN_CUDA" --backend cuda --probe; then
        echo "ok: (apsmpi_train_cuda finds a GPU: --backend cuda is tested by train_cuda.sh)"
    else
        expect_fail "apsmpi_train_cuda --backend cuda without a usable GPU: says what cudaGetDeviceCount returned" \
            "no usable GPU: cudaGetDeviceCount returned" mpi 2 no -- "$TRAIN_CUDA" --backend cuda --model mlp "${args[@]}"
        expect "... and ends cleanly" clean_failure
    fi
    expect "apsmpi_train_cuda --backend cpu: the same loss and accuracy as apsmpi_train ($plain)" \
        same_epoch_of "$TRAIN_CUDA" "$plain"
fi
finish
