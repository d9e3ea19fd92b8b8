#!/bin/bash
# preload_active.sh: proves that the preloaded library is really loaded and really compresses.
. "$top_builddir/tests/mpi/env.sh"

test -r "$APSMPI_LIB" || { echo "FAILED: $APSMPI_LIB was not built"; exit 1; }

# Without the library the sum is exact to float rounding, and no apsmpi line appears.
expect "plain MPI: exact, no apsmpi output" mpi 2 no -- "$CHECK" --count 200000 --tol 1e-6
expect "plain MPI: no apsmpi line" sh -c "! grep -q apsmpi '$TMPOUT/err'"

# With it, the same call comes back rounded to e4m3, and the statistics name the call.
expect "preloaded: the result is inexact" mpi 2 yes APSMPI_STATS=1 -- "$CHECK" --count 200000 --tol 0.2 --expect-inexact
expect "preloaded: one call on each of 2 ranks compressed at 4x" \
    grep -q 'calls compressed 2, passed through [0-9]*,.*bytes 1600000 -> [0-9]* ([0-9.]*x; codes 400000 (4.00x)' "$TMPOUT/err"
expect "preloaded: the statistics name the format" grep -q 'format=e4m3 scaling=block' "$TMPOUT/err"
finish
