#!/bin/bash
# device_gpu.sh: the device path on a real GPU (libapsmpi_cuda.so): same bits as host buffers; skipped without a GPU.
. "$top_builddir/tests/mpi/env.sh"
DEVICE_PLUGIN="$top_builddir/.libs/libapsmpi_cuda.so"
if [ ! -e "$DEVICE_PLUGIN" ]; then
    echo "SKIP: apsmpi was built without CUDA (no $DEVICE_PLUGIN)"
    exit 77
fi
"$CHECK" --device "$DEVICE_PLUGIN" --probe || exit $?
. "$(dirname "$0")/device_cases.sh"
finish
