#!/bin/bash
# no_cuda_loaded.sh: a CPU-only job that preloads apsmpi (built with or without CUDA) loads no CUDA library.
. "$top_builddir/tests/mpi/env.sh"

# (its needs as readelf lists them: MPI's library among them, so that a library readelf
# cannot read does not pass as one that needs nothing)
needs_no_cuda() {
    readelf -d "$APSMPI_LIB" | grep NEEDED >"$TMPOUT/out" && grep -q 'libmpi' "$TMPOUT/out" && ! grep -qi cuda "$TMPOUT/out"
}
expect "libapsmpi.so itself needs no CUDA library" needs_no_cuda
expect "compressed calls, no CUDA library mapped (/proc/self/maps)" \
    mpi 2 yes APSMPI_STATS=1 -- "$CHECK" --count 2000000 --block 4096 --tol 0.21 --expect-inexact --maps-check
expect "... and the library did compress them" grep -q 'calls compressed [1-9]' "$TMPOUT/err"
expect "reduce_scatter too" mpi 3 yes -- "$CHECK" --op reduce_scatter --count 300000 --maps-check
finish
