#!/bin/bash
# check_minimal_build.sh: the release tarball builds, compresses a preloaded call and installs the library with only MPI and libffi (no cmocka, apps, zlib or CUDA).
#   scripts/ci/check_minimal_build.sh [TARBALL]    (default: make dist's apsmpi-*.tar.gz, made if missing)
# Run by .ci/run after make distcheck. Checks that configure asks for neither cmocka nor zlib,
# that make check leaves out the cmocka and the apps' tests and says so in its one line (which
# scripts/test.sh's check would catch), that the library exports what it should and compresses
# a preloaded call, and that make install puts exactly the library and apsmpirun in place.
set -euo pipefail
cd "$(dirname "$0")/../.."
prog=check_minimal_build
fail() {
    echo "$prog: FAILED: $*"
    exit 1
}

. scripts/ci/release_tarball.sh
unpack_release "${1:-}"
chmod -R a-w "$src" # built out of tree, as a distribution would
mkdir "$work/build"
cd "$work/build"

"$src/configure" --quiet --without-cmocka --disable-apps --without-cuda --prefix="$work/inst" >configure.out 2>&1 ||
    { cat configure.out; fail "configure"; }
! grep -q "checking for gzopen" config.log || fail "configure looked for zlib with --disable-apps"
! grep -q "checking for cmocka$" config.log || fail "configure looked for cmocka with --without-cmocka"
make -s -j2 >make.out 2>&1 || { tail -40 make.out; fail "make"; }

# the suite configure chose: no cmocka test, no test of the apps; then, of it, the tests that
# show this build works (the whole suite runs in the full builds): the cmocka tests' one SKIP
# and its line, the exports, a preloaded call compressed
suite=$(make -s print-tests) || fail "make print-tests"
! echo " $suite " | grep -q ' tests/unit/test_' || fail "make check would run cmocka unit tests without cmocka"
! echo " $suite " | grep -q ' tests/mpi/train_' || fail "make check would run the training tests with --disable-apps"
echo " $suite " | grep -q ' tests/unit/cmocka_missing.sh ' || fail "make check has no test that says the cmocka tests are skipped"
make -j2 check TESTS='tests/unit/cmocka_missing.sh tests/mpi/exports.sh tests/mpi/preload_active.sh' >check.out 2>&1 ||
    { tail -60 check.out; fail "make check"; }
grep -q '^make check: the cmocka unit tests were SKIPPED' check.out || fail "make check did not say that the cmocka tests were skipped"
grep -q '^SKIP: tests/unit/cmocka_missing' test-suite.log || fail "no SKIP of the cmocka tests in test-suite.log (scripts/test.sh relies on it)"
grep -q '^PASS: tests/mpi/exports.sh' check.out || fail "the exports of the minimal build were not checked"
grep -q '^PASS: tests/mpi/preload_active.sh' check.out || fail "no preloaded call was compressed"

make -s install >install.out 2>&1 || { cat install.out; fail "make install"; }
installed=$(cd "$work/inst" && find . -type f | sort | tr '\n' ' ')
[ "$installed" = "./bin/apsmpirun ./lib/libapsmpi.la ./lib/libapsmpi.so ./share/apsmpi/python/apsmpi_ddp.py " ] ||
    fail "make install put '$installed', not exactly bin/apsmpirun, lib/libapsmpi.{so,la} and share/apsmpi/python/apsmpi_ddp.py (the DDP hook: a Python file, no build)"
"$work/inst/bin/apsmpirun" --help | grep -q "default: $work/inst/lib/libapsmpi.so" ||
    fail "the installed apsmpirun does not name the installed library"
echo "$prog: ok: $(basename "$tarball") builds, compresses a preloaded call and installs with MPI and libffi only"
