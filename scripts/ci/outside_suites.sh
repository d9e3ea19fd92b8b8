#!/bin/bash
# outside_suites.sh: test suites apsmpi did not write (MPICH's test/mpi reduction, non-blocking and persistent tests; mpi4py 3.1.4's and 4.1.2's suites) run with libapsmpi.so preloaded and compressing.
#   scripts/ci/outside_suites.sh [--tier ci|full] [--suites "mpich mpi4py3 mpi4py4"] [--mpich-mpis "NAME..."]
#                             [--ranks "N..."] [--modules "test_x..."] [--tests "NAME..."] [--csv FILE] [--dir DIR]
# (--suites, --mpich-mpis, --ranks, --modules (mpi4py's) and --tests (MPICH's) narrow a tier: a
# long run in parts)
# --tier ci: MPICH's reduction subset on Debian's MPICH and mpi4py 3.1.4's collective modules
#   (Debian's python3-mpi4py, built for Debian's Open MPI), each at 2 and 4 ranks.
# --tier full (default): MPICH's reduction, non-blocking, persistent and request tests on
#   Debian's MPICH and Open MPI and PyPI's MPICH 5, and every module of mpi4py 3.1.4 (Debian's
#   Open MPI) and of mpi4py 4.1.2 (pip, built against PyPI's MPICH 5), at 2 to 5 ranks.
# Every run: APSMPI_INTRANODE=compress (one machine), APSMPI_MIN_BYTES=0 (every float sum,
# however small), APSMPI_FORMAT=fp16 (the suites compare sums of small integers exactly:
# fp16's 11-bit significand holds them; MPICH's and mpi4py's checks all compare exactly, so no
# run uses the default e4m3), APSMPI_STATS=1 (the compressed calls go in the reason column).
# A test that fails is run again without the library: if it fails there too it is n/a (the
# MPI's own failure), else fail. Sources: MPICH's test/mpi from Debian's source package of
# mpich (apt-get source: deb-src enabled in /etc/apt/sources.list.d/apsmpi-deb-src.sources),
# mpi4py's sdists from PyPI (pip download), all cached in ~/.cache/apsmpi-outside.
# One CSV row per test and rank count: suite,test,ranks,MPI,result,reason. Exit status 1 if any
# row is fail.
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
. scripts/ci/matrix_mpis.sh

tier=full suites="" csv="" dir=$top/build-matrix limit=${OUTSIDE_TIMEOUT:-60} mpich_mpis_given="" ranks_given="" modules_given="" tests_given=""
matrix_options "$0 [--tier ci|full] [--suites \"mpich mpi4py3 mpi4py4\"] [--mpich-mpis \"NAME...\"] [--ranks \"N...\"] [--modules \"test_x...\"] [--tests \"NAME...\"] [--csv FILE] [--dir DIR]" \
    --tier=tier --suites=suites --csv=csv --dir=dir --mpich-mpis=mpich_mpis_given --ranks=ranks_given \
    --modules=modules_given --tests=tests_given -- "$@"
case $tier in
ci) suites=${suites:-mpich mpi4py3} ranks_list="2 4" mpich_mpis="debian-mpich" ;;
full) suites=${suites:-mpich mpi4py3 mpi4py4} ranks_list="2 3 4 5" mpich_mpis="debian-mpich debian-openmpi mpich5" ;;
*) echo "outside_suites: --tier ci or full" >&2 && exit 2 ;;
esac
mpich_mpis=${mpich_mpis_given:-$mpich_mpis} ranks_list=${ranks_given:-$ranks_list}
cache=${APSMPI_OUTSIDE:-$HOME/.cache/apsmpi-outside}
mkdir -p "$cache"
matrix_csv_start outside_suites.csv
failures=0
APSMPI_RUN_ENV=(APSMPI_STATS=1 APSMPI_INTRANODE=compress APSMPI_MIN_BYTES=0 APSMPI_FORMAT=fp16)

row() { # SUITE TEST RANKS MPI RESULT REASON
    echo "$1,$2,$3,$4,$5,\"${6//\"/\'}\"" >>"$csv"
    printf '%-8s %-34s %s %-15s %-5s %s\n' "$1" "$2" "$3" "$4" "$5" "$6"
    [ "$5" != fail ] || failures=$((failures + 1))
}

