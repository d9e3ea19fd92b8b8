#!/bin/bash
# check_avx512_emulated.sh: builds the codec's avx512 level for AVX2 with its AVX-512 intrinsics emulated (SIMDe) and runs the codec's unit tests on it, bit for bit against the scalar level, on a CPU without AVX-512.
#   scripts/ci/check_avx512_emulated.sh SRCDIR BUILDDIR "CORE SOURCES" "PORTABLE CODEC SOURCES" "AVX2 SOURCES" "AVX512 SOURCES" "TEST:SOURCES"...
# Called by `make check-avx512-emulated` (Makefile.am passes its own source lists, so they are
# written once; CC and CFLAGS: the configured compiler and flags, default gcc -g -O3). Installs
# SIMDe (libsimde-dev, header-only) when it is missing. The core is compiled as Makefile.am
# compiles it (no FMA contraction, the portable level vectorised, the avx2 level with -mavx2
# -mf16c -mfma), except the avx512 level: -DAPSMPI_EMULATE_AVX512 -mavx2 -mf16c -mfma instead of
# -mavx512f..., so codec_simd.c and codec_mx_simd.c take their VB 64 branches with
# src/core/avx512_emulated.h's intrinsics, and codec.c (the same macro, in this build's
# build_config.h) gives that level to any CPU with AVX2, F16C and FMA. The check fails if the
# level is not the emulated avx512 one (its symbols, no AVX-512 instruction in it), if a test
# does not run it, or if any test fails. Exit status: 0 when every test passes.
set -euo pipefail
[ $# -ge 7 ] || {
    echo "usage: $0 SRCDIR BUILDDIR CORE_SOURCES PORTABLE_SOURCES AVX2_SOURCES AVX512_SOURCES TEST:SOURCES..." >&2
    exit 2
}
src=$1 build=$2 core=$3 portable=$4 avx2=$5 avx512=$6
shift 6
prog=check_avx512_emulated
cc=${CC:-gcc}
read -r -a opt <<<"${CFLAGS:--g -O3}"
# shellcheck source=scripts/ci/unit_runs.sh
. "$src/scripts/ci/unit_runs.sh"

# ---- tools ----
[ "$(uname -m)" = x86_64 ] || { echo "$prog: for x86-64 only (this is $(uname -m))" >&2; exit 1; }
for flag in avx2 f16c fma; do
    grep -qw "$flag" /proc/cpuinfo || { echo "$prog: this CPU lacks $flag, which the emulated level is built for" >&2; exit 1; }
done
need=()
deb_installed libsimde-dev || need+=(libsimde-dev)
deb_installed libcmocka-dev || need+=(libcmocka-dev)
install_missing "$prog" "$src" "${need[@]}"

# ---- build ----
rm -rf "$build"
mkdir -p "$build/obj"
# what configure writes on x86-64, and the switch of codec.c's loops_of
printf '/* build_config.h for the emulated avx512 check (scripts/ci/check_avx512_emulated.sh) */\n#define APSMPI_CODEC_X86 1\n#define APSMPI_EMULATE_AVX512 1\n' >"$build/build_config.h"
cflags=("${opt[@]}" -Wall -Wextra -Wno-unused-parameter -Werror -ffp-contract=off -I"$src/src" -I"$build" -I"$src/tests/unit")
emulated=(-DAPSMPI_EMULATE_AVX512 -mavx2 -mf16c -mfma -Wno-psabi)
objs=() pids=()
# compile SOURCE EXTRA_FLAGS...: in the background, as many at once as there are CPUs (the two
# emulated objects take most of the time); finish waits for them all and fails if one failed
compile() {
    local s=$1 o
    shift
    o="$build/obj/$(echo "${s%.c}" | tr / _)$suffix.o"
    while [ "$(jobs -pr | wc -l)" -ge "$(nproc)" ]; do sleep 0.2; done
    "$cc" "${cflags[@]}" "$@" -c "$src/$s" -o "$o" &
    pids+=($!)
    objs+=("$o")
}
finish() {
    local p
    for p in "${pids[@]}"; do
        wait "$p"
    done
    pids=()
}
start=$SECONDS
# the emulated level first (the slowest to compile)
suffix=_avx512
for s in $avx512; do
    case $s in *.c) compile "$s" -fvisibility=hidden "${emulated[@]}" ;; esac
done
level_objs=("${objs[@]}")
suffix=
compile_core "$core" "$portable"
suffix=_avx2
for s in $avx2; do
    case $s in *.c) compile "$s" -fvisibility=hidden -mavx2 -mf16c -mfma ;; esac
done
suffix=
finish
core_objs=("${objs[@]}")

# the emulated level: the avx512 loops (the names only VB 64 gives), and no AVX-512
# instruction (zmm or mask registers, the EVEX-only xmm16-31/ymm16-31)
nm "${level_objs[@]}" >"$build/level.nm"
for sym in apsmpi_codec_loops_avx512 apsmpi_mx_loops_avx512; do
    grep -q " D $sym\$" "$build/level.nm" || { echo "$prog: FAIL: no $sym in the emulated level's objects" >&2; exit 1; }
done
evex=$(objdump -d --no-show-raw-insn "${level_objs[@]}" | grep -cE '%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])\b' || true)
[ "$evex" = 0 ] || { echo "$prog: FAIL: $evex AVX-512 instructions in the emulated level" >&2; exit 1; }

tests=()
for spec in "$@"; do
    name=${spec%%:*} sources=${spec#*:}
    objs=()
    for s in $sources; do
        case $s in *.c) compile "$s" ;; esac
    done
    finish
    "$cc" "${opt[@]}" -o "$build/$(basename "$name")" "${objs[@]}" "${core_objs[@]}" -lcmocka -lm -lpthread
    tests+=("$(basename "$name")")
done
simde=$(dpkg-query -W -f='${Version}' libsimde-dev)
echo "$prog: built the avx512 level with -mavx2 -mf16c -mfma and SIMDe $simde, and ${#tests[@]} unit tests ($("$cc" -dumpfullversion), $((SECONDS - start)) s)"
if grep -qw avx512f /proc/cpuinfo; then
    echo "$prog: (this CPU has AVX-512F: the emulated level runs here as on one without it)"
fi

# ---- run ----
# the avx512 level must have run: test_codec_levels skips a level only with a line that says so
# (its fixtures check that each codec is the level's), test_mx lists its levels; the others take
# the best level, which test_codec_levels checks is avx512 here
avx512_ran() {
    case $1 in
    test_codec_levels) ! grep -q 'SKIPPED \] level avx512' "$build/$1.log" ;;
    test_mx) grep -q '^levels: .*avx512' "$build/$1.log" ;;
    *) true ;;
    esac || {
        echo "FAIL: avx512-emulated $1: the avx512 level did not run"
        return 1
    }
}
run_unit_tests "$prog" avx512-emulated "$build" "" avx512_ran "${tests[@]}"
