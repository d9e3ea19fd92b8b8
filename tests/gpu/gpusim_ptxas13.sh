#!/bin/bash
# gpusim_ptxas13.sh: the ptxas GPGPU-Sim calls for its resource report, CUDA 13's (as ../shared/gpusim/ptx13/ptxas), its report filtered once ptxas has ended.
# The kit's wrapper filters through a process substitution that can still be writing when
# the wrapper exits; on a loaded machine GPGPU-Sim then reads a cut report and stops with
# "ERROR while parsing output of ptxas" (results/gpu_sim/README.md). CUDA 13 has no sm_70: sm_75.
args=()
for a in "$@"; do
    case "$a" in
    --gpu-name=sm_*) args+=("--gpu-name=${APSMPI_PTXAS_SM:-sm_75}") ;;
    *) args+=("$a") ;;
    esac
done
report=$(mktemp)
"${CUDA13:-/usr/local/cuda}/bin/ptxas" "${args[@]}" 2>"$report"
rc=$?
sed -e 's/, used [0-9]* barriers//' -e '/Compile time/d' "$report" >&2
rm -f "$report"
exit "$rc"
