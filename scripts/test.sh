#!/bin/bash
# test.sh: sets up a fresh Debian machine and runs every test (unit tests and MPI tests) with make check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
status=0
make -j"$(nproc)" check || status=$?
[ "$status" -eq 0 ] || tail -80 test-suite.log 2>/dev/null || true
# the suite's result as one plain line
awk '/^# (PASS|XFAIL):/ {p += $3} /^# (FAIL|XPASS|ERROR):/ {f += $3} /^# SKIP:/ {s += $3}
     END {printf "tests: %d passed, %d failed, %d skipped\n", p, f, s}' test-suite.log
# the unit tests need cmocka, which setup.sh installs: never let them be skipped here
if grep -q '^SKIP: tests/unit/cmocka_missing' test-suite.log; then
    echo "test: FAILED: the cmocka unit tests were skipped (configure found no cmocka)"
    exit 1
fi
exit "$status"
