#!/bin/bash
# progress.sh: compressed reductions as resumable operations, several at once on one thread, each on memory of its own and progressed without blocking (as non-blocking calls will be): the same bits as the blocking calls.
. "$top_builddir/tests/mpi/env.sh"
PROGRESS="$top_builddir/tests/mpi/progress_check"

# progress_check is not preloaded: it links the library's layers and calls them itself.
for np in 2 3 4; do
    expect "np=$np, 3 pipelined allreduces at once (rsag in pieces), in place" \
        mpi $np no APSMPI_CHUNK_SIZE=20000 -- "$PROGRESS" --ops 3 --count 300001 --in-place --repeat 2
    expect "... said so" grep -q "progress ok: 3 allreduce of 300001 floats" "$TMPOUT/out"
    expect "np=$np, 2 reduce_scatters at once, uneven counts, one empty" \
        mpi $np no APSMPI_CHUNK_SIZE=20000 -- "$PROGRESS" --op reduce_scatter --ops 2 --count 300003
    expect "np=$np, 2 reduce_scatter_blocks at once, in place" \
        mpi $np no APSMPI_CHUNK_SIZE=20000 -- "$PROGRESS" --op reduce_scatter_block --ops 2 --count 300003 --in-place
done
expect "np=4, window 1 (one message in flight per rank), 3 at once" \
    mpi 4 no APSMPI_CHUNK_SIZE=20000 APSMPI_RSAG_WINDOW=1 -- "$PROGRESS" --ops 3 --count 300001 --repeat 2
expect "np=4, all at once (window 0), 3 at once" \
    mpi 4 no APSMPI_CHUNK_SIZE=20000 APSMPI_RSAG_WINDOW=0 -- "$PROGRESS" --ops 3 --count 300001 --repeat 2
expect "np=3, one piece per segment (not pipelined), 6-bit, 4 at once" \
    mpi 3 no APSMPI_FORMAT=e3m2 -- "$PROGRESS" --ops 4 --count 100003
expect "np=3, per-call APS" mpi 3 no APSMPI_SCALING=aps APSMPI_CHUNK_SIZE=30000 -- "$PROGRESS" --count 200001
expect "np=2, no scaling, fp16" mpi 2 no APSMPI_SCALING=none APSMPI_FORMAT=fp16 -- "$PROGRESS" --count 200001
# the node path: the route's agreement, the node's non-blocking collectives, and each
# part's own reduction across nodes (its agreement and rsag), all resumable
expect "the node path, 2 nodes of 2 ranks, 2 at once, in batches" \
    mpi 4 no APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass APSMPI_CHUNK_SIZE=5000 -- \
    "$PROGRESS" --ops 2 --count 300001 --in-place
expect "the node path, uneven nodes (1, 2, 3 ranks)" \
    mpi 6 no APSMPI_TEST_NODE_OF_RANK=0,1,1,2,2,2 APSMPI_INTRANODE=pass APSMPI_CHUNK_SIZE=5000 -- \
    "$PROGRESS" --ops 2 --count 200001
# the ring and the one collective (APSMPI_ALGORITHM=ring), resumable too: the ring gives the
# blocking call's bits; the one collective's non-blocking form (MPI's own) may sum in another
# order than its blocking form, so it is compared within the bound
expect "np=3, the ring, 2 at once" mpi 3 no APSMPI_ALGORITHM=ring APSMPI_CHUNK_SIZE=20000 -- \
    "$PROGRESS" --ops 2 --count 300001
expect "np=3, the one collective of the ring's small calls, 2 at once" mpi 3 no APSMPI_ALGORITHM=ring -- \
    "$PROGRESS" --ops 2 --count 100001 --bound-only
for op in reduce_scatter reduce_scatter_block; do
    expect "np=3, the one collective, $op" mpi 3 no APSMPI_ALGORITHM=ring -- \
        "$PROGRESS" --op $op --ops 2 --count 100001 --bound-only
done
finish
