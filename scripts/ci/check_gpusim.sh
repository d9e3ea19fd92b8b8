#!/bin/bash
# check_gpusim.sh: `make check-gpusim`: the real CUDA code (kernels, plugin, device path, training kernels) run on GPGPU-Sim, a PTX simulator, without a GPU.
#   scripts/ci/check_gpusim.sh SRCDIR BUILDDIR
# SRCDIR: the source tree; BUILDDIR: a folder of its own for the simulator build (the normal
# build is not touched). Settings (environment):
#   GPUSIM_DIR     the simulator kit (default SRCDIR/../shared/gpusim; docs/gpusim.md says what it
#                  holds); absent: exit 77, "not available here", which fails make and .ci/run;
#                  its files must have the checksums of tests/gpu/gpusim_kit.sha256
#                  (scripts/ci/check_gpusim_kit.sh); the run uses the kit as
#                  scripts/ci/make_gpusim_kit.sh assembles it in BUILDDIR/kit from this tree's
#                  tests/gpu/gpusim_kit/ and that kit's source archive
#   GPUSIM_CACHE   where the simulator and its CUDA 11.8 are built, once (default ~/.cache/apsmpi-gpusim)
#   CUDA13         the project's CUDA toolkit, for the CUDA 13 PTX flavour (default /usr/local/cuda;
#                  absent: that flavour is skipped, said in one line)
#   APSMPI_TEST_MAX_ELEMS  the largest buffer of tests/gpu/test_kernels (default 4096)
#   DEVICE_CASE_DIVISOR    the device cases' sizes divided by this (default 64: tens of thousands of elements)
#   GPUSIM_FLAVOURS        "sim118 cuda13" (default both)
#   GPUSIM_PARTS           "kernels device train" (default all three)
#   GPUSIM_SET             "cover" (make check-gpusim, CI): the cases that run every kernel, every
#                          device step and every packed width once per flavour (below); "full"
#                          (make check-gpusim-full, the default here): every format and case
# Every case's time goes to BUILDDIR/summary.txt (the table of results/gpu_sim/README.md).
set -uo pipefail
srcdir=$(cd "${1:?usage: check_gpusim.sh SRCDIR BUILDDIR}" && pwd)
build=$(mkdir -p "${2:?usage: check_gpusim.sh SRCDIR BUILDDIR}" && cd "$2" && pwd)
kit=${GPUSIM_DIR:-$srcdir/../shared/gpusim}
cache=${GPUSIM_CACHE:-$HOME/.cache/apsmpi-gpusim}
export CUDA13=${CUDA13:-/usr/local/cuda}
export APSMPI_TEST_MAX_ELEMS=${APSMPI_TEST_MAX_ELEMS:-4096}
export DEVICE_CASE_DIVISOR=${DEVICE_CASE_DIVISOR:-64}
flavours=${GPUSIM_FLAVOURS:-sim118 cuda13}
parts=" ${GPUSIM_PARTS:-kernels device train} "
set_name=${GPUSIM_SET:-full}
case $set_name in
cover | full) ;;
*) echo "check-gpusim: GPUSIM_SET is cover or full, not '$set_name'"; exit 1 ;;
esac
jobs=$(nproc)

if [ ! -x "$kit/build.sh" ]; then
    echo "check-gpusim: not available here (exit 77): no GPU simulator kit at $kit; nothing run" \
        "(set GPUSIM_DIR; docs/gpusim.md says how to make one)"
    exit 77
fi
kit=$(cd "$kit" && pwd)
# the kit that docs/gpusim.md describes, and no other; then run from the same kit assembled from
# this tree's copy of its files (tests/gpu/gpusim_kit/) and its source archive
if ! "$srcdir/scripts/ci/check_gpusim_kit.sh" "$kit" >"$build/kit-checksums.log" 2>&1; then
    echo "check-gpusim: FAILED: the kit at $kit is not the one docs/gpusim.md describes" \
        "(tests/gpu/gpusim_kit.sha256):"
    sed 's/^/  | /' "$build/kit-checksums.log"
    exit 1
