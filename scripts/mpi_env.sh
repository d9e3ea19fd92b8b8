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
