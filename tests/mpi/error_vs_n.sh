#!/bin/bash
# error_vs_n.sh: apps/error_vs_n measures what it says: exact for plain MPI, the format's rounding with the library.
. "$top_builddir/tests/mpi/env.sh"

PROG="$top_builddir/apps/error_vs_n"
field() { sed -n "s/.*data=$1 .* $2=\([^ ]*\).*/\1/p" "$TMPOUT/out"; }
# below X Y: X < Y, both numbers (a field missing from the output is not a number, and fails)
below() { awk -v x="$1" -v y="$2" 'BEGIN { num = "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$"; exit !(x ~ num && y ~ num && x + 0 < y + 0) }'; }

# Plain MPI on 3 ranks: normal data to float rounding, ones exactly 3 on every rank, one CSV row each.
expect "plain MPI runs" mpi 3 no -- "$PROG" --count 50000 --csv "$TMPOUT/e.csv" --label plain
expect "plain MPI: normal data to float rounding" below "$(field normal rel_l2)" 1e-6
expect "plain MPI: ones exact" grep -q 'data=ones .*rel_l2=0.0000e+00 max_abs=0.0000e+00 .*result=\[3, 3\]$' "$TMPOUT/out"
expect "plain MPI: a CSV row per data set" test "$(grep -c '^3,50000,[a-z]*,plain,' "$TMPOUT/e.csv")" = 2

# e3m2 through the library: the error of 2 mantissa bits (a few %), not more, not zero.
expect "e3m2 runs" mpi 2 yes APSMPI_FORMAT=e3m2 -- "$PROG" --count 50000 --data normal
expect "e3m2: an error above 0.1%" below 1e-3 "$(field normal rel_l2)"
expect "e3m2: an error below 20%" below "$(field normal rel_l2)" 0.2
expect "e3m2: the label names the format" grep -q 'label=e3m2/-' "$TMPOUT/out"

# A bad argument stops it with status 2.
expect "bad --data: status 2" not mpi 1 no -- "$PROG" --data gaussian
finish