fi
rm -rf "$build/kit"
if ! "$srcdir/scripts/ci/make_gpusim_kit.sh" "$build/kit" "$kit/gpgpu-sim-667834cf.tar.gz" >"$build/kit.log" 2>&1; then
    echo "check-gpusim: FAILED: the kit could not be assembled from tests/gpu/gpusim_kit/:"
    sed 's/^/  | /' "$build/kit.log"
    exit 1
fi
kit=$build/kit
summary=$build/summary.txt
: >"$summary"
failures=0
start_all=$(date +%s)

# timed LOG TIMES COMMAND...: runs the command, output into LOG, its wall-clock and CPU
# seconds (user + system, of all its processes) into the file TIMES.
timed() {
    local log=$1 times=$2 TIMEFORMAT='%R %U %S' rc
    shift 2
    { time "$@" >"$log" 2>&1; } 2>"$times.raw"
    rc=$?
    awk '{ printf "%d %d\n", $1 + 0.5, $2 + $3 + 0.5 }' "$times.raw" >"$times"
    return "$rc"
}
# record NAME RC LOG TIMES: one line of the summary; the log's end if the case failed.
record() {
    local name=$1 rc=$2 log=$3 wall cpu what=ok
    read -r wall cpu <"$4"
    [ "$rc" -eq 0 ] || what=FAILED
    [ "$rc" -eq 0 ] || failures=$((failures + 1))
    printf '%-7s %5ss wall %5ss cpu  %s\n' "$what" "$wall" "$cpu" "$name" | tee -a "$summary"
    [ "$rc" -eq 0 ] || { tail -40 "$log" | grep -av '^GPGPU-Sim' | sed 's/^/  | /'; echo "  (whole log: $log)"; }
}
# case_run NAME LOG COMMAND...: runs the command, records its result and times.
case_run() {
    local name=$1 log=$2 rc
    shift 2
    timed "$log" "$log.times" "$@"
    rc=$?
    record "$name" "$rc" "$log" "$log.times"
    return "$rc"
}

# 1. the simulator and its CUDA 11.8 toolchain (cached; minutes the first time)
case_run "simulator build (cached in $cache)" "$build/gpusim-build.log" "$kit/build.sh" "$cache" || exit 1
# shellcheck disable=SC1091
. "$cache/env.sh"
# tools_dir DIR CUOBJDUMP PTXAS: a CUDA install path for the simulator (CUDA_INSTALL_PATH: it
# runs DIR/bin/cuobjdump and DIR/bin/ptxas) whose ptxas report is run once per PTX file and
# kept (tests/gpu/gpusim_ptxas_cache.sh, in BUILDDIR/ptxas-cache, emptied at each run)
rm -rf "$build/ptxas-cache"
tools_dir() {
    # (rm first: an older build left a link to a file of the source tree there)
    mkdir -p "$1/bin" && ln -sf "$2" "$1/bin/cuobjdump" && rm -f "$1/bin/ptxas" &&
        printf '#!/bin/bash\nexec %q %q %q "$@"\n' "$srcdir/tests/gpu/gpusim_ptxas_cache.sh" "$build/ptxas-cache" "$3" \
            >"$1/bin/ptxas" && chmod +x "$1/bin/ptxas"
}
tools_dir "$build/ptx118" "$SIM_CUDA/bin/cuobjdump" "$SIM_CUDA/bin/ptxas" || exit 1
have13=no
if [ -x "$CUDA13/bin/nvcc" ] && [ -x "$CUDA13/bin/ptxas" ]; then
    have13=yes
    # a CUDA install path whose cuobjdump and ptxas hand the simulator CUDA 13's PTX
    # (cuobjdump: this tree's, which gives each .cu of the plugin its own CUDA 13 PTX:
    # tests/gpu/gpusim_cuobjdump13.sh; ptxas: this tree's, without the kit's race:
    # tests/gpu/gpusim_ptxas13.sh)
    tools_dir "$build/ptx13" "$srcdir/tests/gpu/gpusim_cuobjdump13.sh" "$srcdir/tests/gpu/gpusim_ptxas13.sh" || exit 1
