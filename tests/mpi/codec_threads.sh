#!/bin/bash
# codec_threads.sh: the host codec's work on several threads per rank (APSMPI_CODEC_THREADS) sends and returns the bits of one thread, on every path.
. "$top_builddir/tests/mpi/env.sh"

# Pieces of 100000 elements: 3 parts of at least 32768 on 3 threads (core/codec_parallel.h).
# Each case once on one thread (its checksum), then on 2, 3 and 8 (more threads than the
# machine has cores: the helpers share them) and on auto: the same bits.
same_bits() { # NAME NP SETTINGS... -- CHECK ARGS...
    local name=$1 np=$2 ref
    shift 2
    expect "$name, one thread" with_checksum mpi "$np" yes APSMPI_CODEC_THREADS=1 "$@"
    ref=$(checksum)
    for t in 2 3 8 auto; do
        expect "... $t threads: the same bits" same_checksum "$ref" mpi "$np" yes APSMPI_CODEC_THREADS=$t "$@"
    done
}

same_bits "np=3 allreduce in pieces, e4m3, stochastic" 3 APSMPI_CHUNK_SIZE=100000 APSMPI_ROUNDING=stochastic -- \
    "$CHECK" --count 1000003 --block 4096 --tol 0.204
same_bits "np=4 allreduce in one piece per segment, e3m2, MPI_IN_PLACE" 4 APSMPI_FORMAT=e3m2 APSMPI_CHUNK_SIZE=0 \
    APSMPI_BLOCK_SIZE=1000 -- \
    "$CHECK" --in-place --count 1000003 --block 1000 --tol 0.37
same_bits "np=3 reduce_scatter, mxfp6" 3 APSMPI_FORMAT=mxfp6 APSMPI_CHUNK_SIZE=100000 -- \
    "$CHECK" --op reduce_scatter --count 1000003 --block 32 --tol 1
same_bits "np=4 on 2 fake nodes (the node path), fp16" 4 APSMPI_FORMAT=fp16 APSMPI_TEST_NODE_OF_RANK=0,0,1,1 \
    APSMPI_CHUNK_SIZE=100000 -- "$CHECK" --count 1000003 --block 4096 --tol 0.01
same_bits "np=2, the ring" 2 APSMPI_ALGORITHM=ring APSMPI_CHUNK_SIZE=100000 -- \
    "$CHECK" --count 1000003 --block 4096 --tol 0.204
# the job's two threads reducing at once: one has the helpers, the other's loops run alone
expect "np=2, two threads of the job reducing at once on 4 codec threads" mpi 2 yes APSMPI_CODEC_THREADS=4 \
    APSMPI_CHUNK_SIZE=100000 -- "$CHECK" --threads 2 --repeat 3 --count 700000 --block 4096 --tol 0.204 --expect-inexact
finish
