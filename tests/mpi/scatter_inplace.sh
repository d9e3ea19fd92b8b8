#!/bin/bash
# scatter_inplace.sh: MPI_IN_PLACE, uneven and zero reduce_scatter counts, reduce_scatter_block, compressed.
. "$top_builddir/tests/mpi/env.sh"

tol=0.21 # e4m3 on up to 4 ranks, as tests/mpi/formats.sh derives it
expect "allreduce MPI_IN_PLACE" mpi 4 yes -- "$CHECK" --in-place --count 123457 --block 4096 --tol $tol --expect-inexact
for np in 2 3 4; do
    expect "reduce_scatter uneven np=$np" mpi $np yes -- "$CHECK" --op reduce_scatter --count 200003 --block 4096 --tol $tol --expect-inexact
    expect "reduce_scatter_block np=$np" mpi $np yes -- "$CHECK" --op reduce_scatter_block --count 200003 --block 4096 --tol $tol --expect-inexact
done
expect "reduce_scatter with a zero count" mpi 3 yes -- "$CHECK" --op reduce_scatter --zero-count --count 200003 --block 4096 --tol $tol
expect "reduce_scatter MPI_IN_PLACE" mpi 3 yes -- "$CHECK" --op reduce_scatter --in-place --count 200003 --block 4096 --tol $tol --expect-inexact
expect "reduce_scatter_block MPI_IN_PLACE, 6-bit" mpi 4 yes APSMPI_FORMAT=e3m2 -- "$CHECK" --op reduce_scatter_block --in-place --count 200000 --block 4096 --tol 0.46 --expect-inexact
expect "reduce_scatter, 7-bit, segments not on group bounds" mpi 3 yes APSMPI_FORMAT=e3m3 -- "$CHECK" --op reduce_scatter --count 200003 --block 4096 --tol 0.2 --expect-inexact
expect "reduce_scatter, per-call APS" mpi 3 yes APSMPI_SCALING=aps -- "$CHECK" --op reduce_scatter --uniform --count 200003 --tol $tol --expect-inexact
finish
