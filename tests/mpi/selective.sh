#!/bin/bash
# selective.sh: APSMPI_COMM_INCLUDE/EXCLUDE (communicator names) and APSMPI_MAX_BYTES keep chosen calls exact, bit for bit, and compress the others.
. "$top_builddir/tests/mpi/env.sh"
tol=$("$FUZZ" --bound e4m3 3)

# exact NAME [NAME=VALUE ...] -- ARGS: with the variables, the call is plain MPI's, bit for bit.
exact() {
    local what=$1 vars=() plain
    shift
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    expect "$what: plain MPI" with_checksum mpi 3 no -- "$CHECK" "$@"
    plain=$(checksum)
    expect "$what: passed through, bit for bit" same_checksum "$plain" mpi 3 yes "${vars[@]}" -- "$CHECK" "$@"
}
# compressed NAME [NAME=VALUE ...] -- ARGS: with the variables, the call is compressed.
compressed() {
    local what=$1 vars=()
    shift
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    expect "$what: compressed" mpi 3 yes "${vars[@]}" -- "$CHECK" "$@" --block 4096 --tol "$tol" --expect-inexact
}

exact "excluded by name" APSMPI_COMM_EXCLUDE='metric*,loss' -- --name metrics_sum --count 100000
compressed "not excluded" APSMPI_COMM_EXCLUDE='metric*,loss' -- --name gradients --count 100000
compressed "included by name" APSMPI_COMM_INCLUDE='grad*,bucket?' -- --name bucket3 --count 100000
exact "not included" APSMPI_COMM_INCLUDE='grad*,bucket?' -- --name bucket12 --count 100000
exact "MPI_COMM_WORLD not included" APSMPI_COMM_INCLUDE='grad*' -- --count 100000
compressed "MPI_COMM_WORLD included by its name" APSMPI_COMM_INCLUDE='MPI_COMM_WORLD' -- --count 100000
exact "included, then excluded" APSMPI_COMM_INCLUDE='grad*' APSMPI_COMM_EXCLUDE='grad_exact' -- --name grad_exact --count 100000
exact "above APSMPI_MAX_BYTES (400 KB > 100k)" APSMPI_MAX_BYTES=100k -- --count 100000
compressed "within APSMPI_MIN_BYTES..APSMPI_MAX_BYTES (80 KB)" APSMPI_MAX_BYTES=100k -- --count 20000
exact "a reduce_scatter above APSMPI_MAX_BYTES" APSMPI_MAX_BYTES=100k -- --op reduce_scatter --count 100000
finish
