#!/bin/bash
# check_gpusim_tarball.sh: make check-gpusim works from the release tarball built in place (unpacked, ./configure && make, then make check-gpusim): the project's simulator build takes the tarball's sources, not the objects of that build.
#   scripts/ci/check_gpusim_tarball.sh [TARBALL]    (default: make dist's apsmpi-*.tar.gz, made if missing)
# Needs the simulator kit (GPUSIM_DIR, default ../shared/gpusim beside this source tree) and
# the CUDA toolkit the project builds with. Runs one part of the target, the training
# backend's kernels on nvcc 11.8's PTX: enough to show that the project built for the
# simulator links and runs. Run by .ci/run after make distcheck.
set -euo pipefail
cd "$(dirname "$0")/../.."
prog=check_gpusim_tarball
fail() {
    echo "$prog: FAILED: $*"
    exit 1
}
kit=$(realpath -m "${GPUSIM_DIR:-$PWD/../shared/gpusim}")

. scripts/ci/release_tarball.sh
unpack_release "${1:-}"
cd "$src"
[ -f MANIFEST ] || fail "$(basename "$tarball") has no MANIFEST (make dist writes it)"

# as a user of the release would: configure and build in place, with CUDA
./configure --quiet >configure.out 2>&1 || { tail -20 configure.out; fail "configure"; }
grep -q '^#define HAVE_CUDA 1' build_config.h ||
    fail "configure found no CUDA: the in-place build would have no CUDA objects to leave behind"
make -s -j"$(nproc)" >make.out 2>&1 || { tail -40 make.out; fail "make"; }
ls kernels/*.o >/dev/null 2>&1 || fail "the in-place build made no CUDA objects"

make check-gpusim GPUSIM_DIR="$kit" GPUSIM_FLAVOURS=sim118 GPUSIM_PARTS=train >gpusim.out 2>&1 ||
    { tail -40 gpusim.out; fail "make check-gpusim from the tarball built in place"; }
grep -q '^ok .*the library, plugin, kernels and GPU tests built for the simulator' gpusim.out ||
    fail "the project was not built for the simulator"
grep -q '^ok .*tests/gpu/test_train_backend' gpusim.out || fail "the training backend's kernels did not run"
sed -n '/^ok /p' gpusim.out | sed "s/^/$prog: /"
echo "$prog: ok: $(basename "$tarball") built in place, then make check-gpusim built the project for the simulator from its sources and ran it"
