#!/bin/bash
# train_cuda.sh: apsmpi_train_cuda trains on the GPU with the library off and on, and repeats its bits; skipped without CUDA or a GPU.
. "$top_builddir/tests/mpi/env.sh"
if [ -z "$TRAIN_CUDA" ]; then
    echo "SKIP: apsmpi was built without CUDA (no apps/apsmpi_train_cuda)"
    exit 77
fi
if ! mpi 1 no -- "$TRAIN_CUDA" --backend cuda --probe; then
    echo "SKIP: no usable GPU for --backend cuda:"
    grep '^apsmpi_train' "$TMPOUT/err" | sed 's/^/  | /'
    exit 77
fi
sed 's/^/  /' "$TMPOUT/out"
DEVICE_PLUGIN="$top_builddir/.libs/libapsmpi_cuda.so"

# 2 epochs on 6000 Fashion-MNIST images, 2 ranks sharing the node's GPUs: chance is 10%;
# every run must pass 50%. The last epoch line: "epoch 2/2  train loss L  test acc A%  ...".
last_epoch() { awk '/^epoch 2\/2/ { sub("%", "", $8); print $5, $8 }' "$TMPOUT/out"; }
learns() { last_epoch | awk '{ ok = ($2 + 0 > 50) } END { exit !ok }' && ! grep -q 'different parameters' "$TMPOUT/err"; }
args=(--backend cuda --epochs 2 --train-limit 6000 --test-limit 2000)
# The CSV rows without their timings: every epoch's loss (6 decimals) and accuracy.
results() { cut -d, -f1-6 "$TMPOUT/run.csv"; }
# repeats WANT ARGS...: the library-off run with ARGS gives the rows WANT again.
repeats() {
    local want=$1
    shift
    mpi 2 no -- "$TRAIN_CUDA" "$@" "${args[@]}" --csv "$TMPOUT/run.csv" && [ -n "$want" ] && [ "$(results)" = "$want" ]
}

for model in mlp cnn; do
    expect "$model on the GPU, plain MPI on page-locked host copies (--grad-sync host)" \
        mpi 2 no -- "$TRAIN_CUDA" --model $model --grad-sync host "${args[@]}" --csv "$TMPOUT/run.csv"
    expect "... learns (test accuracy above 50%: $(last_epoch))" learns
    expect "... the header names the backend and the grad-sync mode" \
        grep -q 'cuda backend (GPU .*grad-sync host: MPI gets page-locked host copies' "$TMPOUT/out"
    want=$(results)
    expect "... and the same seed repeats every epoch's loss and accuracy" repeats "$want" --model $model --grad-sync host
done

expect "mlp on the GPU, library on, e4m3 on host copies (--grad-sync host)" \
    mpi 2 yes APSMPI_STATS=1 APSMPI_MIN_BYTES=0 -- "$TRAIN_CUDA" --model mlp --grad-sync host "${args[@]}"
expect "... learns" learns
expect "... and its gradients were compressed" grep -q 'calls compressed [1-9]' "$TMPOUT/err"
if [ -e "$DEVICE_PLUGIN" ]; then
    expect "mlp, library on, e4m3 on the GPU buffers (--grad-sync device)" \
        mpi 2 yes APSMPI_STATS=1 APSMPI_MIN_BYTES=0 -- "$TRAIN_CUDA" --model mlp --grad-sync device "${args[@]}"
    expect "... learns" learns
    expect "... the header says MPI gets the GPU buffers" grep -q 'grad-sync device: MPI gets the GPU buffers' "$TMPOUT/out"
    expect "... and its gradients were compressed" grep -q 'calls compressed [1-9]' "$TMPOUT/err"
    expect "cnn, library on, 6-bit e3m2 on the GPU buffers, 100 kB buckets (--grad-sync device)" \
        mpi 2 yes APSMPI_STATS=1 APSMPI_FORMAT=e3m2 APSMPI_MIN_BYTES=0 -- "$TRAIN_CUDA" --model cnn \
        --bucket-bytes 100000 --grad-sync device "${args[@]}"
    expect "... learns" learns
    expect "... and its gradients were compressed" grep -q 'calls compressed [1-9]' "$TMPOUT/err"
else
    echo "skipped: the library on GPU buffers (--grad-sync device): no device plugin $DEVICE_PLUGIN"
fi
finish
