#!/bin/bash
# bench_codec_threads.sh: apps/bench_codec's --threads: 1..64 accepted (a row for each operation), anything else the usage line and status 2; --fastest gives the same rows.
: "${top_builddir:?run through make check}"
bench="$top_builddir/apps/bench_codec"
. "$(dirname "$0")/script_checks.sh"
for t in 1 3 64; do
    out=$("$bench" --csv --reps 1 --threads $t --level scalar --formats e4m3 200000) || out=
    check "--threads $t: rows for encode, decode, sum, encode-sr" \
        test "$(echo "$out" | grep -cE '^scalar,e4m3,(encode|decode|sum|encode-sr),200000,')" = 4
done
for bad in 0 65 x; do
    err=$("$bench" --threads $bad --reps 1 1000 2>&1 >/dev/null)
    rc=$?
    check "--threads $bad refused (status 2, usage)" test "$rc" = 2 -a -n "$(echo "$err" | grep -- '--threads 1..64')"
done
out=$("$bench" --csv --reps 3 --fastest --level scalar --formats e4m3 200000) || out=
check "--fastest: rows for encode, decode, sum, encode-sr" \
    test "$(echo "$out" | grep -cE '^scalar,e4m3,(encode|decode|sum|encode-sr),200000,')" = 4
check "the usage line names --fastest" test -n "$("$bench" --bogus 2>&1 | grep -- '--fastest')"
finish
