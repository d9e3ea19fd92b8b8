#!/bin/bash
# netns_mpirun.sh: runs an MPI job on fake nodes, one network namespace per node (one rank each, or several sharing memory), each behind a rate-limited (tc) link to a software switch.
#
# Usage:
#   scripts/netns_mpirun.sh [OPTIONS] -- [MPIRUN-OPTIONS...] -- PROGRAM [ARGS...]
#   scripts/netns_mpirun.sh [OPTIONS] -- PROGRAM [ARGS...]
# With two "--", the words between them go to mpirun and the rest is the
# program; with one, everything after it is the program. (A program that itself
# takes a "--" needs both separators: "-- -- prog a -- b".)
#
# Options:
#   --np N          ranks (required; 1..250 nodes)
#   --ranks-per-node K  K ranks share each node's namespace (default 1): nodes =
#                   ceil(N/K), ranks 0..K-1 on node r0, K..2K-1 on r1, ...; the
#                   last node gets the rest when K does not divide N. The ranks
#                   of one node reach each other over shared memory (btl vader)
#                   and other nodes over TCP through the node's shaped link.
#   --rate RATE     link rate of every rank, each direction, in tc syntax
#                   (500mbit, 1gbit, 10gbit, 125mbps...) or "none" (default 1gbit)
#   --delay TIME    extra one-way latency rank to rank (tc time: 50us, 0.1ms);
#                   half of it is added on each of the two hops (default none);
#                   needs sch_netem, which the kernel of the dev VM lacks
#   --burst BYTES   token bucket size (default: rate x 1 ms, at least 64 KiB)
#   --limit-ms MS   queue of each shaped link, in ms at the rate (default 5)
#   --mtu N         MTU of all links (default 1500)
#   --cc NAME       TCP congestion control between the namespaces, set on the
#                   subnet's route (default cubic; "system" keeps the default
#                   new namespaces inherit, bbr on this VM)
#   --timeout S     bound the whole run to S seconds (default 600); exit 124
#   --node-cpus C   CPUs of each node: its ranks (and their threads) run on C
#                   of this machine's CPUs, node K on CPUs K*C.. (modulo the
#                   count), as a real node's on its own; "all": every node on
#                   all of them (default: CPUs / nodes, at least 1)
#   --stats         after the run, print bytes sent and packets dropped per
#                   shaped link (from tc -s)
#   --verbose       print the setup commands
#   -h, --help
#
# Topology (all addresses from the benchmarking range 198.18.0.0/24, used only
# inside the namespaces created here; nothing is added to the root namespace):
#
#   apsmpi-<pid>-h   (mpirun, 198.18.0.254) --veth--+
#   apsmpi-<pid>-r0  (node 0, 198.18.0.1)   --veth--+-- bridge br0 in apsmpi-<pid>-sw
#   apsmpi-<pid>-rK  (node K, 198.18.0.K+1) --veth--+
#
# Every node's link is shaped in both directions: a tbf qdisc (plus a netem
# child when --delay is given) on the egress of the rank's end (upload) and on
# the egress of the switch port (download); with several ranks per node they
# share it, as the ranks of a real node share its network card. The head link (mpirun's
# out-of-band control traffic only) is not shaped.
#
# mpirun runs in the head namespace with
#   --mca plm rsh --mca plm_rsh_agent scripts/netns_rsh.sh --mca plm_rsh_no_tree_spawn 1
#   --host r0:1,r1:1,... -np N --map-by node --bind-to none
#   --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 198.18.0.0/24
#   --mca oob_tcp_if_include 198.18.0.0/24 --mca mpi_yield_when_idle 1
# so rank traffic can only use TCP over the shaped links (no shared memory, no
# UCX). With --ranks-per-node K > 1: --host r0:K,r1:K,... --map-by slot and
# --mca btl tcp,vader,self (shared memory within a node, TCP between nodes).
# The agent starts each orted inside its node's namespace with its own
# host name (rK), TMPDIR and OMPI_MCA_rtc=^hwloc. Each namespace gets an
# /etc/hosts naming all nodes (through /etc/netns/<ns>/, removed afterwards).
#
# A trap removes, on any exit (success, error, timeout, Ctrl-C), every process
# left in our namespaces, the namespaces (and with them all veths and the
# bridge), /etc/netns/<ns> and the temporary directory.
#
# Example (ring allreduce over 4 ranks at 1 Gbit/s):
#   scripts/netns_mpirun.sh --np 4 --rate 1gbit -- \
#       --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 -- \
#       ./apps/apsmpi_bench --op allreduce
# Must run as root (namespaces, tc). Exit status: mpirun's, 124 on timeout,
# 2 on usage errors, 3 when the network could not be set up.
set -euo pipefail

