#!/bin/bash
# check_gpusim_tarball.sh: CI's one run of the GPU simulator: the release tarball built in place (unpacked, ./configure && make), then make check-gpusim there, whose simulator build takes the tarball's sources, not the objects of that build.
#   scripts/ci/check_gpusim_tarball.sh [TARBALL]    (default: make dist's apsmpi-*.tar.gz, made if missing)
# Needs the simulator kit (GPUSIM_DIR, default ../shared/gpusim beside this source tree) and
# the CUDA toolkit the project builds with. Runs the target's cover set (GPUSIM_SET=cover:
# every kernel, packed width, MX format and device step, both PTX flavours), so one run
# checks both the in-place build of a release and the CUDA code; make check-gpusim-full in a
# source tree runs every case. Run by .ci/run after make distcheck.
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

make check-gpusim GPUSIM_DIR="$kit" >gpusim.out 2>&1 ||
    { tail -60 gpusim.out; fail "make check-gpusim from the tarball built in place"; }
grep -q '^ok .*the library, plugin, kernels and GPU tests built for the simulator' gpusim.out ||
    fail "the project was not built for the simulator"
for part in 'test_kernels \[sim118 PTX\] test_block' 'test_kernels \[sim118 PTX\] .*mxfp4' \
    'device path.*\[sim118 PTX\]' 'tests/gpu/test_train_backend.*\[sim118 PTX\]'; do
    grep -q "^ok .*$part" gpusim.out || fail "no passed case matching '$part' in make check-gpusim's output"
done
sed -n '/^ok \|^check-gpusim/p' gpusim.out | sed "s/^/$prog: /"
echo "$prog: ok: $(basename "$tarball") built in place, then make check-gpusim built the project for the simulator from its sources and ran its cover set"
