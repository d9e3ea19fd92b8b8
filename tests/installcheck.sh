#!/bin/bash
# installcheck.sh (make installcheck, run by make distcheck): the installed launcher and library run a job; the library looks for the CUDA plugin where it is installed.
# Needs from make: top_builddir, bindir, libdir, pkglibdir, have_cuda (yes|no); DESTDIR as given.
. "$top_builddir/tests/mpi/env.sh"
: "${bindir:?} ${libdir:?} ${pkglibdir:?} ${have_cuda:?}"
RUN="${DESTDIR:-}$bindir/apsmpirun"
LIB="${DESTDIR:-}$libdir/libapsmpi.so"
PLUGIN="${DESTDIR:-}$pkglibdir/libapsmpi_cuda.so"

expect "apsmpirun and libapsmpi.so are installed" test -x "$RUN" -a -f "$LIB"
expect "the installed apsmpirun preloads the installed library by default" \
    sh -c "'$RUN' --help | grep -qF 'default: $libdir/libapsmpi.so'"
# installed ARGS...: runs the installed apsmpirun; stdout to $TMPOUT/out, stderr to $TMPOUT/err
installed() { timeout 120 "$RUN" "$@" >"$TMPOUT/out" 2>"$TMPOUT/err"; }
# (its 2 ranks share one node, which the library hands to MPI unless told to compress there)
expect "a job under the installed launcher and library is compressed" \
    installed --lib "$LIB" --stats --set APSMPI_INTRANODE=compress -- "$MPIRUN" -np 2 --oversubscribe --bind-to none \
    --mca mpi_yield_when_idle 1 "$CHECK" --count 200000 --tol 0.2 --expect-inexact
expect "... on each of 2 ranks" grep -q 'calls compressed 2,' "$TMPOUT/err"
expect "the installed library looks for the CUDA plugin in $pkglibdir" grep -qF "$pkglibdir/libapsmpi_cuda.so" "$LIB"
if [ "$have_cuda" = yes ]; then
    expect "the CUDA plugin is installed there" test -f "$PLUGIN"
    expect "... and not in $libdir" test ! -e "${DESTDIR:-}$libdir/libapsmpi_cuda.so"
else
    expect "no CUDA plugin without CUDA" test ! -e "$PLUGIN"
fi
finish
