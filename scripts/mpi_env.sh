#!/bin/bash
# mpi_env.sh: sourced by the measurement scripts: the library of each algorithm, and a clean environment for mpirun.

# lib_for ALG: the library given for ALG (alg_libs holds ALG=PATH from --alg-lib), else $lib.
# shellcheck disable=SC2154  # lib and alg_libs belong to the script that sources this file
lib_for() {
    local spec
    for spec in "${alg_libs[@]+"${alg_libs[@]}"}"; do
        [ "${spec%%=*}" = "$1" ] && { echo "${spec#*=}"; return; }
    done
    echo "$lib"
}

# clean_mpi_env: nothing of the caller's LD_PRELOAD or APSMPI_* reaches a run (a run without the
# library must be plain MPI, one with it gets exactly the settings named); mpirun may run as
# root, says nothing about missing fast networks and binds nothing.
clean_mpi_env() {
    local v
    unset LD_PRELOAD
    for v in $(compgen -e | grep '^APSMPI_'); do unset "$v"; done
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
    export OMPI_MCA_rtc=^hwloc
}

# study_run PREFIX OUT COLUMN WHAT LIBRARY -- COMMAND...: one run of a resumable training
# study. Skipped when PREFIX.rc holds 0 (done before); otherwise COMMAND runs with its output
# in OUT and no input, and must write its CSV to PREFIX.csv.new (moved to PREFIX.csv when it
# ends). LIBRARY yes: a run whose output has no apsmpi statistics line with compressed calls
# fails (rc 99: the library did not compress). The exit status goes to PREFIX.rc; one line
# says WHAT ran, its status, the last value of the CSV's column COLUMN and the seconds it took.
# Returns the status (0 for a run done before).
study_run() {
    local prefix=$1 out=$2 column=$3 what=$4 library=$5 rc start=$SECONDS
    shift 6
    [ "$(cat "$prefix.rc" 2>/dev/null)" = 0 ] && return 0
    "$@" >"$out" 2>&1 </dev/null
    rc=$?
    if [ $rc = 0 ] && [ "$library" = yes ] && ! grep -q 'apsmpi stats: .*calls compressed [1-9]' "$out"; then
        rc=99
    fi
    mv -f "$prefix.csv.new" "$prefix.csv" 2>/dev/null
    echo $rc >"$prefix.rc"
    printf '[%s] %s  rc %d  %s  (%d s)\n' "$(date -u +%H:%M:%S)" "$what" $rc \
        "$(awk -F, -v c="$column" 'NR == 1 { h = $c } NR > 1 { a = $c } END { print h, a }' "$prefix.csv" 2>/dev/null)" \
        $((SECONDS - start))
    return $rc
}
