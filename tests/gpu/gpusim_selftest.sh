#!/bin/bash
# gpusim_selftest.sh: the simulator's self-tests (../shared/gpusim/selftest/*.cu), each output checked, before any project code runs on it.
#   tests/gpu/gpusim_selftest.sh SELFTEST_DIR WORK_DIR [PTX13_BIN]
# Needs the simulator's env.sh sourced. Each micro-test exercises one simulator feature the
# kernels and the plugin rely on (warp shuffles, 16-bit atomicCAS, 64-bit bfi and immediates,
# streams, events, pointer attributes, cudaMemcpyDefault); a failure here means a result of
# the project's code on the simulator cannot be trusted. With PTX13_BIN (a folder holding
# the ptx13 wrappers as bin/), hello.cu runs again from CUDA 13's PTX, to show that path works.
set -u
sel=${1:?selftest dir} work=${2:?work dir} ptx13=${3:-}
: "${SIM_NVCC:?source the simulator env.sh first}"
mkdir -p "$work"
cp "$SIM_CONFIGS"/* "$work/"
cd "$work" || exit 1
failures=0

# build NAME: the test compiled by nvcc 11.8 for compute_70 PTX, linked with the shared runtime
build() {
    $SIM_NVCC -O1 -gencode arch=compute_70,code=compute_70 -cudart shared -o "$1" "$sel/$1.cu" >"$1.build.log" 2>&1 ||
        { echo "FAILED: $1 does not build:"; sed 's/^/  | /' "$1.build.log" | head -20; return 1; }
}

# check NAME WANT [ARGS...]: runs the test; every line of WANT must be a line of its output
# (which also holds the simulator's own messages); spaces are compared squeezed
check() {
    local name=$1 want=$2 got line missing=0
    shift 2
    got=$(timeout 300 "./$name" "$@" 2>&1 | tr -s ' ' | sed 's/ *$//')
    while IFS= read -r line; do
        grep -qxF -- "$(echo "$line" | tr -s ' ' | sed 's/ *$//')" <<<"$got" || { missing=1; echo "  | missing: $line"; }
    done <<<"$want"
    if [ "$missing" -eq 0 ]; then
        echo "ok: selftest $name $*"
    else
        echo "FAILED: selftest $name $* (its output:)"
        grep -v -e '^GPGPU-Sim' <<<"$got" | tail -15 | sed 's/^/  | /'
        failures=$((failures + 1))
    fi
}

# shfl2: lane i of __shfl_xor_sync(.., 1) reads lane i^1; __shfl_down_sync(.., 2) lane i+2 within its warp
shfl2_want() {
    local i l
    for i in $(seq 0 39); do printf '%d ' $((100 + (i ^ 1))); done
    echo
    for i in $(seq 0 35); do
        l=$((i % 32))
        printf '%d ' $((100 + i - l + (l + 2 < 32 ? l + 2 : l)))
    done
    echo
}

for t in hello shfl shfl2 async async2 async3 ev; do build $t || failures=$((failures + 1)); done
check hello "err=no error bad=0 r[999]=2997"
check shfl "shfl bad=0 cas16 c[0..3]=0 16 17 0 (want 0 16 17 0) bfi64 $(
    # the expected 64-bit bfi result: the low bytes of in[0..7], in[i] = (i * 2654435761) >> 7 mod 2^32
    v=0; for i in 7 6 5 4 3 2 1 0; do v=$(((v << 8) | ((((i * 2654435761) & 0xffffffff) >> 7) & 0xff))); done
    printf '%x want %x ok' $v $v)"
check shfl2 "$(shfl2_want | tr -s ' ')"
check async "r1=0 r2=0 h[0]=7 h[19]=26 (want 7 26) attr d=2 h=1
explicit D2H: h[0]=7 h[19]=26"
for mode in 0 1 2; do
    check async2 "mode $mode: h[0]=7 h[19]=26 (want 7 26)
after cudaDeviceSynchronize: h[0]=7 h[19]=26" $mode
done
check async3 "round 0: h[0]=7 h[19]=26 (want 7 26)
round 1: h[0]=14 h[19]=33 (want 14 33)
round 2: h[0]=21 h[19]=40 (want 21 40)"
check ev "create 0
create2 0
record 0
record2 0
sync 0"

# the same hello from CUDA 13's PTX (ISA 9.0, compute_75), fed in by the ptx13 wrappers
if [ -n "$ptx13" ]; then
    if "${CUDA13:-/usr/local/cuda}/bin/nvcc" -O1 -arch=compute_75 -ptx -o hello13.ptx "$sel/hello.cu" >hello13.log 2>&1; then
        CUDA_INSTALL_PATH=$ptx13 APSMPI_PTX_OVERRIDE=$PWD/hello13.ptx check hello "err=no error bad=0 r[999]=2997"
    else
        echo "FAILED: CUDA 13's nvcc cannot make PTX of hello.cu"
        failures=$((failures + 1))
    fi
fi
[ "$failures" -eq 0 ] || { echo "$failures simulator self-test(s) failed"; exit 1; }
