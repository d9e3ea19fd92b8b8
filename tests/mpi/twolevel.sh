#!/bin/bash
# twolevel.sh: the two-level schedule (APSMPI_TWOLEVEL_FROM) forced on a few ranks: flat and on the node path's parts, blocking, MPI_Iallreduce, persistent and several at once on one thread; the same bits on every rank, within the bound of its three roundings; below the threshold (a quarter of it for small calls) nothing changes.
. "$top_builddir/tests/mpi/env.sh"
NB="$top_builddir/tests/mpi/nonblocking_check"
PROGRESS="$top_builddir/tests/mpi/progress_check"
SEM="$top_builddir/tests/mpi/semantics_check"
TL=APSMPI_TWOLEVEL_FROM=2
# bound FORMAT N: the error bound with the schedule in force (tests/mpi/fuzz.c's error_bound)
bound() { APSMPI_TWOLEVEL_FROM=2 "$FUZZ" --bound "$@"; }
# twolevel_calls K: the statistics line counts K calls summed two-level
twolevel_calls() { grep -q "by the two-level schedule $1;" "$TMPOUT/err"; }

# Flat (one machine, compressed within it): groups of 2 (4 ranks), 3 and 2 (5), 4 and 3 (7,
# a prime), 3 x 3 (9); uneven counts, a cell of one slice of 64 or empty, in place.
for np in 4 5 7 9; do
    expect "np=$np, e4m3: within $(bound e4m3 $np) of N*B, the same bits on every rank" \
        mpi $np yes $TL APSMPI_STATS=1 -- "$CHECK" --count 150001 --block 4096 --tol "$(bound e4m3 $np)" \
        --expect-inexact --identical
    expect "... every call two-level" twolevel_calls $np
done
expect "np=9, a count of a few cells, some empty" mpi 9 yes $TL APSMPI_MIN_BYTES=0 -- \
    "$CHECK" --count 700 --block 64 --tol "$(bound e4m3 9)" --expect-inexact --identical
expect "np=6, in place, 6-bit, per-call APS" mpi 6 yes $TL APSMPI_FORMAT=e3m2 APSMPI_SCALING=aps -- \
    "$CHECK" --in-place --uniform --count 100003 --tol "$(bound e3m2 6)" --expect-inexact --identical
expect "np=5, mxfp4 (blocks of 32 scaled by each encoding)" mpi 5 yes $TL APSMPI_FORMAT=mxfp4 -- \
    "$CHECK" --count 150000 --block 32 --tol "$(bound mxfp4 5)" --expect-inexact --identical
expect "np=4, stochastic rounding" mpi 4 yes $TL APSMPI_ROUNDING=stochastic -- \
    "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 4 --stochastic)" --expect-inexact --identical
expect "np=4, all messages at once (window 0) and one at a time (window 1)" \
    mpi 4 yes $TL APSMPI_RSAG_WINDOW=0 -- "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 4)" --identical
want=$(checksum)
expect "... the same bits with window 1" same_checksum "$want" \
    mpi 4 yes $TL APSMPI_RSAG_WINDOW=1 -- "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 4)" --identical
expect "np=7, a sum of ones exact in e3m2 (three roundings of integers)" mpi 7 yes $TL APSMPI_FORMAT=e3m2 -- \
    "$CHECK" --ones --count 70000 --tol 0 --identical
expect "np=4, inf and NaN sent in fp32" mpi 4 yes $TL -- "$CHECK" --nonfinite --count 100000
# Error feedback on all three roundings (the partials have residuals of their own): the sum of
# 40 results within one call's bound (tests/mpi/feedback.sh), where without it the sum drifts.
fb_tol=$(awk -v b="$(bound e4m3 5)" 'BEGIN { printf "%.6g\n", b + 40 * 5 * 2^-23 }')
expect "np=5, error feedback, 40 calls: the sum of the results within one call's bound" \
    mpi 5 yes $TL APSMPI_ERROR_FEEDBACK=1 -- "$top_builddir/tests/mpi/feedback_check" --count 100000 --calls 40 \
    --block 4096 --tol "$fb_tol"
# APSMPI_FORMAT=auto: the partials' encodings measured with the finals'; the plan made again for
# the agreed rung (mxfp8 at the first call, then mxfp4), every rank on the same widths.
expect "np=4, auto: Gaussian buckets down to mxfp4, two-level" mpi 4 yes $TL APSMPI_FORMAT=auto APSMPI_STATS=1 -- \
    "$top_builddir/tests/mpi/auto_check" --calls 12 --max-rel 0.3
expect "... 12 calls a rank, 11 of them on mxfp4 (a new bucket lowers after its first), the same widths everywhere" \
    grep -Eq 'apsmpi stats: auto.*mxfp4 calls 44, .*mxfp8 calls 4, .*same on every rank: yes' "$TMPOUT/err"
