# device_cases.sh: the checks of the device path, sourced by device_mock.sh and device_gpu.sh with DEVICE_PLUGIN set.
# Every compressed case runs twice, on host buffers and on device buffers of the plugin, and
# must give the same result bits: the device kernels are bit-exact copies of the host codec,
# so any difference is an error of the device path (order, layout, a missed wait).

# For a slow device (a simulator: scripts/ci/check_gpusim.sh) DEVICE_CASE_DIVISOR=D divides every
# element count, ring piece, scaling block and size threshold by D, so each case keeps its
# path (collective or ring, pieces per segment, blocks per call), DEVICE_CASE_MAX_NP caps the
# ranks, and DEVICE_CASE_SAMPLE=K runs the 1st, (K+1)th, ... of the device_same cases only;
# DEVICE_CASE_PICK="2 9 ..." runs the device_same cases of those numbers only (counted from 1
# in the order below; the checks that are not device_same cases always run).
# Unset: the cases as written.
div=${DEVICE_CASE_DIVISOR:-1} max_np=${DEVICE_CASE_MAX_NP:-64} sample=${DEVICE_CASE_SAMPLE:-1} case_no=0
pick=${DEVICE_CASE_PICK:+ $DEVICE_CASE_PICK }
# scaled N: N / D, odd when N is (at least 1)
scaled() {
    local n=$(($1 / div))
    [ $(($1 % 2)) -eq 1 ] && n=$((n | 1))
    echo $((n > 0 ? n : 1))
}

