#!/bin/bash
# bad_env.sh: a wrong APSMPI_* value, or settings that differ between ranks, stop the job at MPI_Init.
. "$top_builddir/tests/mpi/env.sh"

expect_fail "APSMPI_FORMAT=e9m2 stops the job" "apsmpi\[[01]\] FATAL: APSMPI_FORMAT='e9m2' is not valid; valid values: fp32, fp16" \
    mpi 2 yes APSMPI_FORMAT=e9m2 -- "$CHECK" --count 100000
expect "... with one line, and before any reduction" test "$(grep -c apsmpi "$TMPOUT/err")" = 1 -a ! -s "$TMPOUT/out"
expect_fail "APSMPI_SCALING=layer stops the job" "APSMPI_SCALING='layer' is not valid; valid values: block, aps, none" \
    mpi 2 yes APSMPI_SCALING=layer -- "$CHECK" --count 100000
expect_fail "APSMPI_SCALING=none with an MX format stops the job" \
    "APSMPI_SCALING='none' does not apply to the MX format mxfp4" mpi 2 yes APSMPI_FORMAT=mxfp4 APSMPI_SCALING=none -- \
    "$CHECK" --count 100000
expect_fail "APSMPI_CODEC_ISA=sse stops the job" "APSMPI_CODEC_ISA='sse' is not valid; valid values: auto, scalar" \
    mpi 2 yes APSMPI_CODEC_ISA=sse -- "$CHECK" --count 100000
for v in 0 65 two; do
    expect_fail "APSMPI_CODEC_THREADS=$v stops the job" "APSMPI_CODEC_THREADS='$v' is not valid; valid values: auto, 1 to 64" \
        mpi 2 yes APSMPI_CODEC_THREADS=$v -- "$CHECK" --count 100000
done
expect_fail "APSMPI_MIN_BYTES=-5 stops the job" "APSMPI_MIN_BYTES='-5' is not valid" \
    mpi 1 yes APSMPI_MIN_BYTES=-5 -- "$CHECK" --count 100000
expect_fail "APSMPI_ALGORITHM=tree stops the job" "APSMPI_ALGORITHM='tree' is not valid; valid values: rsag, ring" \
    mpi 2 yes APSMPI_ALGORITHM=tree -- "$CHECK" --count 100000
expect_fail "APSMPI_TWOLEVEL_FROM=many stops the job" "APSMPI_TWOLEVEL_FROM='many' is not valid; valid values: 0 to 16777216" \
    mpi 2 yes APSMPI_TWOLEVEL_FROM=many -- "$CHECK" --count 100000
expect "... with one line" test "$(grep -c apsmpi "$TMPOUT/err")" = 1
expect_fail "APSMPI_INTRANODE=yes stops the job" "APSMPI_INTRANODE='yes' is not valid; valid values: pass, compress" \
    mpi 2 yes APSMPI_INTRANODE=yes -- "$CHECK" --count 100000
expect_fail "APSMPI_TEST_NODE_OF_RANK=0,x stops the job" "APSMPI_TEST_NODE_OF_RANK='0,x' is not valid" \
    mpi 2 yes APSMPI_TEST_NODE_OF_RANK=0,x -- "$CHECK" --count 100000
expect_fail "APSMPI_TEST_NODE_OF_RANK naming too few ranks stops the job" \
    "APSMPI_TEST_NODE_OF_RANK='0,1' names 2 ranks, not the 3 of MPI_COMM_WORLD" \
    mpi 3 yes APSMPI_TEST_NODE_OF_RANK=0,1 -- "$CHECK" --count 100000
expect_fail "... or too many (a map written for another job)" \
    "APSMPI_TEST_NODE_OF_RANK='0,0,1,1' names 4 ranks, not the 3 of MPI_COMM_WORLD" \
    mpi 3 yes APSMPI_TEST_NODE_OF_RANK=0,0,1,1 -- "$CHECK" --count 100000
expect "... with one line" test "$(grep -c apsmpi "$TMPOUT/err")" = 1