# Reduce-scatter keeps rsag (one rounding: the owner's fp32 sum is its result).
expect "np=5, reduce_scatter: rsag" mpi 5 yes $TL APSMPI_STATS=1 -- \
    "$CHECK" --op reduce_scatter --count 150003 --block 4096 --tol "$("$FUZZ" --bound e4m3 5)" --expect-inexact
expect "... none two-level" twolevel_calls 0

# Below the threshold (the default, 256; or 0: never) nothing changes: rsag's bits.
expect "np=4, the default threshold: rsag" mpi 4 yes APSMPI_STATS=1 -- \
    "$CHECK" --count 150000 --block 4096 --tol "$("$FUZZ" --bound e4m3 4)" --identical
rsag=$(checksum)
expect "... none two-level" twolevel_calls 0
expect "... APSMPI_TWOLEVEL_FROM=0: the same bits" same_checksum "$rsag" \
    mpi 4 yes APSMPI_TWOLEVEL_FROM=0 -- "$CHECK" --count 150000 --block 4096 --tol 1 --identical
expect "... APSMPI_TWOLEVEL_FROM=17 at 4 ranks (a small call: from 5): the same bits" same_checksum "$rsag" \
    mpi 4 yes APSMPI_TWOLEVEL_FROM=17 -- "$CHECK" --count 150000 --block 4096 --tol 1 --identical
expect "... forced, other bits (a third rounding)" other_checksum "$rsag" \
    mpi 4 yes $TL -- "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 4)" --identical

# Calls of at most 2^18 elements (mostly latency) take it from a quarter of the threshold: 4
# ranks, APSMPI_TWOLEVEL_FROM=16. A node path's part counts its own elements (4 nodes of 2:
# half the call each).
expect "np=4, from 16: a call of 2^18 elements two-level" mpi 4 yes APSMPI_TWOLEVEL_FROM=16 APSMPI_STATS=1 -- \
    "$CHECK" --count 262144 --block 4096 --tol "$(bound e4m3 4)" --identical
expect "... two-level" twolevel_calls 4
expect "np=4, from 16: a call of 2^18 + 1 elements rsag" mpi 4 yes APSMPI_TWOLEVEL_FROM=16 APSMPI_STATS=1 -- \
    "$CHECK" --count 262145 --block 4096 --tol "$(bound e4m3 4)" --identical
expect "... none two-level" twolevel_calls 0
expect "4 nodes x 2, from 16: parts of 2^18 elements two-level" \
    mpi 8 yes APSMPI_TEST_NODE_OF_RANK=0,0,1,1,2,2,3,3 APSMPI_INTRANODE=pass APSMPI_TWOLEVEL_FROM=16 APSMPI_STATS=1 -- \
    "$CHECK" --count 524288 --block 4096 --tol "$(bound e4m3 8)" --identical
expect "... two-level" twolevel_calls 8
expect "4 nodes x 2, from 16: larger parts rsag" \
    mpi 8 yes APSMPI_TEST_NODE_OF_RANK=0,0,1,1,2,2,3,3 APSMPI_INTRANODE=pass APSMPI_TWOLEVEL_FROM=16 APSMPI_STATS=1 -- \
    "$CHECK" --count 532480 --block 4096 --tol "$(bound e4m3 8)" --identical
expect "... none two-level" twolevel_calls 0

# The node path's parts across nodes (the nodes are what counts): 4 nodes of 2 (parts over 2 x 2),
# 5 nodes of 1 or 2 (3 and 2), pipelined in batches.
nodes() { local map=$1 np=$2; shift 2; mpi "$np" yes APSMPI_TEST_NODE_OF_RANK="$map" APSMPI_INTRANODE=pass "$@"; }
expect "4 nodes x 2 ranks, each part two-level" nodes 0,0,1,1,2,2,3,3 8 $TL APSMPI_STATS=1 -- \
    "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 8)" --expect-inexact --identical
expect "... 2 parts a node" twolevel_calls 8
expect "5 nodes of 1 or 2 ranks, in batches, in place" nodes 0,1,1,2,3,3,4,0 8 $TL APSMPI_CHUNK_SIZE=5000 -- \
    "$CHECK" --in-place --count 300001 --block 4096 --tol "$(bound e4m3 8)" --expect-inexact --identical
expect "4 nodes x 2, mxfp4" nodes 0,1,2,3,0,1,2,3 8 $TL APSMPI_FORMAT=mxfp4 -- \
    "$CHECK" --count 150000 --block 32 --tol "$(bound mxfp4 8)" --expect-inexact --identical

