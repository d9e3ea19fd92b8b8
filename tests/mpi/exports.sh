#!/bin/bash
# exports.sh: libapsmpi.so exports exactly the symbols of tests/exports/libapsmpi.so.txt (the C MPI entry points) and libapsmpi.so.<MPI>.txt (the Fortran ones of that MPI), the CUDA plugin exactly its entry point.
. "$top_builddir/tests/mpi/env.sh"
LISTS="$(cd "$(dirname "$0")/../exports" && pwd)"

# exports_are LIBRARY LIST...: the library's defined dynamic symbols are the lines of the LISTs.
exports_are() {
    local lib=$1
    shift
    nm -D --defined-only "$lib" | awk '{print $NF}' | sort >"$TMPOUT/out"
    cat "$@" | sort | diff -u - "$TMPOUT/out" >"$TMPOUT/err"
}

# the C groups configure found in the MPI (build_config.h: src/entry/next_calls.h), and the
# Fortran entry points, which depend on the MPI (src/entry/fortran_entry_points.h)
lists=("$LISTS/libapsmpi.so.txt")
have() { grep -q "^#define APSMPI_HAVE_$1_REDUCTIONS 1" "$top_builddir/build_config.h"; }
have PERSISTENT && lists+=("$LISTS/libapsmpi.so.persistent.txt")
have LARGE_COUNT && lists+=("$LISTS/libapsmpi.so.large_count.txt")
have PERSISTENT && have LARGE_COUNT_PERSISTENT && lists+=("$LISTS/libapsmpi.so.large_count_persistent.txt")
[ -e "$LISTS/libapsmpi.so.$MPI_KIND.txt" ] && lists+=("$LISTS/libapsmpi.so.$MPI_KIND.txt")
expect "libapsmpi.so exports only the MPI entry points ($MPI_KIND: C and Fortran; ${#lists[@]} lists)" \
    exports_are "$APSMPI_LIB" "${lists[@]}"
CUDA_PLUGIN="$top_builddir/.libs/libapsmpi_cuda.so"
if [ -e "$CUDA_PLUGIN" ]; then
    expect "libapsmpi_cuda.so exports only its entry point" exports_are "$CUDA_PLUGIN" "$LISTS/libapsmpi_cuda.so.txt"
else
    echo "skip: libapsmpi_cuda.so not built (configure found no CUDA)"
fi
finish
