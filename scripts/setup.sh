#!/bin/bash
# setup.sh: installs what apsmpi needs on a fresh Debian machine (run as root) and builds it.
#   scripts/setup.sh [--no-build] [configure options...]
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/apt.sh

# Open MPI is the MPI of `make` here; MPICH is the second MPI that scripts/test.sh tests
# (Debian keeps Open MPI as the default mpicc/mpirun when both are installed); gfortran for
# the tests of the Fortran bindings; the training program's data: Fashion-MNIST, and the
# fortunes (English text, /usr/share/games/fortunes) of its transformer; mpi4py (built for
# Open MPI) for the test of a Python job's non-blocking calls (tests/mpi/nonblocking.sh);
# SimGrid for the network simulator (sim/, docs/simulator.md); SIMDe (header-only) for make check-avx512-emulated; PyTorch (Debian's 1.13, CPU) for the test
# of the DDP hook (tests/mpi/ddp_hook.sh).
packages=(build-essential autoconf automake libtool pkg-config libopenmpi-dev openmpi-bin
          libmpich-dev mpich gfortran
          libffi-dev libcmocka-dev libsimgrid-dev libsimde-dev clang-format iproute2 python3 python3-mpi4py python3-torch zlib1g-dev dataset-fashion-mnist
          fortunes)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    apt_install "${missing[@]}"
fi

if [ "${1:-}" = "--no-build" ]; then
    exit 0
fi
[ -x configure ] || autoreconf -fi
if [ ! -f Makefile ] || [ $# -gt 0 ]; then
    ./configure --quiet "$@"
fi
make -s -j"$(nproc)"
