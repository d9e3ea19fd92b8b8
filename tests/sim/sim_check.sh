#!/bin/sh
# sim_check.sh: make check's small simulation (sim/apsmpi_sim): the plain ring against its closed form, the plans' bytes and messages against theirs (rsag, the two-level schedule and where it is chosen), the validated 1 Gbit/s cases.
set -eu
SIM=${top_builddir:-.}/sim/apsmpi_sim
[ -x "$SIM" ] || { echo "FAIL: $SIM not built"; exit 1; }
fail=0
# check NAME VALUE EXPECTED TOLERANCE: |VALUE/EXPECTED - 1| <= TOLERANCE
check() {
    if awk -v v="$2" -v e="$3" -v t="$4" 'BEGIN { r = v / e - 1; if (r < 0) r = -r; exit !(r <= t) }'; then
        echo "ok: $1: $2 (expected $3, within $4)"
    else
        echo "FAIL: $1: $2, expected $3 within $4"
        fail=1
    fi
}
field() { echo "$1" | cut -d, -f"$2"; }

# 1. plain MPI's ring, 8 nodes x 1 at 10 Gbit/s, 64 MiB: 2(N-1)/N of the buffer over the link,
# 2(N-1) steps of three link latencies (node, switch, node), (N-1)/N of the adds at 2.2 G/s
N=8 M=67108864
out=$("$SIM" --alg mpi-ring --nodes $N --ppn 1 --gbps 10 --eff 1 --lat-us 5 --sw-lat-us 1 --bytes $M)
want=$(awk -v N=$N -v M=$M 'BEGIN { printf "%.6f", 1e3 * (2*(N-1)/N*M/1.25e9 + 2*(N-1)*11e-6 + (N-1)/N*M/4/2.2e9) }')
check "plain ring time (ms)" "$(field "$out" 8)" "$want" 0.03
check "plain ring bytes (all ranks)" "$(field "$out" 9)" "$(awk -v N=$N -v M=$M 'BEGIN { printf "%.0f", 2*(N-1)*M }')" 0.0001

# 2. rsag's plan, e4m3 (8 bits, 16-bit scales per block of 4096 in the results): every rank sends
# (N-1)/N of its encoded buffer, and its sum N-1 times; messages: one per piece (8 a segment)
# each way between every pair, and the two small agreements' log2(N) steps
out=$("$SIM" --alg rsag --nodes $N --ppn 1 --gbps 10 --bytes $M)
check "rsag e4m3 bytes" "$(field "$out" 9)" "$(awk -v N=$N -v M=$M 'BEGIN { printf "%.0f", 2*(N-1)*M/4 }')" 0.002
check "rsag e4m3 messages" "$(field "$out" 11)" "$(awk -v N=$N -v M=$M 'BEGIN { p = int(M/4/N/262144 + 0.999); printf "%d", 2*N*(N-1)*p + 2*N*log(N)/log(2) }')" 0
out=$("$SIM" --alg rsag --fmt mxfp4 --nodes $N --ppn 1 --gbps 10 --bytes $M)
check "rsag mxfp4 bytes (4.25 bits)" "$(field "$out" 9)" "$(awk -v N=$N -v M=$M 'BEGIN { printf "%.0f", 2*(N-1)*M/4*17/32 }')" 0.002

# 2b. the two-level schedule's plan, forced, on 16 ranks (4 groups of 4):
# the same bytes as rsag (each rank (N-1)/N of its encoded buffer each way, plus each cell's
# 16 bytes of scales), 2(M-1) + 2(G-1) messages a rank instead of 2(N-1)
N=16
out=$("$SIM" --alg twolevel --nodes $N --ppn 1 --gbps 10 --bytes $M)
check "two-level e4m3 bytes" "$(field "$out" 9)" "$(awk -v N=$N -v M=$M 'BEGIN { printf "%.0f", 2*(N-1)*M/4 }')" 0.002
check "two-level e4m3 messages (4 x 4)" "$(field "$out" 11)" "$(awk -v N=$N 'BEGIN { printf "%d", N*(2*3 + 2*3) + 2*N*log(N)/log(2) }')" 0
# ... chosen for the node path's parts from --twolevel-from nodes (APSMPI_TWOLEVEL_FROM): at 16
# nodes of 2, 16 MiB (2 batches of 2 parts), each part's 16 x 18 messages fewer than rsag's;
# at 15 nodes, below it, rsag's run exactly
S="--alg lib --ppn 2 --gbps 10 --bytes 16777216"
m0=$(field "$("$SIM" $S --nodes 16 --twolevel-from 0)" 11)
check "node path, 16 nodes: two-level parts save 2 x 2 x 16 x (30 - 12) messages" \
    "$(field "$("$SIM" $S --nodes 16 --twolevel-from 16)" 11)" $((m0 - 2 * 2 * 16 * 18)) 0
check "node path, 15 nodes, below --twolevel-from 16: rsag's run (time)" \
    "$(field "$("$SIM" $S --nodes 15 --twolevel-from 16)" 8)" "$(field "$("$SIM" $S --nodes 15 --twolevel-from 0)" 8)" 0
N=8

# 3. the node path, 2 nodes x 4: its node links carry 1/7 of the plain ring's bytes (the ring's
# 14 steps of M/8 cross them; the parts' rsag moves half the encoded buffer each way), its fp32
# steps stay on shared memory: faster than the ring by more than 3x, less than 7x
out=$("$SIM" --alg node --nodes 2 --ppn 4 --gbps 10 --bytes $M)
t_node=$(field "$out" 8)
t_ring=$(field "$("$SIM" --alg mpi-ring --nodes 2 --ppn 4 --gbps 10 --bytes $M)" 8)
check "node path e4m3 over plain ring, 2x4, 10 Gbit/s (ratio)" \
    "$(awk -v a="$t_ring" -v b="$t_node" 'BEGIN { printf "%.3f", a / b }')" 5 0.4

# 4. the validation (results/scale_sim/README.md): the 2-core VM, 4 fake nodes x 1 at 1 Gbit/s,
# 64 MiB, measured (results/speed/README.md): plain ring 906.8 ms, e4m3 247.2, mxfp4 137.1
VM="--gbps 1 --lat-us 875 --profile vm --core-speed 1.5 --cores 1 --nodes 4 --ppn 1 --bytes $M"
check "validation: plain ring 4x1 64 MiB (ms)" "$(field "$("$SIM" --alg mpi-ring $VM)" 8)" 906.8 0.05
check "validation: e4m3 4x1 64 MiB (ms)" "$(field "$("$SIM" --alg rsag $VM)" 8)" 247.2 0.05
check "validation: mxfp4 4x1 64 MiB (ms)" "$(field "$("$SIM" --alg rsag --fmt mxfp4 $VM)" 8)" 137.1 0.15
exit $fail
