#!/bin/bash
# nodes.sh: node awareness: one node is left to MPI by default; several (faked) nodes sum in fp32 within, compressed across.
. "$top_builddir/tests/mpi/env.sh"

# On one node, by default (TEST_INTRANODE empty: env.sh leaves APSMPI_INTRANODE unset),
# every eligible call goes to MPI untouched: the same bits as plain MPI.
for args in "--count 150000" "--op reduce_scatter --count 150003" "--op reduce_scatter_block --in-place --count 150000"; do
    expect "plain MPI: $args" with_checksum mpi 3 no -- "$CHECK" $args
    plain=$(checksum)
    expect "one node, by default: $args, bit for bit as plain MPI" same_checksum "$plain" \
        mpi_default 3 yes APSMPI_STATS=1 APSMPI_LOG_LEVEL=info -- "$CHECK" $args
    expect "... the statistics say so" grep -q 'calls within one node handed to MPI uncompressed 3 (no network to save' "$TMPOUT/err"
done
expect "... and the info log" grep -q 'all on one node, its reductions go to MPI uncompressed' "$TMPOUT/err"
expect "APSMPI_INTRANODE=compress compresses within the node" mpi 3 yes APSMPI_INTRANODE=compress APSMPI_STATS=1 -- \
    "$CHECK" --count 150000 --block 4096 --tol 0.14 --expect-inexact
expect "... the statistics count it compressed" grep -q 'calls compressed 3,.*handed to MPI uncompressed 0;\?$' "$TMPOUT/err"

# Fake nodes (APSMPI_TEST_NODE_OF_RANK): on several nodes the library compresses whatever
# APSMPI_INTRANODE says; with more than one rank on a node it sums there in fp32 first.
# The bound of tests/mpi/rounding.sh for e4m3 (0.13 of N*B) holds: a node's fp32 sum is one
# contribution, rounded once.
tol=0.14
nodes() { local map=$1 np=$2; shift 2; mpi "$np" yes APSMPI_TEST_NODE_OF_RANK="$map" APSMPI_INTRANODE=pass "$@"; }
expect "one rank per node (4 nodes)" nodes 0,1,2,3 4 APSMPI_LOG_LEVEL=info -- \
    "$CHECK" --count 150000 --block 4096 --tol $tol --expect-inexact --identical
expect "... found as 4 nodes" grep -q 'communicator of 4 ranks on 4 node(s), 1 to 1 ranks each' "$TMPOUT/err"
expect "2 nodes x 2 ranks" nodes 0,0,1,1 4 APSMPI_LOG_LEVEL=info APSMPI_STATS=1 -- \
    "$CHECK" --count 150000 --block 4096 --tol $tol --expect-inexact --identical
expect "... found as 2 nodes of 2, fp32 within" grep -q 'on 2 node(s), 2 to 2 ranks each: fp32 within nodes, compressed across' "$TMPOUT/err"
expect "... only the cross-node half of the buffer compressed on each rank" \
    grep -q 'calls compressed 4,.*bytes 1200000 -> [0-9]* ([0-9.]*x; codes 300000 ' "$TMPOUT/err"
expect "2 nodes x 2 ranks, pipelined, in place" nodes 0,1,0,1 4 APSMPI_CHUNK_SIZE=20000 -- \
    "$CHECK" --in-place --count 400001 --block 4096 --tol $tol --expect-inexact --identical
expect "uneven nodes: 2 and 3 ranks, interleaved" nodes 0,1,1,0,1 5 -- \
    "$CHECK" --count 150001 --block 4096 --tol $tol --expect-inexact --identical
expect "uneven nodes: 1, 2 and 3 ranks, pipelined, 6-bit" nodes 0,1,1,2,2,2 6 APSMPI_FORMAT=e3m2 APSMPI_CHUNK_SIZE=20000 -- \
    "$CHECK" --count 300000 --block 4096 --tol 0.27 --expect-inexact --identical
expect "uneven nodes, a block size that does not divide the count, per-call APS" nodes 0,0,0,1 4 APSMPI_SCALING=aps -- \
    "$CHECK" --uniform --count 100003 --tol $tol --expect-inexact --identical
# An MX format on the node path: each node's fp32 sum is one contribution, encoded in blocks of
# 32 with scales of its own (parts start on whole blocks), so the bound of its rank count holds.
expect "2 nodes x 2 ranks, mxfp4" nodes 0,0,1,1 4 APSMPI_FORMAT=mxfp4 -- \
    "$CHECK" --count 150000 --block 32 --tol "$("$FUZZ" --bound mxfp4 4)" --expect-inexact --identical
expect "uneven nodes: 1, 2 and 3 ranks, pipelined, mxfp6" nodes 0,1,1,2,2,2 6 APSMPI_FORMAT=mxfp6 \
    APSMPI_CHUNK_SIZE=20000 -- "$CHECK" --count 300000 --block 32 --tol "$("$FUZZ" --bound mxfp6 6)" \
    --expect-inexact --identical
expect "2 nodes, sum of ones in e3m2 exact" nodes 0,0,0,1,1,1 6 APSMPI_FORMAT=e3m2 -- "$CHECK" --ones --count 70000 --tol 0 --identical
expect "2 nodes, inf and NaN kept" nodes 0,0,1,1 4 -- "$CHECK" --nonfinite --count 100000
expect "2 nodes, reduce_scatter uneven" nodes 0,0,1,1,1 5 -- \
    "$CHECK" --op reduce_scatter --count 200003 --block 4096 --tol $tol --expect-inexact
expect "2 nodes, reduce_scatter_block in place" nodes 0,1,0,1 4 -- \
    "$CHECK" --op reduce_scatter_block --in-place --count 200000 --block 4096 --tol $tol --expect-inexact
expect "2 nodes, two threads on duplicated communicators" nodes 0,0,1,1 4 -- \
    "$CHECK" --threads 2 --repeat 2 --count 100000 --block 4096 --tol $tol --expect-inexact
# A job whose ranks differ in where their buffers live (GPU on node 0, host on node 1: the
# mock device) still takes one route on every rank: the node path needs host memory, so the
# ranks agree on the flat path instead of hanging (each rank deciding alone did). Flat over
# several nodes of several ranks, the call goes two-level: its bound (three roundings).
if [ -f "$top_builddir/tests/mpi/.libs/mock_device.so" ]; then
    mock="$top_builddir/tests/mpi/.libs/mock_device.so"
    tol=$(APSMPI_TWOLEVEL_FROM=2 "$FUZZ" --bound e4m3 4)
    # the second program of the MPMD line needs its own variables (per program in both MPIs)
    app 2 APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass APSMPI_DEVICE_PLUGIN="$mock" \
        LD_PRELOAD="$APSMPI_LIB" -- "$CHECK" --count 150000 --block 4096 --tol $tol --expect-inexact --identical
    host_app=("${APP[@]}")
    expect "2 nodes x 2 ranks, GPU buffers on one node only: no hang, one route" nodes 0,0,1,1 2 \
        APSMPI_DEVICE_PLUGIN="$mock" -- "$CHECK" --device "$mock" --count 150000 --block 4096 --tol $tol \
        --expect-inexact --identical : "${host_app[@]}"
fi
finish
