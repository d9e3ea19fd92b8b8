#!/bin/bash
# check_aarch64.sh: builds the core (formats, codec, APS, configuration) and its cmocka unit tests for aarch64 with Debian's cross compiler and runs them under qemu-user.
#   scripts/ci/check_aarch64.sh SRCDIR BUILDDIR "CORE SOURCES" "PORTABLE CODEC SOURCES" "TEST:SOURCES"...
# Called by `make check-aarch64` (Makefile.am passes its own source lists, so they are written
# once). Installs what is missing: gcc-aarch64-linux-gnu, qemu-user, and cmocka for arm64
# (Debian multiarch: dpkg --add-architecture arm64). The core is compiled as Makefile.am
# compiles it (no FMA contraction; the portable codec level with the vectoriser on, so the
# tests check the NEON code gcc makes of it). Exit status: 0 when every test passes.
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: $0 SRCDIR BUILDDIR CORE_SOURCES PORTABLE_SOURCES TEST:SOURCES..." >&2; exit 2; }
src=$1 build=$2 core=$3 portable=$4
shift 4
prog=check_aarch64
cross=aarch64-linux-gnu-gcc
# shellcheck source=scripts/ci/unit_runs.sh
. "$src/scripts/ci/unit_runs.sh"

# ---- tools ----
need=()
command -v "$cross" >/dev/null || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
deb_installed libcmocka-dev:arm64 || need+=(libcmocka-dev:arm64)
install_missing "$prog" "$src" "${need[@]}"

# ---- build ----
rm -rf "$build"
mkdir -p "$build/include" "$build/obj"
# what configure would find on a Debian aarch64 machine: no x86 levels, no CUDA
printf '/* build_config.h for the aarch64 check (scripts/ci/check_aarch64.sh) */\n' >"$build/build_config.h"
# cmocka's header alone (the rest of /usr/include is the host's)
ln -s /usr/include/cmocka.h "$build/include/cmocka.h"
cflags=(-O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -ffp-contract=off -I"$src/src" -I"$build" -I"$src/tests/unit")
objs=()
compile() { # SOURCE EXTRA_FLAGS...
    local s=$1 o
    shift
    o="$build/obj/$(echo "${s%.c}" | tr / _).o"
    "$cross" "${cflags[@]}" "$@" -c "$src/$s" -o "$o"
    objs+=("$o")
}
compile_core "$core" "$portable"
core_objs=("${objs[@]}")
tests=()
for spec in "$@"; do
    name=${spec%%:*} sources=${spec#*:}
    objs=()
    for s in $sources; do
        case $s in *.c) compile "$s" -I"$build/include" ;; esac
    done
    "$cross" -o "$build/$(basename "$name")" "${objs[@]}" "${core_objs[@]}" -lcmocka -lm
    tests+=("$(basename "$name")")
done
echo "$prog: built ${#tests[@]} unit tests for aarch64 ($("$cross" -dumpfullversion), $(file -b "$build/${tests[0]}" | cut -d, -f1-2))"

# ---- run ----
run_unit_tests "$prog" aarch64 "$build" qemu-aarch64 true "${tests[@]}"
