#!/bin/bash
# fuzz.sh: a short run of the differential fuzzer (tests/mpi/fuzz.c) with and without the library, on several formats and rank counts.
. "$top_builddir/tests/mpi/env.sh"

# Without the library: the fuzzer's own checks hold for plain MPI (FP32 rounding only).
expect "plain MPI, 4 ranks" mpi 4 no -- "$FUZZ" --exact --cases 40 --nonfinite --huge --seed 11

# Every call compressed (APSMPI_MIN_BYTES=0): random counts, sub-communicators, in place,
# odd offsets, every value class, inf/NaN, values near FP32's largest; results within the
# format's bound (inf where the sum overflows FP32), ranks alike.
for spec in "e4m3 4 4096" "e5m2 3 1000" "e3m2 2 4096" "fp16 4 4096" "bf16 3 0"; do
    set -- $spec
    scaling=block block_size=$3
    [ "$3" = 0 ] && scaling=aps block_size=4096 # --block 0: one block, the whole call
    expect "$1 on $2 ranks, scaling $scaling" mpi "$2" yes APSMPI_FORMAT="$1" APSMPI_MIN_BYTES=0 \
        APSMPI_SCALING=$scaling APSMPI_BLOCK_SIZE="$block_size" -- \
        "$FUZZ" --format "$1" --block "$3" --cases 40 --nonfinite --huge --seed "$2$3"
done
# Pipelined in small pieces (APSMPI_CHUNK_SIZE=1k), stochastic rounding; and the previous
# algorithm (APSMPI_ALGORITHM=ring), held to its own, looser bound (error_bound in fuzz.c).
expect "e4m3 pipelined in 1k pieces, stochastic" mpi 4 yes APSMPI_MIN_BYTES=0 APSMPI_CHUNK_SIZE=1k \
    APSMPI_ROUNDING=stochastic -- "$FUZZ" --format e4m3 --stochastic --cases 40 --seed 5
expect "e4m3 ring in 1k pieces" mpi 4 yes APSMPI_MIN_BYTES=0 APSMPI_CHUNK_SIZE=1k APSMPI_ALGORITHM=ring -- \
    "$FUZZ" --format e4m3 --cases 30 --huge --seed 6

# The fuzzer can fail: held to FP32 rounding, the compressed results are caught.
expect_fail "compressed results are not FP32-exact" "above the bound" \
    mpi 2 yes APSMPI_MIN_BYTES=0 -- "$FUZZ" --exact --cases 10 --seed 3

# Defect 9 (a reduce-scatter "flushing" integer data): integers of at most 2^10 never flush
# in fp16, whatever the operation, communicator or path, so the counter must say 0; and it
# must count every non-zero input once (each rank's whole buffer, reduce-scatters included:
# no segment twice, none left out), as many as the fuzzer sent.
expect "fp16 integer data: nothing counted as flushed" mpi 3 yes APSMPI_FORMAT=fp16 APSMPI_MIN_BYTES=0 \
    APSMPI_CHUNK_SIZE=4k APSMPI_STATS=1 -- "$FUZZ" --format fp16 --integers --cases 60 --seed 9
sent=$(awk '/^nonzero inputs/ {print $3}' "$TMPOUT/out")
expect "... and the stats line says so, of the $sent non-zero inputs sent" \
    grep -q "flushed to zero 0 of $sent (" "$TMPOUT/err"
finish
