#!/bin/bash
# unit_runs.sh: sourced by check_aarch64.sh and check_avx512_emulated.sh: installs what they lack, compiles the core as Makefile.am does, runs unit tests built for another target (PASS or FAIL per test with its seconds, the levels they skipped, the count).

# deb_installed PACKAGE: dpkg has PACKAGE (NAME or NAME:ARCH) installed
deb_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# install_missing PROG SRCDIR PACKAGE...: installs the Debian packages (none: nothing to do)
# with SRCDIR's scripts/apt.sh, adding first the foreign architecture of any NAME:ARCH; not
# root: says what is missing and returns 1
install_missing() {
    local prog=$1 src=$2 p
    shift 2
    [ $# -gt 0 ] || return 0
    [ "$(id -u)" = 0 ] || {
        echo "$prog: missing $* (run as root to install them)" >&2
        return 1
    }
    echo "$prog: installing $*"
    for p in "$@"; do
        case $p in *:*) dpkg --print-foreign-architectures | grep -qx "${p#*:}" || dpkg --add-architecture "${p#*:}" ;; esac
    done
    # shellcheck source=scripts/apt.sh
    . "$src/scripts/apt.sh"
    apt_install "$@" >/dev/null
}

# compile_core CORE_SOURCES PORTABLE_SOURCES: the core's .c files as Makefile.am compiles them
# (hidden symbols; the portable codec level with the vectoriser on), through the sourcing
# script's own compile SOURCE EXTRA_FLAGS...
compile_core() {
    local s
    for s in $1; do
        case $s in *.c) compile "$s" -fvisibility=hidden ;; esac
    done
    for s in $2; do
        case $s in *.c) compile "$s" -fvisibility=hidden -ftree-vectorize -fvect-cost-model=dynamic ;; esac
    done
}

# run_unit_tests PROG LABEL BUILD RUNNER CHECK TEST...: runs each TEST in BUILD (its output in
# BUILD/TEST.log), prefixed by RUNNER (empty, or an emulator such as qemu-aarch64); after a test
# passes, CHECK TEST (a function, or true) must succeed too, or it says why and the test fails.
# Returns 0 when every test passed.
run_unit_tests() {
    local prog=$1 label=$2 build=$3 runner=$4 check=$5
    shift 5
    local failed=0 t start
    for t in "$@"; do
        start=$SECONDS
        # shellcheck disable=SC2086 # RUNNER is empty or one word
        if (cd "$build" && timeout 1800 $runner "./$t" >"$t.log" 2>&1); then
            if "$check" "$t"; then
                echo "PASS: $label $t ($((SECONDS - start)) s)"
            else
                failed=$((failed + 1))
            fi
        else
            echo "FAIL: $label $t ($((SECONDS - start)) s)"
            tail -30 "$build/$t.log"
            failed=$((failed + 1))
        fi
    done
    grep -h "SKIPPED \] level" "$build"/*.log | sed "s/^/$prog: /" || true
    echo "$prog: $(($# - failed)) passed, $failed failed"
    [ "$failed" = 0 ]
}