prog=netns_mpirun.sh
die() {
    echo "$prog: $*" >&2
    exit 2
}

np=
ppn=1
rate=1gbit
delay=
burst=
limit_ms=5
mtu=1500
cc=cubic
run_timeout=600
verbose=0
stats=0
node_cpus=

while [ $# -gt 0 ]; do
    case "$1" in
        --np) np=${2:?--np needs a value}; shift 2 ;;
        --ranks-per-node) ppn=${2:?--ranks-per-node needs a value}; shift 2 ;;
        --rate) rate=${2:?--rate needs a value}; shift 2 ;;
        --delay) delay=${2:?--delay needs a value}; shift 2 ;;
        --burst) burst=${2:?--burst needs a value}; shift 2 ;;
        --limit-ms) limit_ms=${2:?--limit-ms needs a value}; shift 2 ;;
        --mtu) mtu=${2:?--mtu needs a value}; shift 2 ;;
        --cc) cc=${2:?--cc needs a value}; shift 2 ;;
        --timeout) run_timeout=${2:?--timeout needs a value}; shift 2 ;;
        --verbose) verbose=1; shift ;;
        --stats) stats=1; shift ;;
        --node-cpus) node_cpus=${2:?--node-cpus needs a value}; shift 2 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done

# split "MPIRUN-OPTIONS -- PROGRAM ARGS" / "PROGRAM ARGS"
mpirun_opts=()
prog_args=()
have_sep=0
for a in "$@"; do
    if [ "$a" = "--" ]; then have_sep=1; break; fi
done
if [ "$have_sep" = 1 ]; then
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do mpirun_opts+=("$1"); shift; done
    shift
fi
prog_args=("$@")

[ -n "$np" ] || die "--np is required (see --help)"
if ! [[ "$ppn" =~ ^[0-9]+$ ]] || [ "$ppn" -lt 1 ]; then
    die "--ranks-per-node must be a whole number from 1, got '$ppn'"
fi
if ! [[ "$np" =~ ^[0-9]+$ ]] || [ "$np" -lt 1 ] || [ $(((np + ppn - 1) / ppn)) -gt 250 ]; then
    die "--np must be 1..250 nodes of --ranks-per-node ranks, got '$np'"
fi
nodes=$(((np + ppn - 1) / ppn))
cpus=$(nproc)
[ -n "$node_cpus" ] || node_cpus=$((cpus / nodes > 0 ? cpus / nodes : 1))
if [ "$node_cpus" != all ] && { ! [[ "$node_cpus" =~ ^[0-9]+$ ]] || [ "$node_cpus" -lt 1 ] || [ "$node_cpus" -gt "$cpus" ]; }; then
    die "--node-cpus must be all or 1..$cpus, got '$node_cpus'"
fi
if ! [[ "$run_timeout" =~ ^[0-9]+$ ]] || [ "$run_timeout" -lt 1 ]; then
    die "--timeout must be a positive integer, got '$run_timeout'"
fi
if ! [[ "$mtu" =~ ^[0-9]+$ ]] || [ "$mtu" -lt 576 ] || [ "$mtu" -gt 65000 ]; then
    die "bad --mtu '$mtu'"
