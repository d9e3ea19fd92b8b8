#!/bin/bash
# nonblocking.sh: MPI_Iallreduce, MPI_Ireduce_scatter(_block) and the persistent forms with the library preloaded: compressed as the blocking calls (the same bits, on every rank, within the format's bound), several at once completed in any order, mixed with plain requests, freed early, from several threads; what is not compressed passes through bit for bit.
. "$top_builddir/tests/mpi/env.sh"
NB="$top_builddir/tests/mpi/nonblocking_check"
STATS=APSMPI_STATS=1

for np in 2 4; do
    expect "np=$np, 3 pipelined Iallreduces on their own communicators, waited for in order" \
        mpi $np yes $STATS APSMPI_CHUNK_SIZE=20000 -- "$NB" --ops 3 --count 200001
    expect "... all compressed, as requests" \
        grep -q "calls compressed $((6 * np)),.*requests (MPI_I\*, persistent) $((3 * np));" "$TMPOUT/err"
    expect "np=$np, 4 Iallreduces on one communicator, waited for in reverse order, in place" \
        mpi $np yes APSMPI_CHUNK_SIZE=20000 -- "$NB" --ops 4 --comms one --complete reverse --in-place
done
expect "np=3, Ireduce_scatter, uneven counts, Waitall" \
    mpi 3 yes -- "$NB" --op reduce_scatter --ops 3 --count 200003 --comms one --complete waitall
expect "np=3, Ireduce_scatter_block, in place, Waitany" \
    mpi 3 yes -- "$NB" --op reduce_scatter_block --ops 3 --count 200001 --in-place --complete waitany
for how in testany testall waitsome waitall; do
    expect "np=3, 3 Iallreduces and a plain Isend/Irecv pair, completed by $how" \
        mpi 3 yes -- "$NB" --ops 3 --comms one --mixed --complete $how
done
expect "np=2, a request freed before it completed (its result checked after MPI_Finalize)" \
    mpi 2 yes -- "$NB" --ops 2 --comms one --free-one
expect "np=2, MPI_Cancel on each (a started collective completes normally)" \
    mpi 2 yes -- "$NB" --ops 2 --cancel
expect "np=3, 3 threads (MPI_THREAD_MULTIPLE, the progress thread), 2 requests each" \
    mpi 3 yes $STATS -- "$NB" --threads 3 --ops 2 --comms one --complete reverse
expect "... all compressed" grep -q "calls compressed 36," "$TMPOUT/err"
expect "np=3, the same without the progress thread" \
    mpi 3 yes APSMPI_PROGRESS_THREAD=0 -- "$NB" --threads 3 --ops 2 --comms own --complete waitall
expect "np=8, small calls, oversubscribed" mpi 8 yes APSMPI_MIN_BYTES=0 -- "$NB" --ops 4 --count 3001 --comms one
expect "np=3, e3m2, per-call APS" mpi 3 yes APSMPI_FORMAT=e3m2 APSMPI_SCALING=aps -- "$NB" --ops 2 --bound 0.5
expect "np=3, the ring (resumable: progressed by test, wait and the progress thread)" mpi 3 yes APSMPI_ALGORITHM=ring APSMPI_CHUNK_SIZE=20000 -- \
    "$NB" --ops 2 --comms one --bound 0
expect "the node path, 2 nodes of 2 ranks, 2 at once on one communicator" \
    mpi 4 yes APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass APSMPI_CHUNK_SIZE=5000 -- \
    "$NB" --ops 2 --comms one --complete reverse

# the statistics count every byte a compressed call sends (issue 18): e2m1, blocks of 32, an
# allreduce of 65536 floats on 2 ranks (the blocking reference and the request): per call and
# rank 32768 bytes of codes; the scales in front of the 2 result messages it decodes, 2064
# bytes each (1024 scales, room for 2 more where a piece cuts a block, aligned to 16 bytes);
# 2050 exponents and flags of 2 bytes in the agreement: 6.39x, not the codes' 8x
expect "e2m1, blocks of 32: the statistics' bytes" mpi 2 yes $STATS APSMPI_FORMAT=e2m1 APSMPI_BLOCK_SIZE=32 -- \
    "$NB" --ops 1 --count 65536 --bound 0
expect "... codes, result scales and agreement counted" grep -q \
    "bytes 1048576 -> 163984 (6.39x; codes 131072 (8.00x), result scales 16512, agreement 16400)" "$TMPOUT/err"

# what is not compressed passes through bit for bit: the job's own PMPI_I* results
for setting in APSMPI_ENABLE=0 APSMPI_MIN_BYTES=100m "APSMPI_INTRANODE=pass"; do
    expect "plain MPI's Iallreduce (the reference)" with_checksum \
        mpi 3 no -- "$NB" --ops 2 --comms one --no-reference --bound 0
    want=$(checksum)
    expect "$setting: the same bits as plain MPI" same_checksum "$want" \
        mpi 3 yes $setting $STATS -- "$NB" --ops 2 --comms one --no-reference --bound 0
    expect "... and nothing compressed" grep -q "calls compressed 0," "$TMPOUT/err"