# mpi_scaled NP [NAME=VALUE ...] -- PROGRAM ARGS...: mpi with the case scaled as above.
mpi_scaled() {
    local np=$1 vars=() args=()
    shift
    [ "$np" -gt "$max_np" ] && np=$max_np
    if [ "$div" -gt 1 ]; then
        vars=(APSMPI_MIN_BYTES=$((65536 / div)) APSMPI_BLOCK_SIZE=$((4096 / div)))
        [[ " $* " == *" APSMPI_CHUNK_SIZE="* ]] || vars+=(APSMPI_CHUNK_SIZE=$((262144 / div)))
    fi
    while [ "$1" != "--" ]; do
        [ "$div" -gt 1 ] && [[ $1 == APSMPI_CHUNK_SIZE=* ]] && set -- "APSMPI_CHUNK_SIZE=$(scaled "${1#*=}")" "${@:2}"
        vars+=("$1")
        shift
    done
    shift
    while [ $# -gt 0 ]; do
        args+=("$1")
        if [ "$div" -gt 1 ] && { [ "$1" = --count ] || [ "$1" = --block ]; }; then
            args+=("$(scaled "$2")")
            shift
        fi
        shift
    done
    mpi "$np" yes "${vars[@]}" -- "${args[@]}"
}

# device_same NAME NP VARS... -- ARGS...: host run, then device run, same checksum.
device_same() {
    local name=$1 np=$2 vars=() want
    shift 2
    case_no=$((case_no + 1))
    [ $(((case_no - 1) % sample)) -eq 0 ] || return 0
    [ -z "$pick" ] || [[ $pick == *" $case_no "* ]] || return 0
    while [ "$1" != "--" ]; do
        vars+=("$1")
        shift
    done
    shift
    if ! with_checksum mpi_scaled "$np" "${vars[@]}" -- "$CHECK" "$@"; then
        expect "$name (host run)" false
        return
    fi
    want=$(checksum)
    expect "$name" same_checksum "$want" mpi_scaled "$np" "${vars[@]}" APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
        "$CHECK" --device "$DEVICE_PLUGIN" "$@"
}

tol=0.21
device_same "allreduce, one collective" 4 -- --count 123457 --block 4096 --tol $tol --expect-inexact
device_same "allreduce, pipelined, several device stages" 3 -- --count 3000001 --block 4096 --tol $tol --expect-inexact
device_same "allreduce MPI_IN_PLACE, ring" 4 -- --in-place --count 2500000 --block 4096 --tol $tol --expect-inexact
device_same "allreduce MPI_IN_PLACE, one collective" 2 -- --in-place --count 100000 --block 4096 --tol $tol --expect-inexact
device_same "reduce_scatter uneven, collective" 3 -- --op reduce_scatter --count 200003 --block 4096 --tol $tol --expect-inexact
device_same "reduce_scatter uneven, ring" 3 -- --op reduce_scatter --count 2000003 --block 4096 --tol $tol --expect-inexact
device_same "reduce_scatter MPI_IN_PLACE, ring" 3 -- --op reduce_scatter --in-place --count 2000003 --block 4096 --tol $tol --expect-inexact
device_same "reduce_scatter with a zero count" 3 -- --op reduce_scatter --zero-count --count 200003 --block 4096 --tol $tol
device_same "allreduce, only the send buffer on the device" 3 -- --device-side send --count 1500000 --block 4096 --tol $tol --expect-inexact
device_same "allreduce, only the receive buffer on the device" 3 -- --device-side recv --count 1500000 --block 4096 --tol $tol --expect-inexact
device_same "reduce_scatter, only the receive buffer on the device" 3 -- --op reduce_scatter --device-side recv --count 200003 --block 4096 --tol $tol --expect-inexact
device_same "reduce_scatter_block MPI_IN_PLACE, 6-bit" 4 APSMPI_FORMAT=e3m2 -- --op reduce_scatter_block --in-place --count 200000 --block 4096 --tol 0.46 --expect-inexact
device_same "reduce_scatter_block, ring, 7-bit" 4 APSMPI_FORMAT=e3m3 -- --op reduce_scatter_block --count 2400000 --block 4096 --tol 0.2 --expect-inexact
device_same "allreduce fp16" 3 APSMPI_FORMAT=fp16 -- --count 1500000 --block 4096 --tol 0.002 --expect-inexact
device_same "allreduce 12-bit e5m6" 2 APSMPI_FORMAT=e5m6 -- --count 300001 --block 4096 --tol 0.02 --expect-inexact
device_same "allreduce stochastic rounding" 3 APSMPI_ROUNDING=stochastic -- --count 1200000 --block 4096 --tol 0.3 --expect-inexact
device_same "allreduce, scaling none" 2 APSMPI_SCALING=none APSMPI_FORMAT=e5m2 -- --uniform --count 300000 --tol 0.3 --expect-inexact
device_same "allreduce, per-call APS" 3 APSMPI_SCALING=aps -- --uniform --count 700001 --tol $tol --expect-inexact
device_same "allreduce, smaller ring pieces" 4 APSMPI_CHUNK_SIZE=65536 -- --count 1000003 --block 4096 --tol $tol --expect-inexact
device_same "allreduce, repeated (buffers reused)" 2 -- --count 400000 --repeat 3 --block 4096 --tol $tol --expect-inexact
device_same "inf/NaN: sent in fp32 through host copies" 3 -- --nonfinite --count 300000
device_same "reduce_scatter, inf/NaN: fp32 through host copies" 3 -- --op reduce_scatter --nonfinite --count 300000
device_same "reduce_scatter_block MPI_IN_PLACE, inf/NaN" 3 -- --op reduce_scatter_block --in-place --nonfinite --count 300000
device_same "sums that may pass FP32's largest value: fp32 through host copies" 3 -- --overflow --count 70000 --block 4096 --tol $tol

# the statistics count the device's inputs as the host's
stats_of() { grep -o 'flushed to zero [0-9]* of [0-9]*' "$TMPOUT/err"; }
expect "statistics of host buffers, to compare with" mpi_scaled 3 APSMPI_STATS=1 -- "$CHECK" --count 2000000 --block 4096
host_stats=$(stats_of)
expect "statistics of device buffers" mpi_scaled 3 APSMPI_STATS=1 APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- \
    "$CHECK" --device "$DEVICE_PLUGIN" --count 2000000 --block 4096
expect "... equal the host's ($host_stats)" test -n "$host_stats" -a "$(stats_of)" = "$host_stats"
device_same "allreduce mxfp4, pipelined" 3 APSMPI_FORMAT=mxfp4 -- --count 1500000 --block 4096 --tol 0.57 --expect-inexact
device_same "allreduce MPI_IN_PLACE mxfp8e5m2, one piece" 2 APSMPI_FORMAT=mxfp8e5m2 -- --in-place --count 100001 --block 4096 --tol 0.27 --expect-inexact
device_same "reduce_scatter_block mxfp6, only the receive buffer on the device" 3 APSMPI_FORMAT=mxfp6 -- --op reduce_scatter_block --device-side recv --count 200064 --block 4096 --tol 0.27 --expect-inexact
device_same "allreduce MPI_IN_PLACE mxfp5 (E3M1), pipelined" 3 APSMPI_FORMAT=mxfp5 -- --in-place --count 1500001 --block 4096 --tol 0.57 --expect-inexact

# Requests on device buffers started in crossed orders on two communicators (legal MPI;
# gpu_requests_check.c): the starting call returns at once (it ran them to their end, and this
# hung): at MPI_THREAD_MULTIPLE a worker thread runs each, below it each is reduced on host
# copies of the GPU buffers. Compressed, each the blocking call's bits.
# (DEVICE_CASE_THREAD_LEVELS: the levels run; device_gpusim.sh runs "single" only)
GPU_REQUESTS=${GPU_REQUESTS:-$top_builddir/tests/mpi/gpu_requests_check}
for level in ${DEVICE_CASE_THREAD_LEVELS:-multiple single}; do
    expect "$level: requests on device buffers started in crossed orders, 3 ranks: no hang" \
        mpi_scaled 3 APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" APSMPI_STATS=1 -- "$GPU_REQUESTS" "$DEVICE_PLUGIN" \
        --count 300001 $([ $level = single ] && echo --single)
    expect "... the blocking call's bits" grep -q '^gpu_requests_check: ok' "$TMPOUT/out"
    expect "... compressed as requests" grep -Eq "requests \(MPI_I\*, persistent\) (6|18);" "$TMPOUT/err"
done

# APSMPI_FORMAT=auto on device buffers: the kernels measure each contribution as they encode it
# (every block, integer counts), so a GPU bucket takes the host bucket's width call by call, from
# the same counts. Each case runs tests/mpi/auto_check on host buffers, then on device buffers:
# on every rank the widths and the measured counts of each call (the debug lines "auto: a
# N-element call on W, ..." and "auto: measured ...: contribution ...; sums ...") must be the
# host run's, and the widths the ones named. Sizes shrink with DEVICE_CASE_DIVISOR as above;
# DEVICE_CASE_AUTO_PICK="1 3 ..." runs those auto cases only (counted from 1 in the order below).
AUTO_CHECK=${AUTO_CHECK:-$top_builddir/tests/mpi/auto_check}
auto_pick=${DEVICE_CASE_AUTO_PICK:+ $DEVICE_CASE_AUTO_PICK } auto_no=0
# auto_picked: counts an auto case; 1 (false) when DEVICE_CASE_AUTO_PICK leaves it out
auto_picked() {
    auto_no=$((auto_no + 1))
    [ -z "$auto_pick" ] || [[ $auto_pick == *" $auto_no "* ]]
}
# auto_lines RANK: that rank's auto lines of the last run, in order
auto_lines() { sed -n "s/^apsmpi\[$1\] DEBUG: auto: \(a [0-9]*-element call on .*\|measured .*\)/\1/p" "$TMPOUT/err"; }
# auto_widths RANK: the widths of that rank's calls, in order, on one line
auto_widths() { auto_lines "$1" | sed -n 's/^a [0-9]*-element call on \([a-z0-9]*\),.*/\1/p' | tr '\n' ' '; }
# auto_run NP [NAME=VALUE ...] -- ARGS...: auto_check under auto, with the debug lines, at a
# budget of 0.2 (as auto.sh's checks: the widths below were made for it)
auto_run() {
    local np=$1
    shift
    mpi_scaled "$np" APSMPI_FORMAT=auto APSMPI_ERROR_BUDGET=0.2 APSMPI_STATS=1 APSMPI_LOG_LEVEL=debug "$@"
}
# auto_widths_are NP WIDTHS: every rank's widths of the last run are WIDTHS
auto_widths_are() {
    local r
    for ((r = 0; r < $1; r++)); do
        [ "$(auto_widths $r)" = "$2" ] || { echo "rank $r: widths $(auto_widths $r), not $2"; return 1; }
    done
}
# auto_device_same NP: a run of auto_check on device buffers (auto_vars, auto_args) whose every
# rank's lines are those of the host run (saved in $TMPOUT/auto_host.RANK); the first difference shown
auto_device_same() {
    local r
    auto_run "$1" "${auto_vars[@]}" APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- "$AUTO_CHECK" --device "$DEVICE_PLUGIN" \
        "${auto_args[@]}" || return 1
    for ((r = 0; r < $1; r++)); do
        auto_lines $r >"$TMPOUT/auto_device.$r"
        if ! cmp -s "$TMPOUT/auto_host.$r" "$TMPOUT/auto_device.$r"; then
            echo "rank $r: host run (<) and device run (>) differ:"
            diff "$TMPOUT/auto_host.$r" "$TMPOUT/auto_device.$r" | head -6
            return 1
        fi
    done
}
# auto_same NAME NP 'WIDTHS' [NAME=VALUE ...] -- ARGS...: host run, then device run, as above
auto_same() {
    local name=$1 np=$2 want=$3 r
    shift 3
    auto_picked || return 0
    auto_vars=()
    while [ "$1" != "--" ]; do
        auto_vars+=("$1")
        shift
    done
    shift
    auto_args=("$@")
    [ "$np" -gt "$max_np" ] && np=$max_np
    if ! auto_run "$np" "${auto_vars[@]}" -- "$AUTO_CHECK" "${auto_args[@]}" || ! auto_widths_are "$np" "$want"; then
        expect "auto: $name (host run: widths $want)" false
        return
    fi
    for ((r = 0; r < np; r++)); do auto_lines $r >"$TMPOUT/auto_host.$r"; done
    expect "auto: $name: on device buffers, every rank's widths ($want) and measured counts those of host buffers" \
        auto_device_same "$np"
}
spread6="mxfp8 mxfp4 mxfp4 mxfp4 mxfp4 mxfp4 mxfp4 mxfp5 mxfp6 mxfp6 mxfp6 mxfp6 "
# Gaussian: 1 call on mxfp8 (a new bucket's width; its first call lowers it at once), then mxfp4;
# from call 6 a few large values among many small ones in each block of 32: that call on mxfp4
# flushes ~94%, raised to mxfp5 (predicted within the budget), where the owners' sums of 3 ranks
# flush over it: then mxfp6 (as in auto.sh; a reduce-scatter encodes no sums: it stays on mxfp5)
auto_same "allreduce, Gaussian then spread from call 6" 3 "$spread6" -- --count 100000 --calls 12 --spread-from 6 \
    --max-lost 0.2
# the small values 2^-21 below: mxfp8 flushes them too, so the bucket goes from mxfp4 to FP32
# (sent through host copies, measured there), and down to mxfp4 after 4 Gaussian calls again
auto_same "allreduce MPI_IN_PLACE, values mxfp8 flushes from call 2 to 8: FP32 and back" 3 \
    "mxfp8 mxfp4 mxfp4 fp32 fp32 fp32 fp32 fp32 fp32 fp32 fp32 fp32 mxfp4 mxfp4 " -- --in-place --count 100000 \
    --calls 14 --spread-from 2 --spread-to 8 --spread-depth 21
auto_same "reduce_scatter_block, spread from call 6" 3 "${spread6% mxfp6 mxfp6 mxfp6 mxfp6 } mxfp5 mxfp5 mxfp5 mxfp5 " -- \
    --op reduce_scatter --count 100002 --calls 12 \
    --spread-from 6 --max-lost 0.2
# requests: below MPI_THREAD_MULTIPLE staged on host copies (the host codec measures, the bucket
# is the job's GPU buffer, not the copy); at it, on a worker thread with the GPU's kernels
for level in ${DEVICE_CASE_THREAD_LEVELS:-multiple single}; do
    auto_same "$level: MPI_Iallreduce, spread from call 6" 3 "$spread6" -- --op iallreduce --count 100000 --calls 12 \
        --spread-from 6 --max-lost 0.2 $([ $level = multiple ] && echo --thread-multiple)
done
# error feedback: a GPU contribution keeps no residual (the sums do), so its data is not the
# host run's; it is raised off mxfp4 at the call that flushes too much, and never goes back to it
# (each encoding within the budget from there: the lost share of the result, two roundings, may
# pass it), every rank on the same widths
auto_feedback() {
    local r w0
    auto_run 3 APSMPI_ERROR_FEEDBACK=1 APSMPI_DEVICE_PLUGIN="$DEVICE_PLUGIN" -- "$AUTO_CHECK" --device "$DEVICE_PLUGIN" \
        --count 100000 --calls 12 --spread-from 6 || return 1
    w0=$(auto_widths 0)
    [[ $w0 =~ ^mxfp8\ (mxfp4 ){6}(mxfp[568] ){5}$ ]] || { echo "rank 0: widths $w0"; return 1; }
    for r in 1 2; do [ "$(auto_widths $r)" = "$w0" ] || { echo "rank $r: widths $(auto_widths $r), not $w0"; return 1; }; done
    grep 'apsmpi stats: auto' "$TMPOUT/err" | grep -Eq 'mxfp4 calls [0-9]+, .*over budget 3, raised 3,'
}
auto_picked && expect "auto: allreduce with error feedback on device buffers, spread from call 6: raised off mxfp4, every rank alike" \
    auto_feedback