fi
[[ "$limit_ms" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "bad --limit-ms '$limit_ms'"
[ ${#prog_args[@]} -gt 0 ] || die "no program given (see --help)"
for a in "${mpirun_opts[@]+"${mpirun_opts[@]}"}"; do
    case "$a" in
        -np | -n | --np | --n | -H | --host | -host | --hostfile | -hostfile | --machinefile)
            die "mpirun option '$a' is set by the harness; do not pass it" ;;
    esac
done
[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, tc)"
for tool in ip tc mpirun unshare timeout; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done

# --rate: tc syntax -> bytes per second (for the default burst and queue)
rate_bps=0
if [ "$rate" != none ]; then
    rate_bps=$(awk -v r="$rate" 'BEGIN {
        if (!match(r, /^[0-9]+([.][0-9]+)?/)) exit 1
        v = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
        if (u == "bit") m = 1/8; else if (u == "kbit") m = 1e3/8; else if (u == "mbit") m = 1e6/8
        else if (u == "gbit") m = 1e9/8; else if (u == "tbit") m = 1e12/8
        else if (u == "bps") m = 1; else if (u == "kbps") m = 1e3; else if (u == "mbps") m = 1e6
        else if (u == "gbps") m = 1e9; else exit 1
        printf "%.0f\n", v * m }') || die "bad --rate '$rate' (e.g. 1gbit, 10gbit, 500mbit, none)"
    [ "$rate_bps" -gt 0 ] || die "bad --rate '$rate'"
fi
# --delay: tc time -> microseconds; half per hop
hop_delay=
if [ -n "$delay" ]; then
    delay_us=$(awk -v d="$delay" 'BEGIN {
        if (!match(d, /^[0-9]+([.][0-9]+)?/)) exit 1
        v = substr(d, 1, RLENGTH); u = tolower(substr(d, RLENGTH + 1))
        if (u == "us" || u == "usec") m = 1; else if (u == "ms" || u == "msec") m = 1e3
        else if (u == "s" || u == "sec" || u == "") m = 1e6; else exit 1
        printf "%.3f\n", v * m }') || die "bad --delay '$delay' (e.g. 50us, 0.1ms)"
    hop_delay=$(awk -v u="$delay_us" 'BEGIN { printf "%.3fus\n", u / 2 }')
fi
if [ "$rate" != none ]; then
    if [ -z "$burst" ]; then
        burst=$(( rate_bps / 1000 ))
        [ "$burst" -ge 65536 ] || burst=65536
    fi
    [[ "$burst" =~ ^[0-9]+$ ]] || die "--burst must be a byte count, got '$burst'"
    # queue: limit_ms at the rate, plus the bucket, at least 64 packets
    qlimit=$(awk -v b="$rate_bps" -v ms="$limit_ms" -v burst="$burst" -v mtu="$mtu" \
        'BEGIN { q = b * ms / 1000 + burst; if (q < 64 * mtu) q = 64 * mtu; printf "%.0f\n", q }')
fi

# ---------------------------------------------------------------- set-up
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
agent="$here/netns_rsh.sh"
[ -x "$agent" ] || die "launch agent $agent missing or not executable"

prefix="apsmpi-$$"
head_ns="${prefix}-h"
sw_ns="${prefix}-sw"
subnet=198.18.0.0/24
created_ns=()
tmp=
job=

log() { if [ "$verbose" = 1 ]; then echo "$prog: $*" >&2; fi; }
run() { log "+ $*"; "$@"; }

# shellcheck disable=SC2317  # called through the trap
cleanup() {
    local rc=$? ns pid pids
    set +e
    trap - EXIT INT TERM HUP
    if [ -n "$job" ]; then
        kill -TERM "$job" 2>/dev/null # timeout(1), which passes it on to mpirun
    fi
    for ns in "${created_ns[@]+"${created_ns[@]}"}"; do
        # processes left in our namespaces (orted, ranks): ours, ended by id
        pids=$(ip netns pids "$ns" 2>/dev/null)
        if [ -n "$pids" ]; then
            log "killing leftover processes in $ns: $pids"
            for pid in $pids; do kill -TERM "$pid" 2>/dev/null; done
        fi
    done
    for ns in "${created_ns[@]+"${created_ns[@]}"}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            pids=$(ip netns pids "$ns" 2>/dev/null)
            [ -z "$pids" ] && break
            sleep 0.2
        done
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
    done
    if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

setup_fail() {
    echo "$prog: network set-up failed: $*" >&2
    exit 3
}

tmp=$(mktemp -d /tmp/netns_mpirun.XXXXXX)
export NETNS_MPIRUN_PREFIX="$prefix" NETNS_MPIRUN_TMP="$tmp"

hosts_file="$tmp/hosts"
{
    echo "127.0.0.1 localhost"
    echo "198.18.0.254 head"
    for ((r = 0; r < nodes; r++)); do echo "198.18.0.$((r + 1)) r$r"; done
} >"$hosts_file"

new_ns() {
    local ns=$1
    run ip netns add "$ns" || setup_fail "ip netns add $ns"
    created_ns+=("$ns")
    mkdir -p "/etc/netns/$ns"
    cp "$hosts_file" "/etc/netns/$ns/hosts"
    : >"/etc/netns/$ns/resolv.conf" # no DNS inside: names come from hosts
    run ip -n "$ns" link set lo up || setup_fail "lo up in $ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
        >/dev/null 2>&1 || true
}

# shape egress of DEV in NS: tbf at the rate (+ netem delay child)
shape() {
    local ns=$1 dev=$2
    if [ "$rate" != none ]; then
        run ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: \
            tbf rate "$rate" burst "$burst" limit "$qlimit" || setup_fail "tc tbf on $dev in $ns"
        if [ -n "$hop_delay" ]; then
            run ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:1 handle 10: \
                netem delay "$hop_delay" limit 100000 || setup_fail "tc netem on $dev in $ns (--delay needs the kernel's sch_netem)"
        fi
    elif [ -n "$hop_delay" ]; then
        run ip netns exec "$ns" tc qdisc add dev "$dev" root handle 10: \
            netem delay "$hop_delay" limit 100000 || setup_fail "tc netem on $dev in $ns (--delay needs the kernel's sch_netem)"
    fi
}

new_ns "$sw_ns"
run ip -n "$sw_ns" link add br0 type bridge forward_delay 0 stp_state 0 mcast_snooping 0 ||
    setup_fail "bridge"
ip netns exec "$sw_ns" sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0 \
    net.bridge.bridge-nf-call-arptables=0 >/dev/null 2>&1 || true
run ip -n "$sw_ns" link set br0 mtu "$mtu" up || setup_fail "bridge up"

# attach NS (interface "eth0", address ADDR) to switch port PORT
attach() {
    local ns=$1 addr=$2 port=$3
    run ip link add eth0 mtu "$mtu" netns "$ns" type veth peer name "$port" mtu "$mtu" netns "$sw_ns" ||
        setup_fail "veth $ns <-> $port"
    run ip -n "$sw_ns" link set "$port" master br0 up || setup_fail "port $port"
    run ip -n "$ns" addr add "$addr/24" dev eth0 || setup_fail "address $addr"
    run ip -n "$ns" link set eth0 up || setup_fail "eth0 up in $ns"
    if [ "$cc" != system ]; then
        # per-route congestion control (a namespace may not change its default)
        run ip -n "$ns" route replace "$subnet" dev eth0 proto kernel scope link src "$addr" \
            congctl "$cc" || setup_fail "TCP congestion control '$cc' (see net.ipv4.tcp_available_congestion_control)"
    fi
}

new_ns "$head_ns"
attach "$head_ns" 198.18.0.254 head
hostlist=
for ((r = 0; r < nodes; r++)); do
    ns="${prefix}-r$r"
    new_ns "$ns"
    attach "$ns" "198.18.0.$((r + 1))" "r$r"
    shape "$ns" eth0
    shape "$sw_ns" "r$r"
    slots=$ppn
    [ $((np - r * ppn)) -lt "$slots" ] && slots=$((np - r * ppn))
    hostlist+="${hostlist:+,}r$r:$slots"
done
# one rank per node: by node, TCP only; several: fill each node, shared memory within it
map_by=node btl=tcp,self
if [ "$ppn" -gt 1 ]; then map_by=slot btl=tcp,vader,self; fi
log "network ready: $np ranks on $nodes nodes, rate $rate${delay:+, one-way delay $delay}, burst ${burst:-n/a}, queue ${qlimit:-n/a} B"

# ---------------------------------------------------------------- run
export OMPI_MCA_rtc='^hwloc'
# the agent pins node K's daemon (and so its ranks) to its CPUs
[ "$node_cpus" = all ] || export NETNS_MPIRUN_NODE_CPUS="$node_cpus"
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$tmp/head"
cmd=(mpirun
    --mca plm rsh --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1
    --host "$hostlist" -np "$np" --map-by "$map_by" --bind-to none
    --mca pml ob1 --mca btl "$btl"
    --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet"
    --mca mpi_yield_when_idle 1
    "${mpirun_opts[@]+"${mpirun_opts[@]}"}"
    "${prog_args[@]}")
log "+ ${cmd[*]}"
rc=0
# in the background, so that a signal to this script interrupts "wait" and the
# trap runs at once (bash defers traps while a foreground child runs)
TMPDIR="$tmp/head" timeout --kill-after=20 "$run_timeout" \
    ip netns exec "$head_ns" "${cmd[@]}" <&0 &
job=$!
wait "$job" || rc=$?
job=
if [ "$stats" = 1 ]; then
    # one line per shaped link: sent bytes/packets, drops, overlimits, requeues
    for ((r = 0; r < nodes; r++)); do
        for side in up down; do
            if [ "$side" = up ]; then lns="${prefix}-r$r" ldev=eth0; else lns="$sw_ns" ldev="r$r"; fi
            ip netns exec "$lns" tc -s qdisc show dev "$ldev" 2>/dev/null |
                awk -v l="r$r $side" '/^ Sent/ && !done { sub(/^ /, ""); print "'"$prog"': link " l ": " $0; done = 1 }' >&2
        done
    done
fi
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "$prog: timed out after ${run_timeout} s" >&2
    rc=124
fi
exit "$rc"