else
    flavours=${flavours//cuda13/}
    echo "check-gpusim: no CUDA 13 toolkit at $CUDA13: the CUDA 13 PTX flavour is skipped"
fi

# 2. the simulator's self-tests, before any of the project's code
selftest_args=("$kit/selftest" "$build/selftest")
[ "$have13" = yes ] && selftest_args+=("$build/ptx13")
case_run "simulator self-tests (gpusim/selftest/*.cu; hello.cu from CUDA 13 PTX too)" "$build/selftest.log" \
    "$srcdir/tests/gpu/gpusim_selftest.sh" "${selftest_args[@]}" || exit 1

# 3. the project built for the simulator: a copy of the sources in BUILDDIR/src, configured
# with the simulator's CUDA 11.8 (compute_70 PTX, clang-14 as nvcc's host compiler), linked
# with the shared runtime that the simulator replaces at run time. Only the sources: the
# files a release tarball lists in its MANIFEST (made by make dist), or in a git clone what
# git tracks or would track; never the objects of a build in the source tree (made by CUDA 13
# for another runtime: they do not link with the simulator's).
sim=$build/src
source_files() {
    if [ -f "$srcdir/MANIFEST" ]; then
        cat "$srcdir/MANIFEST"
    elif [ "$(git -C "$srcdir" rev-parse --show-toplevel 2>/dev/null)" = "$srcdir" ]; then
        git -C "$srcdir" ls-files --cached --others --exclude-standard
    else
        echo "check-gpusim: $srcdir is neither a release tarball (with its MANIFEST) nor a git clone:" \
            "cannot tell its sources from a build's files" >&2
        return 1
    fi
}
build_project() {
    local files
    mkdir -p "$sim"
    files=$(source_files) && [ -n "$files" ] || return 1
    tr '\n' '\0' <<<"$files" | (cd "$srcdir" && tar --null -T - -cf -) | tar -C "$sim" -xf - || return 1
    cd "$sim" || return 1
    [ -x configure ] || autoreconf -fi || return 1
    local want="--with-cuda=$SIM_CUDA NVCC_GENCODE=-gencode arch=compute_70,code=compute_70"
    if [ ! -f config.status ] || [ "$(cat .gpusim-configured 2>/dev/null)" != "$want" ]; then
        ./configure --quiet --with-cuda="$SIM_CUDA" NVCC_GENCODE="-gencode arch=compute_70,code=compute_70" \
            NVCCFLAGS="-ccbin clang++-14" || return 1
        echo "$want" >.gpusim-configured
    fi
    local targets=(libapsmpi.la libapsmpi_cuda.la tests/gpu/test_kernels tests/mpi/reduce_check
        tests/mpi/gpu_requests_check tests/mpi/auto_check)
    if [ "$have13" = yes ]; then
        # backend_cuda.cu needs cuBLAS's header, which the simulator's CUDA 11.8 lacks: CUDA
        # 13's, in a copy of the 11.8 tree (symbolic links) whose library_types.h is 13's
        local ov=$build/cuda118-cublas13
        if [ ! -x "$ov/bin/nvcc" ]; then
            rm -rf "$ov" && cp -rs "$SIM_CUDA" "$ov" && rm "$ov/bin/nvcc" "$ov/bin/nvcc.profile" "$ov/include/library_types.h" &&
                cp "$SIM_CUDA/bin/nvcc" "$SIM_CUDA/bin/nvcc.profile" "$ov/bin/" &&
                cp "$CUDA13/include/library_types.h" "$CUDA13"/include/cublas*.h "$ov/include/" || return 1
        fi
        make NVCC="$ov/bin/nvcc" apps/train/backend_cuda.o || return 1
        targets+=(tests/gpu/test_train_backend apps/apsmpi_train_cuda)
    fi
    # (the MPI test programs linked with the simulator's runtime, which it needs; relinked if an
    # earlier build left them without it)
    local check
    for check in reduce_check gpu_requests_check auto_check; do
        readelf -d tests/mpi/$check 2>/dev/null | grep -q libcudart || rm -f tests/mpi/$check
    done
    make -j"$jobs" CUDA_LIBS="-L$SIM_CUDA/lib64 -lcudart" CUDA_LDFLAGS="-L$SIM_CUDA/lib64 -L$CUDA13/lib64" \
        tests_mpi_reduce_check_LDADD="-L$SIM_CUDA/lib64 -Wl,--no-as-needed,-lcudart,--as-needed" \
        tests_mpi_gpu_requests_check_LDADD="-ldl -L$SIM_CUDA/lib64 -Wl,--no-as-needed,-lcudart,--as-needed" \
        tests_mpi_auto_check_LDADD="-lm -ldl -L$SIM_CUDA/lib64 -Wl,--no-as-needed,-lcudart,--as-needed" \
        "${targets[@]}" tests/mpi/env.sh || return 1
    # CUDA 13's PTX of the same sources (compute_75: CUDA 13 has no compute_70), one file per
    # .cu of the plugin in one folder (tests/gpu/gpusim_cuobjdump13.sh picks each)
    if [ "$have13" = yes ]; then
        mkdir -p "$build/codec13" || return 1
        for cu in codec_kernels codec_mx_kernels; do
            "$CUDA13/bin/nvcc" -std=c++17 -O3 -ftz=false -fmad=false -arch=compute_75 -ptx -I src -I kernels -I . \
                -o "$build/codec13/$cu.ptx" "kernels/$cu.cu" || return 1
        done
        "$CUDA13/bin/nvcc" -std=c++20 -O3 -arch=compute_75 -ptx -o "$build/backend_cuda13.ptx" \
            apps/train/backend_cuda.cu || return 1
    fi
}
case_run "the library, plugin, kernels and GPU tests built for the simulator" "$build/project-build.log" build_project ||
    exit 1

# where each simulated process runs: a folder with the simulator's configuration files
work=$build/run
mkdir -p "$work"
cp "$SIM_CONFIGS"/* "$work/"

# flavour_env FLAVOUR PTX: the environment of a simulated run with that flavour's PTX
flavour_env() {
    if [ "$1" = cuda13 ]; then
        echo "CUDA_INSTALL_PATH=$build/ptx13 APSMPI_PTX_OVERRIDE=$2"
    else
        echo "CUDA_INSTALL_PATH=$build/ptx118"
    fi
}

for flavour in $flavours; do
    label="[$flavour PTX]"
    # 4. tests/gpu/test_kernels: buffers of at most APSMPI_TEST_MAX_ELEMS elements, both
    # roundings; the formats in shards, $jobs at a time. full: every format, the block
    # exponents' cases one in 5. cover: the kernels are instantiated per packed width (and the
    # MX kernels per MX format), so one format of each width 3..16 (and fp16 beside bf16,
    # e4m3ieee beside e4m3: their own inf/NaN; e8m0, e8m2: 8 exponent bits, e8m0 none of mantissa)
    # and every MX format run every kernel of each flavour; the block exponents' cases one in 10
    # (every amax path still: every length and block length is drawn)
    if [ "$set_name" = full ]; then
        be_sample=5
        shards=("FORMATS=fp16,bf16,e5m2,e4m3,e4m3ieee,e2m0,e2m1"
                "FORMATS=e3m0,e3m1,e3m2,e2m3,e4m2,e2m5,e7m0"
                "FORMATS=e3m5,e8m0,e5m4,e4m6,e8m2,e4m7,e5m6"
                "FORMATS=e4m8,e5m7,e6m7,e7m7,e8m6,e2m13,e8m7"
                "FORMATS=mxfp8,mxfp8e5m2,mxfp6,mxfp6e2m3,mxfp5,mxfp4")
    else
        be_sample=10
        shards=("FORMATS=fp16,bf16,e4m3,e4m3ieee,e2m0,e2m1,e3m1"
                "FORMATS=e3m2,e4m2,e8m0,e5m4,e8m2,e5m6,e4m8"
                "FORMATS=e6m7,e7m7,mxfp8,mxfp8e5m2,mxfp6,mxfp6e2m3,mxfp5,mxfp4")
    fi
    shards=("ONLY=test_block_exponents*" "${shards[@]}")
    declare -A names=() logs=()
    running=0
    [[ $parts == *" kernels "* ]] || shards=()
    for i in "${!shards[@]}"; do
        sh=${shards[$i]}
        dir=$work/kernels-$flavour-$i
        mkdir -p "$dir" && cp "$SIM_CONFIGS"/* "$dir/"
        case $sh in
        ONLY=*) vars=(APSMPI_TEST_ONLY="${sh#ONLY=}" APSMPI_TEST_SAMPLE=$be_sample) ;;
        *) vars=(APSMPI_TEST_FORMATS="${sh#FORMATS=}" APSMPI_TEST_SKIP="test_block_exponents*") ;;
        esac
        # shellcheck disable=SC2046
        (cd "$dir" && timed "$dir/log" "$dir/times" env $(flavour_env "$flavour" "$build/codec13") \
            "${vars[@]}" "$sim/tests/gpu/test_kernels") &
        names[$!]="test_kernels $label ${sh#*=}" logs[$!]=$dir/log
        running=$((running + 1))
        # $jobs at a time: the next shard starts when one ends
        while [ "$running" -ge "$jobs" ] || { [ "$i" -eq $((${#shards[@]} - 1)) ] && [ "$running" -gt 0 ]; }; do
            wait -n -p done_pid
            rc=$?
            record "${names[$done_pid]}" "$rc" "${logs[$done_pid]}" "$(dirname "${logs[$done_pid]}")/times"
            running=$((running - 1))
        done
    done

    # 5. the library's device path with the real plugin, under mpirun, against host buffers.
    # full: every case with CUDA 11.8's PTX, one in 3 with CUDA 13's (the kernels are the same).
    # cover: the cases (numbers of tests/mpi/device_cases.sh) that take every device step once:
    # device stages of a pipelined call (2), in place (7), a zero count (8), only the send or the
    # receive buffer on the device (9, 11), a 6-bit reduce_scatter_block (12), stochastic
    # rounding (16), per-call APS (18), buffers reused (20), inf/NaN and overflow in fp32
    # through host copies (21, 24), the MX path (25, 27; 28 mxfp5), and APSMPI_FORMAT=auto's (every rung,
    # the measuring kernels' counts against the host's: the auto cases of device_cases.sh that
    # run the GPU's kernels); with CUDA 13's PTX four of them and two auto cases
    if [[ $parts == *" device "* ]]; then
        sample=1 pick="" cases="all cases" auto_pick=""
        if [ "$set_name" = full ]; then
            [ "$flavour" = cuda13 ] && sample=${GPUSIM_CUDA13_DEVICE_SAMPLE:-3} cases="one case in $sample"
        elif [ "$flavour" = cuda13 ]; then
            # and of the auto cases, a bucket widened (1) and one through FP32 and back (2)
            pick="2 11 21 25" cases="cases $pick, auto cases 1 2" auto_pick="1 2"
        else
            # and the auto cases on the GPU's own kernels: widened (1), FP32 and back (2), reduce-scatter (3)
            pick="2 7 8 9 11 12 16 18 20 21 24 25 27 28" cases="cases $pick, auto cases 1 2 3" auto_pick="1 2 3"
        fi
        # shellcheck disable=SC2046
        case_run "device path, real plugin, 2 and 3 ranks, $cases (tests/mpi/device_gpusim.sh) $label" \
            "$work/device-$flavour.log" env $(flavour_env "$flavour" "$build/codec13") top_builddir="$sim" \
            GPUSIM_WORK="$work" DEVICE_CASE_SAMPLE=$sample DEVICE_CASE_PICK="$pick" DEVICE_CASE_AUTO_PICK="$auto_pick" \
            "$srcdir/tests/mpi/device_gpusim.sh"
    fi

    # 6. the training program's CUDA backend: its kernels against the CPU backend (the
    # simulator cannot run cuBLAS: see results/gpu_sim/README.md)
    if [[ $parts == *" train "* ]] && [ -x "$sim/tests/gpu/test_train_backend" ]; then
        # shellcheck disable=SC2046
        case_run "training backend kernels vs the CPU backend (tests/gpu/test_train_backend) $label" \
            "$work/train-backend-$flavour.log" \
            sh -c "cd '$work' && exec env $(flavour_env "$flavour" "$build/backend_cuda13.ptx") APSMPI_TEST_NO_CUBLAS=1 '$sim/tests/gpu/test_train_backend'"
    fi
done

echo "check-gpusim ($set_name): $failures failure(s), $(($(date +%s) - start_all)) s in all; times in $summary"
[ "$failures" -eq 0 ]