done
expect "... the one-node calls counted as such" grep -q "handed to MPI uncompressed 6 " "$TMPOUT/err"

# the fault sites of the blocking path, reached through the non-blocking one (no blocking
# reference first: the requests make the private communicator and run the steps)
expect "plain MPI's Iallreduce (the reference)" with_checksum mpi 3 no -- "$NB" --ops 2 --no-reference --bound 0
plain=$(checksum)
expect "codec failing on rank 1 at MPI_Init: every request passes through, bit for bit" same_checksum "$plain" \
    mpi 3 yes APSMPI_TEST_FAIL=codec:1:1 $STATS -- "$NB" --ops 2 --no-reference --bound 0
expect "... counted as switched off (and the check's own integer sums as not float sums)" grep -q "passed through as not a float sum 9, disabled 6," "$TMPOUT/err"
# A request makes no collective (state/comm_prepare.h): the private duplicate its
# communicator needs is made when the job makes the communicator (MPI_Comm_dup here: the
# second duplicate, after MPI_COMM_WORLD's at MPI_Init). Failing there on one rank, the ranks
# agree that the communicator is not prepared, and its requests go to MPI uncompressed.
for site in dup_malloc dup_attr; do
    expect "$site failing on rank 1 as the job's communicator is made: no hang, its requests to MPI" \
        mpi 3 yes APSMPI_TEST_FAIL=$site:1:2 $STATS -- "$NB" --ops 2 --comms one --no-reference
    expect "... counted" grep -q "a request on a communicator not prepared for requests 6;" "$TMPOUT/err"
    expect "... none compressed" grep -q "calls compressed 0," "$TMPOUT/err"
done
expect "agree failing on rank 1 (fatal error handler): the job stops, no hang" \
    stops_not_hangs 3 yes APSMPI_TEST_FAIL=agree:1:1 -- "$NB" --ops 2 --no-reference
expect "rsag failing at message 3 on rank 2 (fatal error handler): the job stops, no hang" \
    stops_not_hangs 3 yes APSMPI_TEST_FAIL=rsag_send:2:3 APSMPI_CHUNK_SIZE=20000 -- "$NB" --ops 2 --no-reference

# a Python job: mpi4py's Iallreduce (Debian's mpi4py is built for Open MPI)
if [ "$MPI_KIND" = openmpi ]; then
    np=3
    tol=$("$FUZZ" --bound e4m3 $np)
    PY="$(dirname "$0")/iallreduce.py"
    expect "mpi4py: plain MPI" with_checksum mpi $np no -- /usr/bin/python3 "$PY"
    plain=$(checksum)
    expect "mpi4py: Iallreduce compressed, two outstanding, waited for in reverse order" \
        mpi $np yes $STATS -- /usr/bin/python3 "$PY"
    expect "... the same on every rank, within the e4m3 bound $tol" \
        awk -v t="$tol" '/^worst / {w = $2 + 0} /^same on every rank True/ {s = 1} END {exit !(s && w > 0 && w <= t)}' \
        "$TMPOUT/out"
    expect "... compressed as requests" grep -q "requests (MPI_I\*, persistent) $((2 * np));" "$TMPOUT/err"
    expect "mpi4py: APSMPI_ENABLE=0 gives plain MPI's bits" same_checksum "$plain" \
        mpi $np yes APSMPI_ENABLE=0 -- /usr/bin/python3 "$PY"
else
    echo "ok: mpi4py not run with $MPI_KIND (Debian's mpi4py is built for Open MPI)"
fi

# the persistent forms (MPI 4)
if mpi 2 yes -- "$NB" --persistent 1 --ops 1 --count 1000; then
    expect "np=3, persistent Allreduce_init started 3 times, 2 at once, reverse" \
        mpi 3 yes $STATS -- "$NB" --persistent 3 --ops 2 --comms one --complete reverse
    expect "... compressed as requests" grep -q "requests (MPI_I\*, persistent) 18;" "$TMPOUT/err"
    expect "np=3, persistent Reduce_scatter_init, waitall" \
        mpi 3 yes -- "$NB" --persistent 2 --op reduce_scatter --ops 2 --complete waitall
    expect "np=3, persistent Reduce_scatter_block_init, in place, testany" \
        mpi 3 yes -- "$NB" --persistent 2 --op reduce_scatter_block --ops 2 --in-place --complete testany
elif [ $? -eq 77 ] && grep -q "has no persistent collectives" "$TMPOUT/out"; then
    echo "ok: persistent reductions skipped: $(head -1 "$TMPOUT/out")"
else
    expect "the persistent check runs" false
fi
finish
