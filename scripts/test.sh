#!/bin/bash
# test.sh: sets up a fresh Debian machine and runs every test (make check) against Open MPI, then against MPICH.
# The Open MPI build is the one in the source tree (scripts/setup.sh); the MPICH build is a
# second, out-of-tree build (build-mpich/obj) of a clean copy of the sources
# (build-mpich/src: the files git tracks or would track), configured with
# --with-mpi=/usr/bin/mpicc.mpich. `scripts/test.sh --openmpi-only` skips MPICH.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
status=0

# summary NAME LOG: the suite's result as one plain line
summary() {
    awk -v name="$1" '/^# (PASS|XFAIL):/ {p += $3} /^# (FAIL|XPASS|ERROR):/ {f += $3} /^# SKIP:/ {s += $3}
         END {printf "tests (%s): %d passed, %d failed, %d skipped\n", name, p, f, s}' "$2"
}

make -j"$(nproc)" check || status=$?
logs=(test-suite.log)
[ "$status" -eq 0 ] || tail -80 test-suite.log 2>/dev/null || true
openmpi_summary=$(summary "Open MPI $(ompi_info --version 2>/dev/null | awk 'NR == 1 {print $NF}')" test-suite.log 2>/dev/null || true)

if [ "${1:-}" != "--openmpi-only" ]; then
    mpich_status=0
    rm -rf build-mpich
    logs+=(build-mpich/obj/test-suite.log)
    mkdir -p build-mpich/src build-mpich/obj
    git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t build-mpich/src
    (cd build-mpich/src && autoreconf -fi >/dev/null 2>&1)
    (cd build-mpich/obj && ../src/configure --quiet --with-mpi=/usr/bin/mpicc.mpich &&
        make -s -j"$(nproc)" && make -j"$(nproc)" check) || mpich_status=$?
    [ "$mpich_status" -eq 0 ] || tail -80 build-mpich/obj/test-suite.log 2>/dev/null || true
    [ "$mpich_status" -eq 0 ] || status=$mpich_status
    mpich_summary=$(summary "MPICH $(mpichversion 2>/dev/null | awk 'NR == 1 {print $NF}')" build-mpich/obj/test-suite.log 2>/dev/null || true)
fi
echo "$openmpi_summary"
[ -z "${mpich_summary:-}" ] || echo "$mpich_summary"
# setup.sh installs everything the tests need but a GPU: a test skipped for anything else
# (cmocka or a Fortran compiler not found, ...) would hide what it tests. Only the tests
# that need a GPU may skip, here and in the MPICH build.
gpu_only='^SKIP: tests/(gpu/test_kernels|gpu/test_train_backend|mpi/device_gpu\.sh|mpi/train_cuda\.sh|mpi/ddp_cuda\.sh)$'
for log in "${logs[@]}"; do
    # (the result lines "SKIP: NAME"; a test's own output in the log has spaces after "SKIP:")
    skipped=$(grep -E '^SKIP: [^ ]+$' "$log" | grep -Ev "$gpu_only" || true)
    if [ -n "$skipped" ]; then
        echo "test: FAILED: tests skipped in $log that need no GPU:"
        echo "$skipped" | sed 's/^/  /'
        status=1
    fi
done
exit "$status"
