#!/bin/bash
# threads.sh: two threads per rank reduce at once on duplicated communicators (MPI_THREAD_MULTIPLE).
. "$top_builddir/tests/mpi/env.sh"

expect "2 threads x 6 allreduces, np=2" mpi 2 yes APSMPI_STATS=1 -- "$CHECK" --threads 2 --repeat 6 --count 100000 --block 4096 --tol 0.21 --expect-inexact
expect "all 24 calls were compressed" grep -q 'calls compressed 24,' "$TMPOUT/err"
expect "2 threads x 4 reduce_scatters, np=3" mpi 3 yes -- "$CHECK" --threads 2 --repeat 4 --op reduce_scatter --count 100003 --block 4096 --tol 0.21 --expect-inexact
finish
