#!/bin/bash
# mx_loops_ab.sh: the MX loops of one level (src/core/codec_mx_simd.c) of commit OLD against this tree's, in one process, runs alternating (mx_loops_ab.c); CSV on stdout, one row a format and operation.
# usage: scripts/bench/mx_loops_ab.sh OLD LEVEL(avx2|avx512) FORMATS [PAIRS] [ELEMENTS]
#
# For a core that another tenant's thread shares (such a tenant changes the speed of a loop by
# 10-30% over seconds, which two processes run one after the other see apart): each pair is a
# run of each build a few milliseconds apart, and the speed-up is the median over pairs of the
# old run's time over the new one's, with its quartiles (apps/bench_codec gives the ratios to
# memcpy). `identical` is 1 where both builds' sum, encode and decode gave the same bytes. Both builds
# are compiled with this tree's flags for the level, read from Makefile.am.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 3p "$0" >&2; exit 2; }
old=$1 level=$2 formats=$3 pairs=${4:-201} elements=${5:-4194304}
root=$(cd "$(dirname "$0")/../.." && pwd)
case $level in
avx2 | avx512) ;;
*) echo "mx_loops_ab.sh: LEVEL is avx2 or avx512" >&2; exit 2 ;;
esac
# the level's -m flags and the core's own (libapsmpi_codec_LEVEL_la_CFLAGS and
# libapsmpi_core_la_CFLAGS, without their $(...) parts), at the build's -O3
makefile_flags() { sed -n "s/^$1_CFLAGS = //p" "$root/Makefile.am" | sed 's/\$([A-Za-z_]*)//g'; }
flags="$(makefile_flags "libapsmpi_codec_${level}_la") $(makefile_flags libapsmpi_core_la)"
[ -n "${flags// /}" ] || { echo "mx_loops_ab.sh: no flags for $level in Makefile.am" >&2; exit 1; }
grep -qw "${level/512/512f}" /proc/cpuinfo || { echo "mx_loops_ab.sh: this CPU has no $level" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old"
git -C "$root" archive "$old" src/core | tar -x -C "$work/old"
compile() { # compile SRC_ROOT NAME: codec_mx_simd.c of SRC_ROOT, its tables renamed NAME
    gcc -O3 -pthread $flags -I"$1/src" -Dapsmpi_mx_loops_avx2="$2" -Dapsmpi_mx_loops_avx512="$2" \
        -c "$1/src/core/codec_mx_simd.c" -o "$work/$2.o"
}
compile "$work/old" loops_old
compile "$root" loops_new
gcc -O2 -I"$root/src" "$root/scripts/bench/mx_loops_ab.c" "$root/src/core/format.c" "$root/src/core/mx_format.c" \
    "$work/loops_old.o" "$work/loops_new.o" -lm -o "$work/ab" 2>"$work/link.err" ||
    { cat "$work/link.err" >&2; exit 1; }
"$work/ab" "$formats" "$pairs" "$elements"
