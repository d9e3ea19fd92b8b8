#!/bin/bash
# semantics.sh: legal MPI programs work with the library preloaded as without it (semantics_check.c): request handles MPI reuses, communicators started in different orders, arrays freed after the call, a communicator freed with a request pending, the large-count and persistent forms.
. "$top_builddir/tests/mpi/env.sh"
SEM="$top_builddir/tests/mpi/semantics_check"
STATS=APSMPI_STATS=1
MPI_TIMEOUT=60

for np in 2 3; do
    for case in reuse crossed counts commfree large; do
        # (Open MPI 4.1's own MPI_Iallreduce crashes when its communicator is freed before
        # the wait, which MPI allows: the library's requests do not; MPICH's do not either)
        [ "$case-$MPI_KIND" = commfree-openmpi ] ||
            expect "np=$np, $case: without the library" mpi $np no -- "$SEM" $case
        expect "np=$np, $case: with it, no hang and the same results" mpi $np yes $STATS -- "$SEM" $case
        expect "... ok" grep -q "semantics_check $case: ok" "$TMPOUT/out"
    done
done

# the requests of each case: compressed, or passed through with their reason
expect "reuse: 20 requests (and 20 more where the MPI has persistent reductions) compressed, each rank" \
    mpi 2 yes $STATS -- "$SEM" reuse
expect "... the job's own requests not taken for apsmpi's" grep -Eq "requests \(MPI_I\*, persistent\) (40|80);" "$TMPOUT/err"
expect "crossed: on MPI_Comm_dup's communicators compressed, on MPI_Cart_create's passed through" \
    mpi 2 yes $STATS -- "$SEM" crossed
expect "... 2 requests compressed per rank" grep -q "requests (MPI_I\*, persistent) 4;" "$TMPOUT/err"
expect "... 2 passed through, their communicators not prepared" \
    grep -q "a request on a communicator not prepared for requests 4;" "$TMPOUT/err"
expect "commfree: compressed" mpi 2 yes $STATS -- "$SEM" commfree
expect "... 3 requests per rank" grep -q "requests (MPI_I\*, persistent) 6;" "$TMPOUT/err"
# APSMPI_ALGORITHM=ring: its requests return at once too (they ran to their end in the start
# call before, and crossed starts hung): pipelined calls (the ring, the blocking call's bits)
# and small ones (one MPI collective, its non-blocking form: within the bound)
for np in 2 3; do
    expect "np=$np, crossed, the ring" mpi $np yes APSMPI_ALGORITHM=ring APSMPI_CHUNK_SIZE=20000 $STATS -- "$SEM" crossed
    expect "... 2 requests compressed per rank" grep -q "requests (MPI_I\*, persistent) $((2 * np));" "$TMPOUT/err"
    expect "np=$np, crossed, the ring's small calls (one collective)" \
        mpi $np yes APSMPI_ALGORITHM=ring APSMPI_MIN_BYTES=0 -- "$SEM" crossed --count 3001 --bound-only
done
# counts beyond INT_MAX (2^31 + 64 floats, on 64 MiB of memory repeated across 8 GiB of
# addresses; 1 rank, whose sum copies the whole count): each _c form passes the MPI_Count to the
# MPI's own call whole, counted as such
if mpi 1 yes $STATS -- "$SEM" huge; then
    expect "... huge: 4 calls of 2^31 + 64 floats to MPI whole" grep -q "counts above INT_MAX 4," "$TMPOUT/err"
elif [ $? -eq 77 ] && grep -q "not available" "$TMPOUT/out"; then
    echo "ok: huge skipped: $(head -1 "$TMPOUT/out")"
else
    expect "huge: the _c forms beyond INT_MAX" false
fi
# at 8 oversubscribed ranks, small buffers
expect "np=8, crossed, small calls" mpi 8 yes APSMPI_MIN_BYTES=0 -- "$SEM" crossed --count 3001
expect "np=8, reuse, small calls" mpi 8 yes APSMPI_MIN_BYTES=0 -- "$SEM" reuse --count 3001
finish
