#!/bin/bash
# dist_complete.sh: every test, script and data file that Makefile.am, .ci/run and the test scripts name is in the tree it runs from (make distcheck: the release tarball), so that the tarball can run the whole suite and CI.
srcdir="$(cd "$(dirname "$0")/.." && pwd)"
. "$srcdir/tests/script_checks.sh"

# the paths under tests/, scripts/ and src/launcher/ that Makefile.am and .ci/run name
named=$(grep -ohE '(tests|scripts|src/launcher)/[A-Za-z0-9_./-]+\.(sh|py|in|F90|txt|sha256)' \
    "$srcdir/Makefile.am" "$srcdir/.ci/run" | sort -u)
# and the files each test script sources or runs beside itself ("$(dirname "$0")/NAME")
for t in $(echo "$named" | grep '^tests/.*\.sh$'); do
    [ -f "$srcdir/$t" ] || continue
    dir=$(dirname "$t")
    for f in $(sed -n 's|.*"\$(dirname "\$0")/\([A-Za-z0-9_./-]*\)".*|\1|p' "$srcdir/$t"); do
        named+=$'\n'"$dir/$f"
    done
done
missing=()
# (but tests/mpi/env.sh, which configure makes from env.sh.in, and placeholders in capitals)
for f in $(echo "$named" | sort -u | grep -vE '^tests/mpi/env\.sh$|/[A-Z]+$'); do
    [ -e "$srcdir/$f" ] || missing+=("$f")
done
check "the files named by Makefile.am, .ci/run and the tests are here${missing[*]:+ (missing: ${missing[*]})}" \
    test ${#missing[@]} -eq 0
finish
