#!/bin/bash
# device_mock.sh: the device path on a mock GPU (tests/mpi/mock_device.c) on the CPU: same bits as host buffers.
. "$top_builddir/tests/mpi/env.sh"
DEVICE_PLUGIN="$top_builddir/tests/mpi/.libs/mock_device.so"
. "$(dirname "$0")/device_cases.sh"

# Calls apsmpi does not compress reach MPI with the job's device pointers, untouched. The
# mock's memory is opened (as a CUDA-aware MPI could read a GPU's) so that MPI can sum it.
for args in "--type double" "--mpi-op max" "--count 1000"; do
    expect "plain MPI: $args" with_checksum mpi 3 no -- "$CHECK" $args
    want=$(checksum)
    expect "device buffers passed through: $args" same_checksum "$want" mpi 3 yes MOCK_DEVICE_OPEN=1 \
        APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- "$CHECK" --device "$DEVICE_PLUGIN" $args
done
# On one node, by default, a device call goes to MPI uncompressed, through page-locked host
# copies (MPI cannot read GPU memory): the same bits as plain MPI on host buffers. The host
# copies are reduced out of place (input and result side by side), so the reference is MPI's
# out-of-place call: MPICH sums an in-place reduce-scatter in another order (other bits).
for args in "--count 150000" "--op reduce_scatter --in-place --count 150003"; do
    expect "plain MPI, out of place: $args" with_checksum mpi 3 no -- "$CHECK" ${args/--in-place /}
    want=$(checksum)
    expect "one node, by default: device buffers in fp32 through host copies: $args" same_checksum "$want" \
        mpi_default 3 yes APSMPI_STATS=1 APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- "$CHECK" --device "$DEVICE_PLUGIN" $args
done
# Without the open memory, the same MPI read of device memory crashes: the mock does catch
# host access to device memory (so the compressed cases above prove the library makes none).
expect "the mock catches a host read of device memory" not mpi 2 yes APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
    "$CHECK" --device "$DEVICE_PLUGIN" --type double
# the benchmark's device mode, both ways (on the mock its timings mean nothing; not with --disable-apps)
if [ -n "$BENCH" ]; then
    expect "benchmark: device buffers, library on" mpi 3 yes APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
        "$BENCH" --device "$DEVICE_PLUGIN" --min 64K --max 4M --step 8 --iters 2 --warmup 0 --tol 0.1 --require-preload libapsmpi
    expect "benchmark: device buffers, in place, reduce_scatter" mpi 3 yes APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
        "$BENCH" --device "$DEVICE_PLUGIN" --op reduce_scatter --in-place --min 4M --max 4M --iters 2 --warmup 0 --tol 0.1
    expect "benchmark: device buffers staged by the job, no library" mpi 3 no -- \
        "$BENCH" --device "$DEVICE_PLUGIN" --stage --in-place --min 64K --max 4M --step 8 --iters 2 --warmup 0
fi
# Failures of the device path on one rank (APSMPI_TEST_FAIL). Setting up the GPU or taking its
# memory fails before the agreement: the ranks agree to send that call in fp32, the next is
# compressed. A GPU operation fails during the call, when the other ranks may already have
# summed this rank's bad data: every rank returns the error (MPI_ERRORS_RETURN) and the next
# calls are right; with the default handler the job stops.
bound=$("$FUZZ" --bound e4m3 3)
dev_args=(--device "$DEVICE_PLUGIN" --count 300001)
for site in device_setup device_alloc; do
    expect "$site failing on rank 1: that call in fp32 on every rank, the next compressed" \
        mpi 3 yes APSMPI_STATS=1 APSMPI_TEST_FAIL=$site:1:1 APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
        "$CHECK" "${dev_args[@]}" --repeat 2 --tol "$bound"
    expect "... the ranks agreed on fp32 for one call" \
        grep -q "a rank lacks memory or its GPU for a 300001-element call: sent in fp32" "$TMPOUT/err"
    expect "... and compressed the other" grep -q "calls compressed 3," "$TMPOUT/err"
done
for pass in 1 4 9; do
    expect "GPU operation $pass failing on rank 1: the error returned on every rank, the next calls right" \
        mpi 3 yes APSMPI_TEST_FAIL=device_op:1:$pass APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
        "$CHECK" "${dev_args[@]}" --repeat 3 --errors-return --tol "$bound"
    expect "... the failed call said so on every rank" test "$(grep -c 'call 0 returned an error' "$TMPOUT/out")" = 3
    expect "... and the other ranks why" grep -q "a GPU operation of another rank failed" "$TMPOUT/err"
done
expect "the agreement failing on every rank, GPU buffers: the error returned, the GPU part ended, the next calls right" \
    mpi 3 yes 'APSMPI_TEST_FAIL=agree:*:1' APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
    "$CHECK" "${dev_args[@]}" --repeat 3 --errors-return --tol "$bound"
expect "... the failed call said so on every rank" test "$(grep -c 'call 0 returned an error' "$TMPOUT/out")" = 3
expect "a GPU operation failing on rank 2, fatal error handler: the job stops, no hang" \
    stops_not_hangs 3 yes APSMPI_TEST_FAIL=device_op:2:5 APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
    "$CHECK" "${dev_args[@]}" --repeat 2

# A thread's device state is released when the thread ends (a key destructor), through the GPU
# while MPI runs; a thread that ends after MPI_Finalize (PyTorch's autograd threads, stopped at
# the process's exit, when the CUDA runtime may be gone: every rank crashed so on an H200) gets
# no GPU operation (the mock stops the process on one: MOCK_DEVICE_NOT_AFTER_FINALIZE).
THREAD_EXIT="$top_builddir/tests/mpi/thread_exit_check"
expect "a thread with device state ends after MPI_Finalize: no GPU operation then" \
    mpi 2 yes APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" MOCK_DEVICE_NOT_AFTER_FINALIZE=1 -- "$THREAD_EXIT" "$DEVICE_PLUGIN"
expect "... it made compressed calls on device buffers" grep -q '^thread_exit_check: ok' "$TMPOUT/out"
expect "a thread with device state ends before MPI_Finalize: released through the GPU, no error" \
    mpi 2 yes APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" MOCK_DEVICE_NOT_AFTER_FINALIZE=1 APSMPI_STATS=1 -- \
    "$THREAD_EXIT" "$DEVICE_PLUGIN" --exit-before
expect "... its calls were compressed" grep -q 'calls compressed 4,' "$TMPOUT/err"


expect_fail "a wrong APSMPI_DEVICE_PLUGIN stops the job, naming it" "APSMPI_DEVICE_PLUGIN=/nonexistent/plugin.so: cannot load" \
    mpi 2 yes APSMPI_DEVICE_PLUGIN=/nonexistent/plugin.so -- "$CHECK" --count 100000
finish
