#!/bin/bash
# netns_rsh.sh: Open MPI rsh launch agent for scripts/netns_mpirun.sh: runs the orted command inside one rank's network namespace.
#
# Open MPI's rsh/ssh launcher (--mca plm rsh --mca plm_rsh_agent THIS) calls
#     netns_rsh.sh [ssh-style options] HOST WORD...
# where HOST is one of the names given with --host (r0, r1, ...) and the words
# form one shell command line, as ssh would send it to the remote shell. This
# agent runs that command line with /bin/sh inside the namespace
# "${NETNS_MPIRUN_PREFIX}-HOST", in a private UTS namespace whose host name is
# HOST (so every rank reports its own node), with TMPDIR set to
# "${NETNS_MPIRUN_TMP}/HOST" (private session directories) and
# OMPI_MCA_rtc=^hwloc (no binding across the fake nodes that share two cores).
# With NETNS_MPIRUN_NODE_CPUS=C, node rK runs on C CPUs from K*C (modulo the
# machine's count), as a real node's ranks have CPUs of their own.
# Only scripts/netns_mpirun.sh is meant to call it; it refuses hosts whose
# namespace does not exist, so it can never run anything outside them.
set -euo pipefail

: "${NETNS_MPIRUN_PREFIX:?netns_rsh.sh: NETNS_MPIRUN_PREFIX is not set (run through netns_mpirun.sh)}"
: "${NETNS_MPIRUN_TMP:?netns_rsh.sh: NETNS_MPIRUN_TMP is not set (run through netns_mpirun.sh)}"

# skip ssh-style options that a launcher might add (-x, -T, -o Opt, -p N, ...)
while [ $# -gt 0 ]; do
    case "$1" in
        -o | -p | -l | -i | -F) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "netns_rsh.sh: usage: netns_rsh.sh HOST COMMAND..." >&2
    exit 255
fi
host=$1
shift
case "$host" in
    *[!A-Za-z0-9_-]*)
        echo "netns_rsh.sh: bad host name '$host'" >&2
        exit 255
        ;;
esac
ns="${NETNS_MPIRUN_PREFIX}-${host}"
if [ ! -e "/run/netns/$ns" ]; then
    echo "netns_rsh.sh: no network namespace $ns for host $host" >&2
    exit 255
fi
tmp="${NETNS_MPIRUN_TMP}/${host}"
mkdir -p "$tmp"

pin=()
if [ -n "${NETNS_MPIRUN_NODE_CPUS:-}" ] && [[ "$host" =~ ^r([0-9]+)$ ]]; then
    ncpu=$(nproc --all)
    list=
    for ((i = 0; i < NETNS_MPIRUN_NODE_CPUS; i++)); do
        list+="${list:+,}$(((BASH_REMATCH[1] * NETNS_MPIRUN_NODE_CPUS + i) % ncpu))"
    done
    pin=(taskset -c "$list")
fi

# shellcheck disable=SC2016  # $1 and $2 belong to the inner shell
exec "${pin[@]+"${pin[@]}"}" ip netns exec "$ns" unshare --uts -- \
    env TMPDIR="$tmp" OMPI_MCA_rtc='^hwloc' \
    /bin/sh -c 'hostname "$1" && exec /bin/sh -c "$2"' netns_rsh "$host" "$*"
