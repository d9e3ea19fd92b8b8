#!/bin/bash
# gpusim_ptxas_cache.sh: runs the ptxas GPGPU-Sim calls for its resource report once per PTX file and options, then hands out the saved report.
#   gpusim_ptxas_cache.sh CACHE_DIR REAL_PTXAS ARGS...
# GPGPU-Sim starts every simulated process by running `ptxas ARGS -v FILE.ptx --output-file
# /dev/null 2> FILE.ptxas` on each PTX file it extracted, for the registers and shared memory
# of each kernel. The plugin's PTX is the same in every process of a check-gpusim run, and
# ptxas on it takes most of a process's start (tens of seconds; results/gpu.md). The report
# depends only on the options and the PTX text, so it is kept in CACHE_DIR under a hash of
# both (the PTX file's name left out) and written there only when ptxas succeeds; processes
# that miss at the same time each run ptxas and the last rename wins (the same bytes).
# scripts/ci/check_gpusim.sh writes a bin/ptxas that calls this with the flavour's REAL_PTXAS.
set -u
cache=${1:?usage: gpusim_ptxas_cache.sh CACHE_DIR REAL_PTXAS ARGS...}
real=${2:?usage: gpusim_ptxas_cache.sh CACHE_DIR REAL_PTXAS ARGS...}
shift 2
ptx= key_args=()
for a in "$@"; do
    case $a in
    *.ptx) ptx=$a key_args+=(PTX) ;;
    *) key_args+=("$a") ;;
    esac
done
# not one readable PTX file: nothing to key on, ptxas as it is
[ -n "$ptx" ] && [ -r "$ptx" ] && mkdir -p "$cache" || exec "$real" "$@"
key=$({
    printf '%s\n' "$real" "${key_args[@]}"
    cat "$ptx"
} | sha256sum | cut -d' ' -f1)
saved=$cache/$key.ptxas
if [ -f "$saved" ]; then
    cat "$saved" >&2
    exit 0
fi
"$real" "$@" 2>"$saved.$$"
rc=$?
cat "$saved.$$" >&2
if [ "$rc" -eq 0 ]; then mv -f "$saved.$$" "$saved"; else rm -f "$saved.$$"; fi
exit "$rc"
