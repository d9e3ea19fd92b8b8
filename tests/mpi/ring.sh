#!/bin/bash
# ring.sh: the previous algorithm, kept for comparison (APSMPI_ALGORITHM=ring), still sums within its bound.
. "$top_builddir/tests/mpi/env.sh"

# The ring's bound, as tests/mpi/formats.sh derives it for N ranks: its N-1 partial sums are
# rounded too, and its scales keep ceil(log2 N) binades of headroom; e4m3 on 4 ranks 0.204,
# e3m2 on 3 ranks 0.37, e4m3 on 3 ranks 0.2.
R=APSMPI_ALGORITHM=ring
expect "allreduce, one MPI collective with the packed sum op" mpi 4 yes $R APSMPI_STATS=1 -- \
    "$CHECK" --count 150000 --block 4096 --tol 0.204 --expect-inexact
expect "... names the algorithm" grep -q 'algorithm=ring' "$TMPOUT/err"
expect "allreduce through the pipelined ring, in place, 6-bit" mpi 3 yes $R APSMPI_FORMAT=e3m2 APSMPI_CHUNK_SIZE=30000 -- \
    "$CHECK" --in-place --count 400001 --block 4096 --tol 0.37 --expect-inexact
for np in 2 4; do
    expect "np=$np, reduce_scatter uneven, one collective" mpi $np yes $R -- \
        "$CHECK" --op reduce_scatter --count 200003 --block 4096 --tol 0.204 --expect-inexact
    expect "np=$np, reduce_scatter uneven through the ring" mpi $np yes $R APSMPI_CHUNK_SIZE=20000 -- \
        "$CHECK" --op reduce_scatter --count 400003 --block 4096 --tol 0.204 --expect-inexact
    expect "np=$np, reduce_scatter_block in place through the ring" mpi $np yes $R APSMPI_CHUNK_SIZE=20000 -- \
        "$CHECK" --op reduce_scatter_block --in-place --count 400003 --block 4096 --tol 0.204 --expect-inexact
done
expect "np=3, reduce_scatter with a zero count through the ring" mpi 3 yes $R APSMPI_CHUNK_SIZE=20000 -- \
    "$CHECK" --op reduce_scatter --zero-count --count 400003 --block 4096 --tol 0.2
# the two algorithms put different bytes on the wire: their results differ
expect "rsag's result, to compare with" with_checksum mpi 4 yes -- "$CHECK" --count 150000 --block 4096 --tol 1
rsag=$(checksum)
expect "the ring's result differs from rsag's" other_checksum "$rsag" mpi 4 yes $R -- "$CHECK" --count 150000 --block 4096 --tol 1
finish
