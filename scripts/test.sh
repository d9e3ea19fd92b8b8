#!/bin/bash
# test.sh: sets up a fresh Debian machine and runs every test (unit tests and MPI tests) with make check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
make -j"$(nproc)" check || { cat test-suite.log 2>/dev/null | tail -80; exit 1; }
