#!/bin/bash
# mpi_matrix.sh: builds libapsmpi.so against each MPI of the matrix (Debian's, PyPI's Open MPI 5, MPICH 5, Intel MPI, MPI 5's ABI) and runs tests/mpi/matrix_smoke.c's checks under it.
#   scripts/ci/mpi_matrix.sh [--mpis "NAME..."] [--ranks N] [--csv FILE] [--dir DIR] [--timeout S] [--python yes|no]
# NAME: debian-openmpi debian-mpich openmpi5 mpich5 impi abi (default: all; scripts/ci/matrix_mpis.sh
# says what each is). Each check runs once without the library (the MPI's own behaviour) and
# once with it preloaded and compressing every float sum (APSMPI_INTRANODE=compress,
# APSMPI_MIN_BYTES=0, APSMPI_FORMAT=fp16: exact for the program's small integers, so every
# result is compared bit for bit), and must give the right results and the statistics line
# with the calls the program expects compressed and passed through. One CSV row per check:
#   suite,test,ranks,MPI,result,reason   (result: pass, fail, n/a)
# n/a: the MPI lacks the form (MPI_Allreduce_c, MPI_Allreduce_init), or the check fails
# without the library too (the MPI's own defect). Exit status 1 if any row is fail.
# --python yes (default): also the Python jobs of tests/mpi/python_check.py (mpi4py 4's
# Allreduce/Iallreduce, mpi4jax's allreduce eager and under jax.jit), the same way, in each
# MPI's Python environment (matrix_mpis.sh's install_python: pip's jax, mpi4py 4.1.2, mpi4jax
# built with the MPI's mpicc; the default formats' bound, fp16 exact for its integers).
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
. scripts/ci/matrix_mpis.sh

mpis=$MATRIX_ALL_MPIS ranks=3 csv="" dir=$top/build-matrix limit=40 python=yes
matrix_options "$0 [--mpis \"NAME...\"] [--ranks N] [--csv FILE] [--dir DIR] [--timeout S] [--python yes|no]" \
    --mpis=mpis --ranks=ranks --csv=csv --dir=dir --timeout=limit --python=python -- "$@"
CHECKS="blocking init_thread nonblocking array_copy persistent mixed_cancel mixed_persistent comm_free start_order
        large_count large_count_persistent"
matrix_csv_start mpi_matrix.csv
failures=0

# with_library CHECK LIMIT OUT RESULTS -- COMMAND...: COMMAND under the library (fp16, every call
# compressed) into OUT, and CHECK's row: pass when it exits 0 and the statistics line counts the
# calls the program says it expects compressed and passed through (RESULTS then ends the reason;
# PY_DETAIL in it: the MPI library the program names and how its mpi4py was made)
with_library() {
    local check=$1 lim=$2 out=$3 results=$4 rc expect stats detail
    shift 5
    mpi_launch "$ranks" "$lim" "LD_PRELOAD=$lib" APSMPI_STATS=1 APSMPI_INTRANODE=compress APSMPI_MIN_BYTES=0 \
        APSMPI_FORMAT=fp16 -- "$@" >"$out" 2>&1
    rc=$?
    expect=$(sed -n 's/.*: ok: expect compressed \([0-9]*\) passed \([0-9]*\)$/\1 \2/p' "$out" | head -1)
    stats=$(sed -n 's/.*calls compressed \([0-9]*\), passed through \([0-9]*\),.*/\1 \2/p' "$out" | head -1)
    detail="$(sed -n 's/.*: MPI library: //p' "$out" | head -1 | tr -d ',' | tr -s '\t ' ' '); mpi4py's ${MPI4PY_HOW:-}"
    results=${results/PY_DETAIL/$detail}
    if [ "$rc" -eq 124 ]; then
        row "$check" fail "hangs with apsmpi (killed after $lim s; without it: ok)"
    elif [ "$rc" -ne 0 ] || [ -z "$expect" ]; then
        row "$check" fail "exit $rc with apsmpi: $(first_error "$out")"
    elif [ -z "$stats" ]; then
        row "$check" fail "right results but no apsmpi statistics line (the library's MPI_Init or MPI_Finalize not run)"
    elif [ "$stats" != "$expect" ]; then
        row "$check" fail "right results; calls compressed ${stats% *}, passed through ${stats#* } (expected ${expect% *}, ${expect#* })"
    else
        row "$check" pass "compressed ${stats% *}, passed through ${stats#* }, $results"
    fi
}

row() { # TEST RESULT REASON
    echo "matrix_smoke,$1,$ranks,$name,$2,\"${3//\"/\'}\"" >>"$csv"
    printf '%-16s %-24s %-5s %s\n' "$name" "$1" "$2" "$3"
    [ "$2" != fail ] || failures=$((failures + 1))
}

# plain_ok CHECK RC LIMIT OUT: the check's run without the library (status RC, output OUT) and
# the library's build for this MPI both allow a run with it; else the row says why (n/a: it fails
# without apsmpi too; fail: the library did not build) and it returns 1.
plain_ok() {
    local check=$1 rc=$2 limit=$3 out=$4 why
    if [ "$rc" -ne 0 ]; then
        why=$( [ "$rc" -eq 124 ] && echo "hangs (${limit} s)" || echo "exit $rc: $(first_error "$out")")
        row "$check" n/a "fails without apsmpi too: $why"
        return 1
    fi
    if [ "${built[$MPI_BUILD]}" != ok ]; then
        row "$check" fail "${built[$MPI_BUILD]}"
        return 1
    fi
}