# run_mpmd NAME=VALUE NAME=VALUE: rank 0 with the first setting, rank 1 with the second.
run_mpmd() { run_mpmd_n 1 "$1" 1 "$2"; }
# run_mpmd_n NP1 'SETTINGS1' NP2 'SETTINGS2': NP1 ranks with the first settings (NAME=VALUE
# words), then NP2 ranks with the second.
run_mpmd_n() {
    local -a first
    app "$1" LD_PRELOAD="$APSMPI_LIB" $2 -- "$CHECK" --count 100000
    first=("${APP[@]}")
    app "$3" LD_PRELOAD="$APSMPI_LIB" $4 -- "$CHECK" --count 100000
    launch "${first[@]}" : "${APP[@]}"
}
# Defect 8: the error says everything that is accepted: the switches' synonyms, and that
# X+Y<=15 leaves Y at most 13.
expect_fail "APSMPI_ENABLE=maybe names all accepted values" \
    "APSMPI_ENABLE='maybe' is not valid; valid values: 1, 0 (also on/off, yes/no, true/false)" \
    mpi 1 yes APSMPI_ENABLE=maybe -- "$CHECK" --count 100000
expect_fail "APSMPI_STATS=2 names all accepted values" "valid values: 1, 0 (also on/off, yes/no, true/false)" \
    mpi 1 yes APSMPI_STATS=2 -- "$CHECK" --count 100000
expect_fail "APSMPI_FORMAT=e2m14 says Y<=13" "eXmY (2<=X<=8, 0<=Y<=13, X+Y<=15)" \
    mpi 1 yes APSMPI_FORMAT=e2m14 -- "$CHECK" --count 100000
expect "APSMPI_STATS=yes is accepted" mpi 1 yes APSMPI_STATS=yes -- "$CHECK" --count 100000

# A bad value on one rank only: that rank says so, and no rank goes on.
expect_fail "a bad value on rank 1 only stops every rank, rank 1 saying why" "apsmpi\[1\] FATAL: APSMPI_FORMAT='e4m4x' is not valid" \
    run_mpmd APSMPI_FORMAT=e4m3 APSMPI_FORMAT=e4m4x
# Settings that differ between ranks: the line names each one and its value on the ranks.
# (These jobs are MPMD, one context per setting: apsmpi says so first, a line of its own,
# which the counts below leave out.)
apsmpi_lines() { grep apsmpi "$TMPOUT/err" | grep -vc "an MPMD job"; }
differ="apsmpi\[0\] FATAL: the APSMPI_\* settings differ between ranks:"
expect_fail "different formats on the ranks stop the job, naming the setting and its values" \
    "$differ APSMPI_FORMAT is e4m3 on rank 0, e5m2 on rank 1; set them alike on every rank" \
    run_mpmd APSMPI_FORMAT=e4m3 APSMPI_FORMAT=e5m2
# The statistics are collectives at MPI_Finalize: differing, they hung the job there.
expect_fail "APSMPI_STATS differing between ranks stops the job at MPI_Init" "$differ APSMPI_STATS is 1 on rank 0, 0 on rank 1;" \
    run_mpmd APSMPI_STATS=1 APSMPI_STATS=0
expect "... with one line, and before any reduction" test "$(apsmpi_lines)" = 1 -a ! -s "$TMPOUT/out"
expect_fail "APSMPI_ENABLE differing between ranks stops the job" "$differ APSMPI_ENABLE is 0 on rank 0, 1 on rank 1;" \
    run_mpmd APSMPI_ENABLE=0 APSMPI_ENABLE=1
# One rank compressing and one not: the setting that decides it, not every other wire
# setting that only one of them compares.
expect_fail "fp32 on one rank: APSMPI_FORMAT named alone" "$differ APSMPI_FORMAT is e4m3 on rank 0, fp32 on rank 1; set" \
    run_mpmd APSMPI_FORMAT=e4m3 'APSMPI_FORMAT=fp32 APSMPI_BLOCK_SIZE=1k'
expect_fail "two settings differing: both named" \
    "$differ APSMPI_BLOCK_SIZE is 4096 on rank 0 and 2 others, 1024 on rank 3; APSMPI_STATS is 0 on rank 0 and 2 others, 1 on rank 3; set" \
    run_mpmd_n 3 '' 1 'APSMPI_BLOCK_SIZE=1k APSMPI_STATS=1'
expect "... with one line" test "$(apsmpi_lines)" = 1
finish
