#!/bin/bash
# device_gpusim.sh: the device path with the real CUDA plugin on GPGPU-Sim, a PTX simulator (run by scripts/ci/check_gpusim.sh): same bits as host buffers.
# top_builddir: the project built for the simulator; GPUSIM_WORK: a folder holding the
# simulator's configuration files. The cases of device_cases.sh, shrunk by
# DEVICE_CASE_DIVISOR (tens of thousands of elements), on 2 and 3 ranks.
. "$top_builddir/tests/mpi/env.sh"
: "${GPUSIM_WORK:?run by scripts/ci/check_gpusim.sh}"
export MPI_TIMEOUT=${MPI_TIMEOUT:-900}

# every check says the time since the previous one: wall clock, and CPU of all the processes
# (user + system; what a machine of its own would need)
cpu_seconds() { # into cpu_now: the CPU seconds of this shell's finished children (times, not in a subshell)
    times >"$TMPOUT/times"
    cpu_now=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t + 0.5 }' "$TMPOUT/times")
}
cpu_seconds
case_t0=$SECONDS case_cpu=$cpu_now
eval "$(declare -f expect | sed '1s/^expect/expect_untimed/')"
expect() {
    expect_untimed "$@"
    cpu_seconds
    echo "    ($((SECONDS - case_t0)) s wall, $((cpu_now - case_cpu)) s cpu)"
    case_t0=$SECONDS case_cpu=$cpu_now
}
DEVICE_PLUGIN="$top_builddir/.libs/libapsmpi_cuda.so"
export PYTORCH_BIN=$DEVICE_PLUGIN # the simulator's switch: the kernels' PTX is in this library
DEVICE_CASE_MAX_NP=3

# Each rank runs in a folder of its own (the simulator writes the PTX it extracts into the
# working folder) holding the configuration files; the simulator's lines leave stdout.
# in_rank_folder PROGRAM WRAPPER: writes WRAPPER, which runs PROGRAM so.
in_rank_folder() {
    cat >"$2" <<SCRIPT
#!/bin/bash
d="$GPUSIM_WORK/rank\${OMPI_COMM_WORLD_RANK:-0}"
mkdir -p "\$d" && cp "$GPUSIM_WORK"/*.config "$GPUSIM_WORK"/*.icnt "\$d/" && cd "\$d" || exit 1
"$1" "\$@" | { grep -v '^GPGPU-Sim' || true; }
exit "\${PIPESTATUS[0]}"
SCRIPT
    chmod +x "$2"
}
in_rank_folder "$CHECK" "$TMPOUT/reduce_check_in_rank_folder"
CHECK=$TMPOUT/reduce_check_in_rank_folder
in_rank_folder "$top_builddir/tests/mpi/gpu_requests_check" "$TMPOUT/gpu_requests_in_rank_folder"
GPU_REQUESTS=$TMPOUT/gpu_requests_in_rank_folder
in_rank_folder "$top_builddir/tests/mpi/auto_check" "$TMPOUT/auto_check_in_rank_folder"
AUTO_CHECK=$TMPOUT/auto_check_in_rank_folder
# GPGPU-Sim's runtime is not thread-safe: two host threads launching kernels at once abort it in
# its PTX analysis (function_info::find_dominators, seen with the worker threads that run
# requests at MPI_THREAD_MULTIPLE). CUDA's runtime is; the mock GPU runs that level.
DEVICE_CASE_THREAD_LEVELS=single
"$CHECK" --device "$DEVICE_PLUGIN" --probe || exit $?

. "$(dirname "$0")/device_cases.sh"

# Without APSMPI_DEVICE_PLUGIN the library itself must tell the device buffers from host
# ones: under the simulator there is no libcuda.so.1, only the runtime (src/device/device.c).
expect "host buffers, to compare with" with_checksum mpi_scaled 2 -- "$CHECK" --count 300001 --block 4096 --tol 0.21 \
    --expect-inexact
want=$(checksum)
expect "device buffers found without APSMPI_DEVICE_PLUGIN (the runtime asked, no driver library)" \
    same_checksum "$want" mpi_scaled 2 APSMPI_STATS=1 -- "$CHECK" --device "$DEVICE_PLUGIN" --count 300001 \
    --block 4096 --tol 0.21 --expect-inexact
expect "... and compressed on the device" grep -q 'calls compressed [1-9]' "$TMPOUT/err"
finish