install_mpis $mpis || exit 1
matrix_sources "$dir"
declare -A built=()
for name in $mpis; do
    mpi_select "$name" || exit 1
    if [ -z "${built[$MPI_BUILD]:-}" ]; then
        start=$(date +%s)
        if matrix_build "$dir" "$MPI_BUILD"; then
            built[$MPI_BUILD]=ok
        else
            built[$MPI_BUILD]="library build failed: $(grep -m1 -i 'error' "$dir/obj-$MPI_BUILD/build.log" | cut -c1-140)"
        fi
        echo "build against $MPI_BUILD: ${built[$MPI_BUILD]} ($(($(date +%s) - start)) s)"
        # the library's own test of its exported symbols (tests/mpi/exports.sh: the C entry
        # points, and the Fortran ones of an MPI that has them), nothing else built for it
        if [ "${built[$MPI_BUILD]}" = ok ]; then
            if make -C "$dir/obj-$MPI_BUILD" check TESTS=tests/mpi/exports.sh check_PROGRAMS= check_LTLIBRARIES= \
                check_SCRIPTS= >"$dir/obj-$MPI_BUILD/exports.out" 2>&1; then
                row exports pass "exports only the entry points of tests/exports/ ($(sed -n 's/^MPI_KIND="\(.*\)"/\1/p' "$dir/obj-$MPI_BUILD/tests/mpi/env.sh"))"
            else
                kind=$(sed -n 's/^MPI_KIND="\(.*\)"/\1/p' "$dir/obj-$MPI_BUILD/tests/mpi/env.sh")
                lists=(tests/exports/libapsmpi.so.txt)
                [ -e "tests/exports/libapsmpi.so.$kind.txt" ] && lists+=("tests/exports/libapsmpi.so.$kind.txt")
                extra=$(comm -13 <(cat "${lists[@]}" | sort) <(nm -D --defined-only "$dir/obj-$MPI_BUILD/.libs/libapsmpi.so" |
                    awk '{print $NF}' | sort) | tr '\n' ' ')
                missing=$(comm -23 <(cat "${lists[@]}" | sort) <(nm -D --defined-only "$dir/obj-$MPI_BUILD/.libs/libapsmpi.so" |
                    awk '{print $NF}' | sort) | tr '\n' ' ')
                row exports fail "tests/mpi/exports.sh ($kind): exported beyond its lists: ${extra:-none}; missing: ${missing:-none}"
            fi
        else
            row exports fail "${built[$MPI_BUILD]}"
        fi
    fi
    lib=$dir/obj-$MPI_BUILD/.libs/libapsmpi.so
    smoke=$dir/matrix_smoke-$name
    # shellcheck disable=SC2046  # the flags are words
    if ! "$MPI_CC" -O1 -Wall $(mpi_form_flags) -o "$smoke" tests/mpi/matrix_smoke.c >"$dir/smoke-$name.log" 2>&1; then
        for check in $CHECKS; do row "$check" fail "the smoke program does not compile: $(head -1 "$dir/smoke-$name.log")"; done
        continue
    fi
    for check in $CHECKS; do
        out=$dir/run-$name-$check
        mpi_launch "$ranks" "$limit" -- "$smoke" "$check" >"$out.plain" 2>&1
        rc=$?
        if [ "$rc" -eq 77 ]; then
            row "$check" n/a "$(sed -n 's/.*not available: //p' "$out.plain" | head -1)"
            continue
        fi
        plain_ok "$check" "$rc" "$limit" "$out.plain" || continue
        with_library "$check" "$limit" "$out.lib" "results exact" -- "$smoke" "$check"
    done
    [ "$python" = yes ] || continue
    # the Python jobs: the same run without and with the library (jax's start is slow: 3x the limit)
    py_installed=yes
    install_python "$name" || py_installed=no
    for check in mpi4py mpi4jax; do
        if [ -z "$MPI_PYTHON" ]; then # an install that failed is a failure; an MPI without them n/a
            row "$check" "$( [ "$py_installed" = yes ] && echo n/a || echo fail)" "$MPI_PYTHON_WHY"
            continue
        fi
        out=$dir/run-$name-$check
        mpi_launch "$ranks" $((3 * limit)) -- "$MPI_PYTHON" tests/mpi/python_check.py "$check" >"$out.plain" 2>&1
        plain_ok "$check" $? $((3 * limit)) "$out.plain" || continue
        with_library "$check" $((3 * limit)) "$out.lib" "results within fp16's bound (PY_DETAIL)" -- \
            "$MPI_PYTHON" tests/mpi/python_check.py "$check"
    done
done
echo "mpi_matrix: $(grep -c ',pass,' "$csv") passed, $failures failed, $(grep -c ',n/a,' "$csv") not available ($csv)"
[ "$failures" -eq 0 ]
