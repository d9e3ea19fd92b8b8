#!/bin/bash
# mpmd.sh: an MPMD job (two programs on mpirun's line) where one context lacks the library ends with one line that says why, never silently nor in a hang; with the library in every context it runs.
. "$top_builddir/tests/mpi/env.sh"
MPI_TIMEOUT=40

# fails WORDS...: the launch does not succeed (Open MPI stops it; MPICH's ranks wait in their
# mismatched collectives until the timeout ends them)
fails() { ! MPI_TIMEOUT=20 launch "$@"; }

# the library in one context only: the first with Open MPI (which tells each rank its
# context's size), the second elsewhere (MPI_APPNUM 1: a rank of the first context cannot tell
# an MPMD job from MPICH's attributes alone)
with=(1 "LD_PRELOAD=$APSMPI_LIB" -- "$CHECK" --count 100000)
without=(1 -- "$CHECK" --count 100000)
if [ "$MPI_KIND" = openmpi ]; then
    app "${with[@]}"
    first=("${APP[@]}")
    app "${without[@]}"
    ctx=0
else
    app "${without[@]}"
    first=("${APP[@]}")
    app "${with[@]}"
    ctx=1
fi
expect "the library preloaded in context $ctx only: the job fails" fails "${first[@]}" : "${APP[@]}"
expect "... and says why" grep -q "an MPMD job (app context $ctx): every context must preload libapsmpi.so" "$TMPOUT/err"
app 1 "LD_PRELOAD=$APSMPI_LIB" APSMPI_STATS=1 -- "$CHECK" --count 100000
first=("${APP[@]}")
expect "the library in both contexts: the job runs" launch "${first[@]}" : "${APP[@]}"
expect "... compressed on both ranks" grep -q "calls compressed 2," "$TMPOUT/err"
finish
