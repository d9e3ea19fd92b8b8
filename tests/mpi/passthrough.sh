#!/bin/bash
# passthrough.sh: every call the library does not compress gives the same bits as plain MPI.
. "$top_builddir/tests/mpi/env.sh"

# same_as_plain WHAT NP [NAME=VALUE ...] -- ARGS: the checksum with the library preloaded
# (and the variables set) equals the checksum of plain MPI.
same_as_plain() {
    local what=$1 np=$2 vars=() plain
    shift 2
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    if ! with_checksum mpi "$np" no -- "$CHECK" "$@"; then
        expect "$what (plain run)" false
        return
    fi
    plain=$(checksum)
    expect "$what: bit for bit" same_checksum "$plain" mpi "$np" yes "${vars[@]}" APSMPI_MIN_BYTES=4096 -- "$CHECK" "$@"
}

same_as_plain "MPI_DOUBLE" 3 -- --type double --count 100000
same_as_plain "MPI_INT" 3 -- --type int --count 100000
same_as_plain "MPI_MAX on floats" 3 -- --mpi-op max --count 100000
same_as_plain "a user-defined op on floats" 2 -- --mpi-op user --count 100000
same_as_plain "a call below APSMPI_MIN_BYTES" 3 -- --count 1000
same_as_plain "count 0" 2 -- --count 0
same_as_plain "reduce_scatter below the threshold" 3 -- --op reduce_scatter --count 900
same_as_plain "an intercommunicator" 4 -- --intercomm --count 100000
same_as_plain "APSMPI_ENABLE=0" 3 APSMPI_ENABLE=0 -- --count 100000
same_as_plain "APSMPI_FORMAT=fp32" 3 APSMPI_FORMAT=fp32 -- --op reduce_scatter --count 100000
same_as_plain "inf and NaN on two ranks: sent in fp32" 3 -- --nonfinite --count 100000
same_as_plain "inf and NaN with reduce_scatter_block" 4 -- --op reduce_scatter_block --nonfinite --count 100000
# Defect 6: on one rank nothing is sent, so nothing is quantized (0.1f stayed 0.1015625).
same_as_plain "a communicator of one rank (np=1)" 1 -- --count 100000
same_as_plain "reduce_scatter on one rank" 1 -- --op reduce_scatter --count 100000
# Defect 7: sendbuf == recvbuf without MPI_IN_PLACE is an error MPI reports; apsmpi passes
# the call on so that the job gets MPI's own answer instead of a compressed sum.
sorted_out() { sort "$TMPOUT/out"; }
expect "send buffer = receive buffer (plain run)" mpi 2 no -- "$CHECK" --alias --count 100000
plain_alias=$(sorted_out)
expect "send buffer = receive buffer: MPI's own error class on every rank" \
    eval 'mpi 2 yes -- "$CHECK" --alias --count 100000 && [ "$(sorted_out)" = "$plain_alias" ] && [ -n "$plain_alias" ]'
expect "inf + -inf = NaN, inf and NaN kept" mpi 3 yes APSMPI_STATS=1 -- "$CHECK" --nonfinite --count 100000
expect "the statistics count the fp32 fallback on each of 3 ranks" grep -q 'sent in fp32 for inf/NaN 3,' "$TMPOUT/err"
finish
