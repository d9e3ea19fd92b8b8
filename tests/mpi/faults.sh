#!/bin/bash
# faults.sh: failures injected on one rank (APSMPI_TEST_FAIL) never hang the job nor split the ranks: all of them pass through, or send the call in FP32.
. "$top_builddir/tests/mpi/env.sh"

# Plain MPI's result, which a job that passes everything through must give bit for bit.
expect "plain MPI" with_checksum mpi 3 no -- "$CHECK" --count 600000 --repeat 2
plain=$(checksum)

# Defect 3: a setup step at MPI_Init failing on one rank made that rank pass through while
# the others compressed (a hang or a truncated sum). Now every rank passes through, and the
# failing rank says why.
for site in codec keyval sumop; do
    # the ring's sum op (sumop) is made only when the ring is chosen
    ring=
    [ $site = sumop ] && ring=APSMPI_ALGORITHM=ring
    for rank in 0 2; do
        expect "$site failing on rank $rank at MPI_Init${ring:+ ($ring)}: every rank passes through, bit for bit" \
            same_checksum "$plain" mpi 3 yes APSMPI_TEST_FAIL=$site:$rank:1 APSMPI_STATS=1 $ring -- \
            "$CHECK" --count 600000 --repeat 2
        expect "... said on stderr" grep -q "passes through uncompressed" "$TMPOUT/err"
        expect "... and nothing was compressed" grep -q "calls compressed 0," "$TMPOUT/err"
    done
done
# With rsag, the default, the ring's op is not made at all: a failure there cannot happen, and
# cannot turn compression off.
expect "sumop failing on every rank with rsag: nothing made, every call compressed" \
    mpi 3 yes 'APSMPI_TEST_FAIL=sumop:*:1' APSMPI_STATS=1 -- "$CHECK" --count 600000 --repeat 2 --tol 0.17
expect "... nothing said" not grep -q "passes through uncompressed" "$TMPOUT/err"
expect "... every call compressed (two per rank)" grep -q "calls compressed 6," "$TMPOUT/err"

# Defect 3: the private communicator that rsag and the ring send on: a failed allocation on
# one rank skipped the PMPI_Comm_dup the other ranks had entered (a hang). Now the ranks
# agree that it failed and none keeps it. The first one made is MPI_COMM_WORLD's, at MPI_Init
# (state/comm_prepare.h); failing there, MPI_COMM_WORLD has no duplicate on any rank, and the
# first call makes it again on all of them and compresses.
for site in dup_malloc dup_attr; do
    expect "$site failing on rank 1 at MPI_Init: no hang, every call compressed" \
        mpi 3 yes APSMPI_TEST_FAIL=$site:1:1 APSMPI_STATS=1 -- "$CHECK" --count 600000 --repeat 2 --tol 0.17
    expect "... both calls compressed (on each rank)" grep -q "calls compressed 6," "$TMPOUT/err"
done

# Defect 4 (the ring, APSMPI_ALGORITHM=ring): after an error the ring left its receives active on the scratch buffers of the
# next call, whose messages then matched them (wrong sums or a hang). Every rank's ring
# fails at its first message here (the error returned, MPI_ERRORS_RETURN); the calls after
# it must be right.
expect "the ring failing on every rank: the error returned, the next calls right" \
    mpi 3 yes APSMPI_ALGORITHM=ring APSMPI_CHUNK_SIZE=1k 'APSMPI_TEST_FAIL=ring_send:*:1' -- \
    "$CHECK" --count 30000 --repeat 3 --errors-return --tol "$("$FUZZ" --bound e4m3 3)"
expect "... the failed call said so on every rank" test "$(grep -c 'call 0 returned an error' "$TMPOUT/out")" = 3
# With the default error handler a ring error on one rank stops the job, as MPI's own
# errors do: it ends (not at the timeout, status 124) and says why.
expect "the ring failing on rank 1 only, fatal error handler: the job stops, no hang" \
    stops_not_hangs 3 yes APSMPI_ALGORITHM=ring APSMPI_CHUNK_SIZE=1k APSMPI_TEST_FAIL=ring_send:1:3 -- "$CHECK" --count 30000

