#!/bin/bash
# device_mock.sh: the device path on a mock GPU (tests/mpi/mock_device.c) on the CPU: same bits as host buffers.
. "$top_builddir/tests/mpi/env.sh"
DEVICE_PLUGIN="$top_builddir/tests/mpi/.libs/mock_device.so"
. "$(dirname "$0")/device_cases.sh"

# Calls apsmpi does not compress reach MPI with the job's device pointers, untouched. The
# mock's memory is opened (as a CUDA-aware MPI could read a GPU's) so that MPI can sum it.
for args in "--type double" "--mpi-op max" "--count 1000"; do
    mpi 3 no -- "$CHECK" $args
    want=$(checksum)
    expect "device buffers passed through: $args" same_checksum "$want" mpi 3 yes MOCK_DEVICE_OPEN=1 \
        APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- "$CHECK" --device "$DEVICE_PLUGIN" $args
done
# On one node, by default, a device call goes to MPI uncompressed, through page-locked host
# copies (MPI cannot read GPU memory): the same bits as plain MPI on host buffers.
for args in "--count 150000" "--op reduce_scatter --in-place --count 150003"; do
    mpi 3 no -- "$CHECK" $args
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
expect_fail "a wrong APSMPI_DEVICE_PLUGIN stops the job, naming it" "APSMPI_DEVICE_PLUGIN=/nonexistent/plugin.so: cannot load" \
    mpi 2 yes APSMPI_DEVICE_PLUGIN=/nonexistent/plugin.so -- "$CHECK" --count 100000
finish