# Requests: MPI_Iallreduce (against the blocking call's bits), several at once, completed in
# any order, on one thread without blocking; the persistent forms where the MPI has them.
expect "np=5, 3 Iallreduces on their own communicators" mpi 5 yes $TL APSMPI_STATS=1 -- \
    "$NB" --ops 3 --count 200001 --bound "$(bound e4m3 5)"
expect "... compressed as requests, two-level" grep -q "requests (MPI_I\*, persistent) 15; by the two-level schedule 30;" \
    "$TMPOUT/err"
expect "np=4, 4 Iallreduces on one communicator, reverse order, in place, no progress thread" \
    mpi 4 yes $TL APSMPI_PROGRESS_THREAD=0 -- "$NB" --ops 4 --comms one --complete reverse --in-place \
    --bound "$(bound e4m3 4)"
expect "np=6, 3 threads, 2 requests each" mpi 6 yes $TL -- "$NB" --threads 3 --ops 2 --comms one --bound "$(bound e4m3 6)"
expect "4 nodes x 2, 2 Iallreduces at once on one communicator" nodes 0,0,1,1,2,2,3,3 8 $TL -- \
    "$NB" --ops 2 --comms one --complete reverse --bound "$(bound e4m3 8)"
if mpi 2 yes -- "$NB" --persistent 1 --ops 1 --count 1000; then
    expect "np=5, persistent Allreduce_init started 3 times, 2 at once" mpi 5 yes $TL APSMPI_STATS=1 -- \
        "$NB" --persistent 3 --ops 2 --comms one --complete reverse --bound "$(bound e4m3 5)"
    expect "... two-level" grep -q "by the two-level schedule [1-9]" "$TMPOUT/err"
fi
expect "np=5, 3 at once on one thread, never blocking: the blocking calls' bits" \
    mpi 5 no $TL -- "$PROGRESS" --ops 3 --count 300001 --in-place --repeat 2
expect "4 nodes x 2, the parts two-level, 2 at once, never blocking" \
    mpi 8 no $TL APSMPI_TEST_NODE_OF_RANK=0,0,1,1,2,2,3,3 APSMPI_INTRANODE=pass APSMPI_CHUNK_SIZE=5000 -- \
    "$PROGRESS" --ops 2 --count 300001
expect "np=4, crossed starts on two communicators: no hang" mpi 4 yes $TL APSMPI_STATS=1 -- "$SEM" crossed
expect "... compressed as requests, every call two-level (its blocking ones too)" \
    grep -q "requests (MPI_I\*, persistent) 8; by the two-level schedule 24;" "$TMPOUT/err"

# A failed message (of the 4 each rank sends a call at 2 x 2): the error returned on every rank,
# the next calls right (each call its own tags).
for pass in 1 3; do
    expect "np=4, message $pass failing on every rank: the error returned, the next calls right" \
        mpi 4 yes $TL "APSMPI_TEST_FAIL=rsag_send:*:$pass" -- \
        "$CHECK" --count 30000 --repeat 3 --errors-return --tol "$(bound e4m3 4)"
    expect "... the failed call said so on every rank" test "$(grep -c 'call 0 returned an error' "$TMPOUT/out")" = 4
done
expect "np=4, failing on rank 1 only, fatal error handler: the job stops, no hang" \
    stops_not_hangs 4 yes $TL APSMPI_TEST_FAIL=rsag_send:1:2 -- "$CHECK" --count 30000

# GPU buffers (the mock device): flat, encoded on the device, the sums on the host. Over several
# nodes of several ranks (no node path for GPU buffers) two-level at any rank count, by default.
mock="$top_builddir/tests/mpi/.libs/mock_device.so"
if [ -f "$mock" ]; then
    expect "GPU buffers (mock), 2 nodes x 2, by default: two-level" \
        mpi 4 yes APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass APSMPI_STATS=1 APSMPI_DEVICE_PLUGIN="$mock" -- \
        "$CHECK" --device "$mock" --count 300001 --block 4096 --tol "$(bound e4m3 4)" --expect-inexact --identical
    expect "... two-level" twolevel_calls 4
    expect "... APSMPI_TWOLEVEL_FROM=0: rsag" mpi 4 yes APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass \
        APSMPI_TWOLEVEL_FROM=0 APSMPI_STATS=1 APSMPI_DEVICE_PLUGIN="$mock" -- \
        "$CHECK" --device "$mock" --count 300001 --block 4096 --tol "$("$FUZZ" --bound e4m3 4)" --expect-inexact --identical
    expect "... none two-level" twolevel_calls 0
    expect "np=5, GPU buffers (mock), two-level" mpi 5 yes $TL APSMPI_STATS=1 APSMPI_DEVICE_PLUGIN="$mock" -- \
        "$CHECK" --device "$mock" --count 300001 --block 4096 --tol "$(bound e4m3 5)" --expect-inexact --identical
    expect "... two-level" twolevel_calls 5
fi
finish
