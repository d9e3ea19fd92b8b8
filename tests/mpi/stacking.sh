#!/bin/bash
# stacking.sh: apsmpi preloaded beside another PMPI tool (count_tool.c, written as mpiP is): after it, the tool sees MPI_Init, MPI_Finalize and every call apsmpi does not compress; before it, apsmpi says in one line that it was hidden, never silently.
. "$top_builddir/tests/mpi/env.sh"
TOOL="$top_builddir/tests/mpi/.libs/count_tool.so"
TOOL_REDUCTIONS="$top_builddir/tests/mpi/.libs/count_tool_reductions.so"

expect "apsmpi, then the tool: runs" \
    mpi 2 no "LD_PRELOAD=$APSMPI_LIB:$TOOL" APSMPI_STATS=1 -- "$CHECK" --count 100000
expect "... apsmpi compressed the float sums" grep -q "calls compressed 2," "$TMPOUT/err"
# reduce_check's integer allreduces are not compressed: apsmpi hands them on to the tool
expect "... the tool saw MPI_Init, MPI_Finalize and the calls apsmpi passed through" \
    grep -Eq "count_tool: init 1, allreduce [1-9][0-9]*, iallreduce 0, finalize 1" "$TMPOUT/out"
expect "... and apsmpi said nothing of being hidden" sh -c "! grep -q 'hidden\|never reached\|comes before' '$TMPOUT/err'"

expect "the tool, then apsmpi: runs" \
    mpi 2 no "LD_PRELOAD=$TOOL:$APSMPI_LIB" APSMPI_STATS=1 -- "$CHECK" --count 100000
expect "... the tool's report" grep -Eq "count_tool: init 1, allreduce [1-9]" "$TMPOUT/out"
expect "... apsmpi says once that MPI_Init never reached it" \
    test "$(grep -c 'apsmpi: MPI_Init never reached libapsmpi.so (MPI_Init (in .*count_tool.so)' "$TMPOUT/err")" = 1
expect "... and compressed nothing (no statistics line)" sh -c "! grep -q 'apsmpi stats' '$TMPOUT/err'"

expect "a tool of the reductions only, then apsmpi: runs" \
    mpi 2 no "LD_PRELOAD=$TOOL_REDUCTIONS:$APSMPI_LIB" APSMPI_STATS=1 -- "$CHECK" --count 100000
expect "... apsmpi names the call it cannot see, at MPI_Finalize" \
    grep -q "WARN.*MPI_Allreduce (in .*count_tool_reductions.so) comes before libapsmpi.so's" "$TMPOUT/err"
expect "... said on rank 0 only" test "$(grep -c 'comes before libapsmpi.so' "$TMPOUT/err")" = 1
finish
