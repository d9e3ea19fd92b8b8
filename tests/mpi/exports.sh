#!/bin/bash
# exports.sh: libapsmpi.so exports exactly the symbols of tests/exports/libapsmpi.so.txt (the MPI entry points), the CUDA plugin exactly its entry point.
. "$top_builddir/tests/mpi/env.sh"
LISTS="$(cd "$(dirname "$0")/../exports" && pwd)"

# exports_are LIBRARY LIST: the library's defined dynamic symbols are the lines of LIST.
exports_are() {
    nm -D --defined-only "$1" | awk '{print $NF}' | sort >"$TMPOUT/out"
    sort "$2" | diff -u - "$TMPOUT/out" >"$TMPOUT/err"
}

expect "libapsmpi.so exports only the MPI entry points" exports_are "$APSMPI_LIB" "$LISTS/libapsmpi.so.txt"
CUDA_PLUGIN="$top_builddir/.libs/libapsmpi_cuda.so"
if [ -e "$CUDA_PLUGIN" ]; then
    expect "libapsmpi_cuda.so exports only its entry point" exports_are "$CUDA_PLUGIN" "$LISTS/libapsmpi_cuda.so.txt"
else
    echo "skip: libapsmpi_cuda.so not built (configure found no CUDA)"
fi
finish
