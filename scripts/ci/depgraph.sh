#!/bin/bash
# depgraph.sh: the dependency graph of src/ (and wrappers/) from nm on the objects: each file -> the files whose symbols it uses; fails on a cycle or a layer break.
# Usage: scripts/ci/depgraph.sh [REVISION]   (default: the working tree; e.g. fb76bbc for an older commit)
# Each .c file is compiled alone with $CC (default mpicc); an edge a -> b means a.o has an
# undefined symbol that b.o defines. Also checked, from the #include lines: a file of layer
# src/L includes no header of a higher layer, and nothing in src/ includes ../wrappers/; and
# the algorithm interface (src/algo/algorithm.h) names no algorithm.
# Layers, lowest first: core state device call (feedback/ beside it, the same layer) algo entry
# (then wrappers/).
set -euo pipefail
CC=${CC:-mpicc}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [ $# -ge 1 ]; then
    git -C "$ROOT" archive "$1" src wrappers | tar -x -C "$WORK"
    TREE=$WORK
else
    TREE=$ROOT
fi
cd "$TREE"
FILES=$(find src wrappers -name '*.c' | sort)

mkdir -p "$WORK/obj"
for f in $FILES; do
    o="$WORK/obj/$(echo "$f" | tr / _).o"
    # build_config.h is in the build tree (make check sets top_builddir; VPATH builds need it)
    $CC -c -O0 -w $(pkg-config --cflags libffi 2>/dev/null) -Isrc -I. ${top_builddir:+-I"$top_builddir"} -o "$o" "$f"
    nm "$o" | awk -v f="$f" '$1 != "U" && $2 ~ /^[TDBRCGSV]$/ {print $3, f}' >>"$WORK/defs"
    nm "$o" | awk -v f="$f" '$1 == "U" {print f, $2}' >>"$WORK/uses"
done

# file -> files whose symbols it uses (symbols of no src/ file, such as MPI's, are left out)
awk 'NR == FNR {def[$1] = $2; next} ($2 in def) && def[$2] != $1 {print $1, def[$2]}' \
    "$WORK/defs" "$WORK/uses" | sort -u >"$WORK/edges"
for f in $FILES; do
    deps=$(awk -v f="$f" '$1 == f {printf " %s", $2}' "$WORK/edges")
    echo "$f ->${deps:- (nothing)}"
done

status=0
if ! tsort "$WORK/edges" >/dev/null 2>"$WORK/tsort"; then
    echo "CYCLE among:" $(grep -v 'input contains a loop' "$WORK/tsort" | sed 's/^tsort: //' | sort -u)
    status=1
fi

layer_rank() {
    case $1 in
    src/core/*) echo 0 ;; src/state/*) echo 1 ;; src/device/*) echo 2 ;; src/call/* | src/feedback/*) echo 3 ;;
    src/algo/*) echo 4 ;; src/entry/*) echo 5 ;; *) echo 6 ;;
    esac
}
for f in $(find src -name '*.[ch]' | sort); do
    own=$(layer_rank "$f")
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
        case $inc in
        *wrappers/*) echo "LAYER BREAK: $f includes $inc"; status=1 ;;
        */*) if [ "$(layer_rank "src/$inc")" -gt "$own" ]; then
                 echo "LAYER BREAK: $f includes $inc (a higher layer)"; status=1
             fi ;;
        esac
    done
done
# The algorithm interface names no algorithm: each one declares itself and the types of its
# own input and context in its own header, so that adding one leaves src/algo/algorithm.h as
# it is. The words of the algorithms' names (const apsmpi_algorithm apsmpi_NAME in
# src/algo/*.c; "one" and "path" are no algorithm's alone) are in no identifier of its code,
# and it includes no other algo/ header.
algo_words=$(sed -n 's/^const apsmpi_algorithm apsmpi_\([a-z0-9_]*\) .*/\1/p' src/algo/*.c | tr _ '\n' |
    grep -vx 'one\|path' | sort -u)
[ -n "$algo_words" ] || { echo "OPAQUE: found no algorithm in src/algo/*.c"; status=1; }
idents=$(gcc -fpreprocessed -dD -E -P -x c src/algo/algorithm.h 2>/dev/null | sed -E 's/"([^"\\]|\\.)*"/""/g' |
    grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u)
for w in $algo_words; do
    for id in $(echo "$idents" | grep -iE "(^|_)${w}s?(_|\$)"); do
        echo "OPAQUE BREAK: src/algo/algorithm.h names '$id', a word of the algorithm $w (its own header declares it)"
        status=1
    done
done
if grep -n '^#include "algo/' src/algo/algorithm.h; then
    echo "OPAQUE BREAK: src/algo/algorithm.h includes an algorithm's header"
    status=1
fi
[ $status -eq 0 ] && echo "no cycle; no layer includes a higher one; algo/algorithm.h names no algorithm"
exit $status
