#!/bin/bash
# link_trace.sh: runs one job under scripts/netns_mpirun.sh and records, from the switch, every node link's bytes each way every few ms, plus TCP retransmissions, tc drops and CPU time during the job.
#   scripts/study/link_trace.sh OUT_PREFIX [NETNS_MPIRUN OPTIONS...] -- [MPIRUN OPTIONS -- ] PROGRAM ARGS...
# Writes OUT_PREFIX.links (per sample: "t_s cpu ...", the machine's /proc/stat line, and
# "t_s rK rx_bytes tx_bytes" per switch port: rx of port rK is node K's upload, tx its download), OUT_PREFIX.tcp (per node: TcpRetransSegs and
# TcpExtTCPLostRetransmit, before and after), OUT_PREFIX.cpu (/proc/stat before and after)
# and the job's output in OUT_PREFIX.log; scripts/study/link_trace.py summarises them. The sampler
# is one bash loop inside the switch namespace that reads sysfs without forking (a few % of
# one core at the default 5 ms). Must run as root, like netns_mpirun.sh.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,10p' "$0"; exit 2; }
out=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
period=${LINK_TRACE_PERIOD:-0.005}

snmp() { # NS: the two retransmission counters of one namespace
    ip netns exec "$1" awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) n[i] = $i; h = 1 } else for (i = 1; i <= NF; i++) if (n[i] == "RetransSegs") r = $i }
        END { print r }' /proc/net/snmp
}

grep '^cpu ' /proc/stat | sed 's/^/before /' >"$out.cpu"
"$here/../netns_mpirun.sh" --stats "$@" >"$out.log" 2>&1 &
job=$!
sw="apsmpi-$job-sw"
for _ in $(seq 200); do
    [[ $(ip netns list) == *"$sw"* ]] && break # (not grep -q in a pipe: with pipefail, ip's SIGPIPE fails it)
    sleep 0.05
done
# the sampler: until the switch namespace goes away with the job
ip netns exec "$sw" bash -c '
    exec 3<> <(:)
    prev=
    while :; do # until every node has its port: the list the same twice, 0.3 s apart
        ports=$(cd /sys/class/net && ls -d r[0-9]* 2>/dev/null) || true
        [ -n "$ports" ] && [ "$ports" = "$prev" ] && break
        prev=$ports
        read -t 0.3 -u 3 || true
    done
    while [ -d /sys/class/net/br0 ]; do
        t=$EPOCHREALTIME
        read -r cpu </proc/stat
        line="$t $cpu"$'\''\n'\''
        for p in $ports; do
            read -r rx </sys/class/net/$p/statistics/rx_bytes || exit 0
            read -r tx </sys/class/net/$p/statistics/tx_bytes || exit 0
            line+="$t $p $rx $tx"$'\''\n'\''
        done
        printf "%s" "$line"
        read -t '"$period"' -u 3 || true
    done' >"$out.links" 2>/dev/null &
sampler=$!
# retransmission counters of every node, once the ranks run (before), and at the end (after)
sleep 1
: >"$out.tcp"
for ns in $(ip netns list | awk -v p="apsmpi-$job-r" 'index($1, p) == 1 { print $1 }'); do
    echo "$ns before $(snmp "$ns")" >>"$out.tcp"
done
nodes=$(ip netns list | awk -v p="apsmpi-$job-r" 'index($1, p) == 1 { print $1 }')
# after: poll until the job ends, keeping the last values read
declare -A last
while kill -0 "$job" 2>/dev/null; do
    for ns in $nodes; do
        v=$(snmp "$ns" 2>/dev/null) && [ -n "$v" ] && last[$ns]=$v
    done
    sleep 1
done
rc=0
wait "$job" || rc=$?
for ns in $nodes; do echo "$ns after ${last[$ns]:-?}" >>"$out.tcp"; done
grep '^cpu ' /proc/stat | sed 's/^/after /' >>"$out.cpu"
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
exit "$rc"
