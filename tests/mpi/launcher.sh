#!/bin/bash
# launcher.sh: apsmpirun (the build tree's) preloads the library and sets APSMPI_* on every rank; --help; bad options fail with one line.
. "$top_builddir/tests/mpi/env.sh"
APSMPIRUN="$top_builddir/apsmpirun"
MPIRUN_ARGS=(--oversubscribe --bind-to none --mca mpi_yield_when_idle 1)

# launch ARGS...: runs apsmpirun; stdout to $TMPOUT/out, stderr to $TMPOUT/err
launch() { timeout 120 "$APSMPIRUN" "$@" >"$TMPOUT/out" 2>"$TMPOUT/err"; }
# one_line_error PATTERN ARGS...: apsmpirun fails with status 2 and exactly one line, matching PATTERN
one_line_error() {
    local pattern=$1 rc=0
    shift
    launch "$@" || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$TMPOUT/err")" = 1 ] && grep -q -- "$pattern" "$TMPOUT/err" && [ ! -s "$TMPOUT/out" ]
}

expect "--help says how to use it" launch --help
expect "... starting with its usage line" grep -q '^usage: apsmpirun \[options\] -- MPIRUN' "$TMPOUT/out"

# From the build tree it preloads the build tree's library by itself. (One machine is one
# node, which the library leaves to MPI unless APSMPI_INTRANODE=compress.)
expect "a job under apsmpirun is compressed in the format given" \
    launch --format fp16 --stats --set APSMPI_INTRANODE=compress -- "$MPIRUN" -np 2 "${MPIRUN_ARGS[@]}" "$CHECK" --count 200000 --tol 0.2 --expect-inexact
expect "... on each of 2 ranks, at 2x" grep -q 'calls compressed 2,.*(2.00x)' "$TMPOUT/err"
expect "... the statistics name the format" grep -q 'format=fp16 scaling=block' "$TMPOUT/err"
expect "--set and --lib: any variable, the library named" \
    launch --lib "$APSMPI_LIB" --set APSMPI_SCALING=aps --stats -- "$MPIRUN" -np 2 "${MPIRUN_ARGS[@]}" \
    "$CHECK" --count 200000 --tol 0.2 --expect-inexact
expect "... the statistics name the setting" grep -q 'format=e4m3 scaling=aps' "$TMPOUT/err"
expect_fail "a bad value reaches every rank and stops the job at MPI_Init" "APSMPI_FORMAT" \
    launch --format e9m9 -- "$MPIRUN" -np 2 "${MPIRUN_ARGS[@]}" "$CHECK" --count 200000

# How each launcher gets the variables: Open MPI (found by its --version) -x, MPICH -genv.
want_openmpi="$MPIRUN
-x
LD_PRELOAD=$APSMPI_LIB
-x
APSMPI_FORMAT=e5m2
-x
APSMPI_STATS=1
-np
2
prog"
want_mpich="mpiexec
-genv
LD_PRELOAD
$APSMPI_LIB
-genv
APSMPI_FORMAT
e5m2
-genv
APSMPI_STATS
1
-n
2
prog"
expect "Open MPI's mpirun gets -x VAR=VALUE after its name" \
    sh -c "LD_PRELOAD= '$APSMPIRUN' --lib '$APSMPI_LIB' --dry-run --format e5m2 --stats -- '$MPIRUN' -np 2 prog >'$TMPOUT/out'"
expect "... in this order" test "$(cat "$TMPOUT/out")" = "$want_openmpi"
expect "MPICH's mpiexec gets -genv VAR VALUE" \
    sh -c "LD_PRELOAD= '$APSMPIRUN' --lib '$APSMPI_LIB' --launcher mpich --dry-run --format e5m2 --stats -- mpiexec -n 2 prog >'$TMPOUT/out'"
expect "... in this order" test "$(cat "$TMPOUT/out")" = "$want_mpich"

# Mistakes: one line each, status 2, nothing started.
expect "an unknown option" one_line_error "unknown option '--fromat'" --fromat e4m3 -- "$MPIRUN" -np 2 "$CHECK"
expect "an option without its value" one_line_error "--format needs a value" --format
expect "no command" one_line_error "no command after --" --stats --
expect "--set without =" one_line_error "--set needs VAR=VALUE" --set APSMPI_FORMAT -- "$MPIRUN" -np 2 "$CHECK"
expect "an unknown launcher" one_line_error "--launcher must be openmpi or mpich" --launcher lam -- "$MPIRUN" "$CHECK"
expect "a launcher it cannot recognise" one_line_error "give --launcher openmpi|mpich" -- true "$CHECK"
expect "a library that is not there" one_line_error "cannot read the library" --lib /nonexistent/libapsmpi.so -- "$MPIRUN" "$CHECK"
finish