# The same for rsag, the default algorithm, failing at its first message on every rank, and
# later, after each rank has sent some of its contributions: the messages the other ranks
# sent that no receive takes any more must not match the next calls' receives (each call
# has its own range of tags on the private communicator).
for pass in 1 4 7; do
    expect "rsag failing at message $pass on every rank: the error returned, the next calls right" \
        mpi 3 yes APSMPI_CHUNK_SIZE=1k "APSMPI_TEST_FAIL=rsag_send:*:$pass" -- \
        "$CHECK" --count 30000 --repeat 4 --errors-return --tol "$("$FUZZ" --bound e4m3 3)"
    expect "... the failed call said so on every rank" test "$(grep -c 'call 0 returned an error' "$TMPOUT/out")" = 3
done
# The same on a communicator made by MPI_Comm_split, which carries no MPI_TAG_UB in Open MPI:
# each call must still have its own tags (they are read from MPI_COMM_WORLD).
expect "rsag failing at message 4 on every rank, split communicator: the next calls right" \
    mpi 3 yes APSMPI_CHUNK_SIZE=1k "APSMPI_TEST_FAIL=rsag_send:*:4" -- \
    "$CHECK" --split --count 30000 --repeat 4 --errors-return --tol "$("$FUZZ" --bound e4m3 3)"
expect "... the failed call said so on every rank" test "$(grep -c 'call 0 returned an error' "$TMPOUT/out")" = 3
expect "rsag failing on rank 1 only, fatal error handler: the job stops, no hang" \
    stops_not_hangs 3 yes APSMPI_CHUNK_SIZE=1k APSMPI_TEST_FAIL=rsag_send:1:3 -- "$CHECK" --count 30000

# The agreement's own reduction failing: like a failed MPI call, through the error handler.
# On every rank (MPI_ERRORS_RETURN) the second call returns the error and the others are right;
# on one rank with the default handler the job stops.
expect "the agreement failing on every rank at the second call: the error returned, the other calls right" \
    mpi 3 yes 'APSMPI_TEST_FAIL=agree:*:2' -- \
    "$CHECK" --count 30000 --repeat 3 --errors-return --tol "$("$FUZZ" --bound e4m3 3)"
expect "... the failed call said so on every rank" test "$(grep -c 'call 1 returned an error' "$TMPOUT/out")" = 3
expect "the agreement failing on rank 2 only, fatal error handler: the job stops, no hang" \
    stops_not_hangs 3 yes APSMPI_TEST_FAIL=agree:2:2 -- "$CHECK" --count 30000 --repeat 3

# A rank that cannot get the memory of a call's agreement cannot take part in it while the
# others wait there: it ends the job (PMPI_Abort) with one line, the others do not hang.
expect "no memory for the agreement on rank 1: the job ends, no hang" \
    stops_not_hangs 3 yes APSMPI_TEST_FAIL=agree_alloc:1:2 -- "$CHECK" --count 150000 --repeat 3
expect "... rank 1 says why" \
    grep -q "apsmpi\[1\] FATAL: out of memory for the 37 block exponents of a 150000-element call" "$TMPOUT/err"
expect "... in the only line from apsmpi" test "$(grep -c apsmpi "$TMPOUT/err")" = 1
# The MPI's own Fortran entry missing (here: a C program without the MPI's Fortran library
# calls apsmpi's mpi_init_f08_): the same one line and status 1, not a crash (abort()).
expect_fail "the MPI's Fortran entry missing: the job ends, saying why" \
    "apsmpi FATAL: the MPI library has no Fortran entry pmpi_init_f08_ or mpi_init_f08_" \
    mpi 2 yes -- "$CHECK" --fortran-init
no_crash() { ! grep -qiE 'signal|core dumped' "$TMPOUT/err"; }
expect "... without a crash" no_crash
expect "... and before returning to the program" test ! -s "$TMPOUT/out"

# The setting itself: a bad one stops the job like any other.
expect_fail "APSMPI_TEST_FAIL with an unknown site stops the job" "APSMPI_TEST_FAIL='disk:0:1' is not valid" \
    mpi 2 yes APSMPI_TEST_FAIL=disk:0:1 -- "$CHECK" --count 100000
finish
