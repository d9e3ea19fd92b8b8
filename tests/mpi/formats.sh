#!/bin/bash
# formats.sh: every format, 1 to 4 ranks, each scaling mode: the preloaded sum stays within the stated bound.
. "$top_builddir/tests/mpi/env.sh"

# bound FORMAT NRANKS: the error bound relative to N * B (B: the block's largest input),
# derived in one place: error_bound in tests/mpi/fuzz.c.
bound() { "$FUZZ" --bound "$1" "$2"; }

for fmt in fp16 bf16 e5m2 e4m3 e4m3ieee e3m2 e3m3 e5m6; do
    for np in 2 3 4; do # one rank sends nothing and is not compressed (passthrough.sh)
        tol=$(bound "$fmt" "$np")
        expect "$fmt np=$np per-block APS within $tol" \
            mpi "$np" yes APSMPI_FORMAT="$fmt" -- "$CHECK" --count 150000 --block 4096 --tol "$tol" --expect-inexact
    done
done

# The MX formats (OCP's and mxfp5): blocks of 32 elements, each scaled from its own values and carrying its
# scale (the ranks agree on no exponent, only on whether anything is inf or NaN); the bound
# holds relative to each block of 32 (the saturation of an element above the largest normal
# included), by every path: rsag in one piece and pipelined, reduce-scatter, the ring.
for fmt in mxfp8 mxfp8e5m2 mxfp6 mxfp6e2m3 mxfp5 mxfp4; do
    for np in 2 4; do
        tol=$(bound "$fmt" "$np")
        expect "$fmt np=$np within $tol" \
            mpi "$np" yes APSMPI_FORMAT="$fmt" -- "$CHECK" --count 150000 --block 32 --tol "$tol" --expect-inexact
    done
done
expect "mxfp4 np=3 pipelined, uneven segments" mpi 3 yes APSMPI_FORMAT=mxfp4 APSMPI_CHUNK_SIZE=16k -- \
    "$CHECK" --count 150001 --block 32 --tol "$(bound mxfp4 3)" --expect-inexact
expect "mxfp6 np=3 reduce_scatter_block" mpi 3 yes APSMPI_FORMAT=mxfp6 -- \
    "$CHECK" --op reduce_scatter_block --count 150048 --block 32 --tol "$(bound mxfp6 3)" --expect-inexact
# uneven segments: each is encoded in blocks of its own, which start with the segment (not at
# multiples of 32 of the whole buffer, where the bound's blocks are): the L2 error is checked
expect "mxfp6 np=3 reduce_scatter, uneven segments" mpi 3 yes APSMPI_FORMAT=mxfp6 -- \
    "$CHECK" --op reduce_scatter --count 150001 --block 4096 --tol 1 --rel-l2 0.08 --expect-inexact
expect "mxfp4 np=4 stochastic rounding" mpi 4 yes APSMPI_FORMAT=mxfp4 APSMPI_ROUNDING=stochastic -- \
    "$CHECK" --count 150000 --block 32 --tol "$("$FUZZ" --bound mxfp4 4 --stochastic)" --expect-inexact
expect "mxfp8 np=3 with APSMPI_ALGORITHM=ring" mpi 3 yes APSMPI_FORMAT=mxfp8 APSMPI_ALGORITHM=ring -- \
    "$CHECK" --count 150000 --block 32 --tol "$(APSMPI_ALGORITHM=ring "$FUZZ" --bound mxfp8 3)" --expect-inexact

# The codec's portable level forced (the unit tests check every level bit for bit)
expect "e4m3 np=2 with APSMPI_CODEC_ISA=scalar" mpi 2 yes APSMPI_FORMAT=e4m3 APSMPI_CODEC_ISA=scalar -- \
    "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 2)" --expect-inexact

# One exponent per call (APS as in the paper): layers of one magnitude; the bound holds.
for fmt in e4m3 e5m2; do
    expect "$fmt np=4 per-call APS" mpi 4 yes APSMPI_FORMAT=$fmt APSMPI_SCALING=aps -- \
        "$CHECK" --count 150000 --uniform --tol "$(bound e4m3 4)" --expect-inexact
done

# Scaling none: unit-sized values fit e5m2 as they are; 8-bit gradients of 1e-7 flush to 0
# without APS but not with it, which is what APS is for.
expect "e5m2 np=4 scaling none on values near 1" mpi 4 yes APSMPI_FORMAT=e5m2 APSMPI_SCALING=none -- \
    "$CHECK" --count 150000 --uniform --tol "$(bound e5m2 4)"
expect_fail "e4m3 np=2 scaling none loses small layers" "above the bound" \
    mpi 2 yes APSMPI_FORMAT=e4m3 APSMPI_SCALING=none -- "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 2)"

# A block size that does not divide the count, and stochastic rounding.
expect "e4m3 np=3 block 1000" mpi 3 yes APSMPI_BLOCK_SIZE=1000 -- \
    "$CHECK" --count 150001 --block 1000 --tol "$(bound e4m3 3)" --expect-inexact
expect "e4m3 np=4 stochastic rounding" mpi 4 yes APSMPI_ROUNDING=stochastic APSMPI_SEED=7 -- \
    "$CHECK" --count 150000 --block 4096 --tol "$(bound e4m3 4)" --expect-inexact
first=$(checksum)
expect "stochastic rounding repeats bit for bit" same_checksum "$first" \
    mpi 4 yes APSMPI_ROUNDING=stochastic APSMPI_SEED=7 -- "$CHECK" --count 150000 --block 4096 --tol 1
expect "another seed rounds differently" other_checksum "$first" \
    mpi 4 yes APSMPI_ROUNDING=stochastic APSMPI_SEED=8 -- "$CHECK" --count 150000 --block 4096 --tol 1
finish