# the statistics line's compressed and passed-through counts of an output file, as words
stats_of() { sed -n 's/.*calls compressed \([0-9]*\), passed through \([0-9]*\),.*/compressed \1, passed through \2/p' "$1" | head -1; }

# ---- the libraries (mpi_matrix.sh's builds, in the same DIR) ----
declare -A built=()
library_for() { # NAME: sets lib for the MPI NAME (mpi_select'ed), building it once
    if [ -z "${built[$MPI_BUILD]:-}" ]; then
        if matrix_build "$dir" "$MPI_BUILD"; then built[$MPI_BUILD]=ok; else built[$MPI_BUILD]=failed; fi
        echo "build against $MPI_BUILD: ${built[$MPI_BUILD]}"
    fi
    lib=$dir/obj-$MPI_BUILD/.libs/libapsmpi.so
    [ "${built[$MPI_BUILD]}" = ok ]
}

need_mpis=""
case " $suites " in *" mpich "*) need_mpis="$mpich_mpis" ;; esac
case " $suites " in *" mpi4py4 "*) need_mpis="$need_mpis mpich5" ;; esac
install_mpis $need_mpis || exit 1
matrix_sources "$dir"

# ---- MPICH's test/mpi ----
# NAME SOURCE ARGS (SOURCE: its .c under test/mpi; nb* are the blocking tests built with
# -DUSE_MTEST_NBC, as MPICH's coll/Makefile.am does: each call its I-form and MPI_Wait)
mpich_ci_tests="
allred coll/allred.c -count=10
allred_100 coll/allred.c -count=100
allred2 coll/allred2.c
allred3 coll/allred3.c
allred4 coll/allred4.c
allred5 coll/allred5.c
allred6 coll/allred6.c
allredmany coll/allredmany.c
redscat coll/redscat.c
redscat2 coll/redscat2.c
redscat3 coll/redscat3.c
red_scat_block coll/red_scat_block.c
red_scat_block2 coll/red_scat_block2.c
redscatblk3 coll/redscatblk3.c
nbredscat coll/redscat.c
nbredscat3 coll/redscat3.c
iallred coll/iallred.c
nonblocking coll/nonblocking.c
p_allred coll/p_allred.c
p_redscat coll/p_redscat.c
p_red_scat_block coll/p_red_scat_block.c
"
mpich_full_tests="$mpich_ci_tests
op_coll coll/op_coll.c
op_commutative coll/op_commutative.c
coll12 coll/coll12.c
coll13 coll/coll13.c
longuser coll/longuser.c
opsum coll/opsum.c
uoplong coll/uoplong.c
icallreduce coll/icallreduce.c
nbicallreduce coll/icallreduce.c
redscatinter coll/redscatinter.c
nbredscatinter coll/redscatinter.c
redscatbkinter coll/redscatbkinter.c
nonblocking2 coll/nonblocking2.c
nonblocking3 coll/nonblocking3.c
ibarrier coll/ibarrier.c
p_red coll/p_red.c
p_bcast coll/p_bcast.c
p_allgather coll/p_allgather.c
p_barrier coll/p_barrier.c
p_order coll/p_order.c
rcancel pt2pt/rcancel.c
cancelanysrc pt2pt/cancelanysrc.c
rqstatus pt2pt/rqstatus.c
rqfreeb pt2pt/rqfreeb.c
waitany_null pt2pt/waitany_null.c
waittestnull pt2pt/waittestnull.c
irecv_any pt2pt/irecv_any.c
isendrecv pt2pt/isendrecv.c
"

# mpich_sources: test/mpi of Debian's mpich source package, unpacked in the cache
mpich_sources() {
    local src=$cache/mpich-src
    if [ ! -d "$src/test/mpi/coll" ]; then
        if [ ! -e /etc/apt/sources.list.d/apsmpi-deb-src.sources ]; then
            printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                >/etc/apt/sources.list.d/apsmpi-deb-src.sources
            apt-get update -qq >/dev/null
        fi
        rm -rf "$cache/mpich-dl" && mkdir -p "$cache/mpich-dl"
        (cd "$cache/mpich-dl" && apt-get source --download-only mpich >/dev/null 2>&1) || return 1
        mkdir -p "$src"
        tar -xJf "$cache"/mpich-dl/mpich_*.orig.tar.xz -C "$src" --strip-components=1 --wildcards '*/test/mpi' ||
            return 1
    fi
    MPICH_TESTS=$src/test/mpi
}

