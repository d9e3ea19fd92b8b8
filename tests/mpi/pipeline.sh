#!/bin/bash
# pipeline.sh: calls above APSMPI_CHUNK_SIZE elements are pipelined: rsag (the default) sends them in pieces; results stay within the bound.
. "$top_builddir/tests/mpi/env.sh"

# Bounds as tests/mpi/formats.sh derives them: e4m3 on 4 ranks 0.204, e3m2 on 3 ranks 0.37.
expect "np=4, 10 pieces and a short last one" mpi 4 yes APSMPI_CHUNK_SIZE=50000 APSMPI_STATS=1 -- \
    "$CHECK" --count 523457 --block 4096 --tol 0.204 --expect-inexact
expect "... all of it compressed" grep -q 'calls compressed 4,.*bytes 8375312 -> [0-9]* ([0-9.]*x; codes 2093828 (4.00x)' "$TMPOUT/err"
expect "np=3, MPI_IN_PLACE, 6-bit, pieces not a multiple of the block" mpi 3 yes APSMPI_FORMAT=e3m2 APSMPI_CHUNK_SIZE=30000 -- \
    "$CHECK" --in-place --count 400001 --block 4096 --tol 0.37 --expect-inexact
expect "np=2, per-call APS, more pieces than the pipeline is deep" mpi 2 yes APSMPI_SCALING=aps APSMPI_CHUNK_SIZE=10000 -- \
    "$CHECK" --uniform --count 300000 --tol 0.204 --expect-inexact
expect "np=2, two threads pipelining at once" mpi 2 yes APSMPI_CHUNK_SIZE=20000 -- \
    "$CHECK" --threads 2 --repeat 3 --count 250000 --block 4096 --tol 0.204 --expect-inexact
expect "np=3, stochastic rounding in pieces" mpi 3 yes APSMPI_CHUNK_SIZE=40000 APSMPI_ROUNDING=stochastic -- \
    "$CHECK" --count 300000 --block 4096 --tol 0.204 --expect-inexact
first=$(checksum)
for np in 2 3 4; do
    expect "np=$np, reduce_scatter uneven in pieces" mpi $np yes APSMPI_CHUNK_SIZE=20000 -- \
        "$CHECK" --op reduce_scatter --count 400003 --block 4096 --tol 0.204 --expect-inexact
    expect "np=$np, reduce_scatter_block in pieces, MPI_IN_PLACE" mpi $np yes APSMPI_CHUNK_SIZE=20000 -- \
        "$CHECK" --op reduce_scatter_block --in-place --count 400003 --block 4096 --tol 0.204 --expect-inexact
done
expect "np=3, reduce_scatter with a zero count, 7-bit" mpi 3 yes APSMPI_CHUNK_SIZE=20000 APSMPI_FORMAT=e3m3 -- \
    "$CHECK" --op reduce_scatter --zero-count --count 400003 --block 4096 --tol 0.2
expect "... repeats bit for bit" same_checksum "$first" mpi 3 yes APSMPI_CHUNK_SIZE=40000 APSMPI_ROUNDING=stochastic -- \
    "$CHECK" --count 300000 --block 4096 --tol 0.204
# rsag's schedule (APSMPI_RSAG_WINDOW): each owner sums its pieces in the same order whatever
# the window, so every window gives the bits of the earlier schedule (0: all at once)
expect "np=4, the earlier schedule, all at once" with_checksum mpi 4 yes APSMPI_CHUNK_SIZE=20000 APSMPI_RSAG_WINDOW=0 -- \
    "$CHECK" --count 523457 --block 4096 --tol 0.204
all_at_once=$(checksum)
for w in 1 2 3 4 64; do
    expect "... window $w, piece-major: the same bits" same_checksum "$all_at_once" \
        mpi 4 yes APSMPI_CHUNK_SIZE=20000 APSMPI_RSAG_WINDOW=$w -- "$CHECK" --count 523457 --block 4096 --tol 0.204
done
expect "np=5, reduce_scatter, stochastic rounding, all at once" with_checksum \
    mpi 5 yes APSMPI_CHUNK_SIZE=20000 APSMPI_ROUNDING=stochastic APSMPI_RSAG_WINDOW=0 -- \
    "$CHECK" --op reduce_scatter --count 400003 --block 4096 --tol 0.204
all_at_once=$(checksum)
expect "... window 1: the same bits" same_checksum "$all_at_once" \
    mpi 5 yes APSMPI_CHUNK_SIZE=20000 APSMPI_ROUNDING=stochastic APSMPI_RSAG_WINDOW=1 -- \
    "$CHECK" --op reduce_scatter --count 400003 --block 4096 --tol 0.204
expect "np=3, window 1, two threads pipelining at once" mpi 3 yes APSMPI_CHUNK_SIZE=20000 APSMPI_RSAG_WINDOW=1 -- \
    "$CHECK" --threads 2 --repeat 3 --count 250000 --block 4096 --tol 0.204 --expect-inexact
finish