# mpich_build_tests NAME: the tests built with the MPI NAME's mpicc in DIR/mpich-tests-NAME;
# mtest and dtpools (MPICH's test helpers) with a hand-written mpitestconf.h and
# dtpoolsconf.h (gcc, x86-64 Linux) instead of the test suite's own configure
mpich_build_tests() {
    local b=$dir/mpich-tests-$1 t name src args
    rm -rf "$b" && mkdir -p "$b"
    cp -r "$MPICH_TESTS"/include "$MPICH_TESTS"/util "$MPICH_TESTS"/dtpools "$b"/
    cat >"$b/include/mpitestconf.h" <<'EOF'
/* mpitestconf.h: written by scripts/ci/outside_suites.sh for gcc on x86-64 Linux (instead of configure) */
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_GETRUSAGE 1
#define HAVE_INTTYPES_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define HAVE_LONG_LONG 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_PTHREAD_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRDUP 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_USLEEP 1
#define HAVE__BOOL 1
#define POINTERINT_t int64_t
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_SHORT 2
#define SIZEOF_VOID_P 8
#define STDC_HEADERS 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
    printf '/* dtpoolsconf.h: written by scripts/ci/outside_suites.sh (instead of configure) */\n#define HAVE_INTTYPES_H 1\n#define HAVE_LIMITS_H 1\n#define HAVE_MEMSET 1\n#define HAVE_STDINT_H 1\n#define HAVE_STDLIB_H 1\n#define HAVE_STRDUP 1\n#define HAVE_STRING_H 1\n#define HAVE_UNISTD_H 1\n#define STDC_HEADERS 1\n' \
        >"$b/dtpools/dtpoolsconf.h"
    (
        cd "$b" || exit 1
        # dtpools calls two functions MPI-3.0 removed; their MPI-2 names take the same arguments
        # (Open MPI 4.1 built without MPI-1 compatibility refuses the old names at compile time)
        sed -i 's/MPI_Type_hvector(/MPI_Type_create_hvector(/g; s/MPI_Type_hindexed(/MPI_Type_create_hindexed(/g' dtpools/src/*.c
        for f in dtpools/src/*.c util/mtest.c util/mtest_common.c util/mtest_single.c; do
            "$MPI_CC" -O1 -w -Iinclude -Idtpools/include -c "$f" -o "${f%.c}.o" || exit 1
        done
    ) >"$b/build.log" 2>&1 || return 1
    while read -r name src args; do
        [ -n "$name" ] || continue
        t=()
        case $name in nb*) t=(-DUSE_MTEST_NBC) ;; esac
        "$MPI_CC" -O1 -w "${t[@]+"${t[@]}"}" -I"$b/include" -I"$b/dtpools/include" -o "$b/$name" "$MPICH_TESTS/$src" \
            "$b"/util/mtest.o "$b"/util/mtest_common.o "$b"/util/mtest_single.o "$b"/dtpools/src/*.o -lm \
            >"$b/$name.build.log" 2>&1 || rm -f "$b/$name"
    done <<<"$mpich_tests"
    MPICH_BUILT=$b
}

run_mpich() {
    local name src args np out why stats
    mpich_sources || {
        row mpich all - - fail "no MPICH test sources (apt-get source mpich failed)"
        return
    }
    if [ "$tier" = ci ]; then mpich_tests=$mpich_ci_tests; else mpich_tests=$mpich_full_tests; fi
    if [ -n "$tests_given" ]; then # only the named tests (their lines of the tier's list)
        mpich_tests=$(while read -r name src args; do
            case " $tests_given " in *" $name "*) echo "$name $src $args" ;; esac
        done <<<"$mpich_tests")
    fi
    for mpi in $mpich_mpis; do
        mpi_select "$mpi" || continue
        library_for "$mpi" || {
            row mpich all - "$mpi" fail "the library does not build against $MPI_LABEL"
            continue
        }
        mpich_build_tests "$mpi" || {
            row mpich all - "$mpi" fail "MPICH's test helpers do not build: $(grep -m1 error "$dir/mpich-tests-$mpi/build.log")"
            continue
        }
        while read -r name src args; do
            [ -n "$name" ] || continue
            if [ ! -x "$MPICH_BUILT/$name" ]; then
                for np in $ranks_list; do
                    row mpich "$name" "$np" "$mpi" n/a "does not compile with $MPI_LABEL: $(grep -m1 'error' "$MPICH_BUILT/$name.build.log" | cut -c1-120)"
                done
                continue
            fi
            for np in $ranks_list; do
                out=$MPICH_BUILT/$name.$np
                # shellcheck disable=SC2086  # args are words
                mpi_launch "$np" "$limit" "LD_PRELOAD=$lib" "${APSMPI_RUN_ENV[@]}" -- "$MPICH_BUILT/$name" $args \
                    </dev/null >"$out.lib" 2>&1
                rc=$?
                stats=$(stats_of "$out.lib")
                if [ "$rc" -eq 0 ] && grep -q '^ *No Errors' "$out.lib"; then
                    row mpich "$name" "$np" "$mpi" pass "${stats:-no statistics line}"
                    continue
                fi
                why=$( [ "$rc" -eq 124 ] && echo "hangs (killed after $limit s)" || echo "exit $rc: $(first_error "$out.lib")")
                # shellcheck disable=SC2086
                mpi_launch "$np" "$limit" -- "$MPICH_BUILT/$name" $args </dev/null >"$out.plain" 2>&1
                rc=$?
                if [ "$rc" -eq 0 ] && grep -q '^ *No Errors' "$out.plain"; then
                    row mpich "$name" "$np" "$mpi" fail "with apsmpi: $why${stats:+ ($stats)}; without: No Errors"
                elif [ "$rc" -eq 124 ]; then
                    row mpich "$name" "$np" "$mpi" n/a "killed after $limit s without apsmpi too (with it: $why)"
                else
                    row mpich "$name" "$np" "$mpi" n/a "fails without apsmpi too: $(first_error "$out.plain")"
                fi
            done
        done <<<"$mpich_tests"
    done
}

# ---- mpi4py's test suites ----
# Modules of the CI tier: the collectives on buffers (blocking, non-blocking, vectors)
MPI4PY_CI_MODULES="test_cco_buf test_cco_nb_buf test_cco_vec test_cco_nb_vec test_request"
# Modules not run, with the reason (measured here: they fail without the library too)
declare -A MPI4PY_NOT_RUN=(
    [test_spawn]="not run: MPI_Comm_spawn's tests hang without apsmpi too (mpi4py 3.1.4 on Debian's Open MPI 4.1.4, 2 ranks: in testNoArgs after 30 spawns passed)"
)

# mpi4py_suite VERSION PYTHON: runs the sdist's test modules one by one (a segfault or hang
# names its module) at each rank count; the selected MPI's library preloaded
mpi4py_suite() {
    local version=$1 python=$2 tests modules module np out rc stats bad summary
    tests=$cache/mpi4py-$version/test
    if [ ! -d "$tests" ]; then
        (cd "$cache" && pip download -q --no-binary :all: --no-deps "mpi4py==$version" -d . &&
            tar -xzf "mpi4py-$version.tar.gz") >/dev/null 2>&1 || {
            row "mpi4py-$version" all - "$MPI_BUILD" fail "mpi4py $version's sdist not downloaded"
            return
        }
    fi
    if [ -n "$modules_given" ]; then
        modules=$modules_given
    elif [ "$tier" = ci ]; then
        modules=$MPI4PY_CI_MODULES
    else
        modules=$(cd "$tests" && ls test_*.py | sed 's/\.py$//' | tr '\n' ' ')
    fi
    local runner=$tests/main.py
    [ -e "$runner" ] || runner=$tests/runtests.py
    for module in $modules; do
        if [ -n "${MPI4PY_NOT_RUN[$module]:-}" ]; then
            row "mpi4py-$version" "$module" - "$MPI_BUILD" n/a "${MPI4PY_NOT_RUN[$module]}"
            continue
        fi
        for np in $ranks_list; do
            out=$dir/mpi4py-$version-$module.$np
            # each rank's unittest output in its own file (OMPI_COMM_WORLD_RANK or PMI_RANK)
            mpi_launch "$np" "$limit" "LD_PRELOAD=$lib" "${APSMPI_RUN_ENV[@]}" -- \
                sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; exec "$0" "$@" >"'"$out"'.rank$r" 2>&1' \
                "$python" "$runner" --no-builddir -v -i "^$module(\\.py)?\$" </dev/null >"$out.lib" 2>&1
            rc=$?
            # rank 0's statistics line is in its own output file
            stats=$(cat "$out".rank* "$out.lib" 2>/dev/null | stats_of /dev/stdin)
            summary=$(grep -h -m1 '^Ran ' "$out".rank0 2>/dev/null)
            bad=$(grep -h -E '\.\.\. (FAIL|ERROR)$|^(FAIL|ERROR): ' "$out".rank* 2>/dev/null | sed -n 's/^\(FAIL\|ERROR\): \([^ ]*\).*/\2/p' | sort -u | head -5 | tr '\n' ' ')
            if [ "$rc" -eq 0 ] && grep -q '^OK' "$out.rank0"; then
                row "mpi4py-$version" "$module" "$np" "$MPI_BUILD" pass "$summary $(grep -h -m1 '^OK' "$out.rank0"); ${stats:-no statistics line}"
                continue
            fi
            why=$( [ "$rc" -eq 124 ] && echo "hangs (killed after $limit s)" || echo "exit $rc")
            [ -n "$bad" ] && why="$why; failing: $bad"
            [ -n "$bad" ] || why="$why: $(cat "$out".rank* "$out.lib" 2>/dev/null | first_error /dev/stdin)"
            mpi_launch "$np" "$limit" -- \
                sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; exec "$0" "$@" >"'"$out"'.plain$r" 2>&1' \
                "$python" "$runner" --no-builddir -v -i "^$module(\\.py)?\$" </dev/null >"$out.plain" 2>&1
            rc=$?
            if [ "$rc" -eq 124 ]; then
                row "mpi4py-$version" "$module" "$np" "$MPI_BUILD" n/a "hangs without apsmpi too (killed after $limit s): $(tail -c 300 "$out.plain0" | tail -1 | cut -c1-100)"
            elif [ "$rc" -eq 0 ] && grep -q '^OK' "$out.plain0"; then
                row "mpi4py-$version" "$module" "$np" "$MPI_BUILD" fail "with apsmpi: $why${stats:+ ($stats)}; without: OK"
            else
                row "mpi4py-$version" "$module" "$np" "$MPI_BUILD" n/a "fails without apsmpi too: $(grep -h -m1 -E '^(FAILED|Ran)|Error' "$out.plain0" "$out.plain" 2>/dev/null | head -1 | cut -c1-120)"
            fi
        done
    done
}

run_mpi4py3() {
    # Debian's python3-mpi4py (3.1.4), built for Debian's Open MPI
    mpi_select debian-openmpi
    library_for debian-openmpi || {
        row mpi4py-3.1.4 all - debian-openmpi fail "the library does not build against $MPI_LABEL"
        return
    }
    /usr/bin/python3 -c 'import mpi4py; assert mpi4py.__version__ == "3.1.4"' 2>/dev/null || {
        row mpi4py-3.1.4 all - debian-openmpi fail "Debian's python3-mpi4py 3.1.4 is not installed"
        return
    }
    mpi4py_suite 3.1.4 /usr/bin/python3
}

run_mpi4py4() {
    # mpi4py 4.1.2 from its sdist, built with PyPI's MPICH 5 into that MPI's venv (once)
    mpi_select mpich5
    library_for mpich5 || {
        row mpi4py-4.1.2 all - mpich5 fail "the library does not build against $MPI_LABEL"
        return
    }
    local py=$APSMPI_MPIS/mpich/bin/python
    if ! "$py" -c 'import mpi4py, numpy; assert mpi4py.__version__ == "4.1.2"' 2>/dev/null; then
        MPICC=$MPI_CC "$APSMPI_MPIS/mpich/bin/pip" install -q --disable-pip-version-check --no-binary mpi4py \
            mpi4py==4.1.2 numpy >"$dir/mpi4py4-install.log" 2>&1 || {
            row mpi4py-4.1.2 all - mpich5 fail "mpi4py 4.1.2 does not build against $MPI_LABEL (see $dir/mpi4py4-install.log)"
            return
        }
    fi
    mpi4py_suite 4.1.2 "$py"
}

start=$(date +%s)
for suite in $suites; do
    case $suite in
    mpich) run_mpich ;;
    mpi4py3) run_mpi4py3 ;;
    mpi4py4) run_mpi4py4 ;;
    *) echo "outside_suites: unknown suite $suite" >&2 && exit 2 ;;
    esac
done
echo "outside_suites ($tier): $(grep -c ',pass,' "$csv") passed, $failures failed, $(grep -c ',n/a,' "$csv") not applicable, $(($(date +%s) - start)) s ($csv)"
[ "$failures" -eq 0 ]
