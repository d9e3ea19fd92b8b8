#!/bin/bash
# formats.sh: every format, 1 to 4 ranks, each scaling mode: the preloaded sum stays within the stated bound.
. "$top_builddir/tests/mpi/env.sh"

# bound E M NRANKS [fn]: the error bound relative to N * B (B: the block's largest input)
# for a format with E exponent and M mantissa bits. The N inputs, each at most B, are
# rounded once (2^-(M+1) B each at most); the N-1 partial sums, the k-th at most k B, once
# each (2^-(M+1) k B); and every one of those 2N-1 roundings may instead flush to the
# subnormal grid, half a step of which is at most 2^(emin-M-emax+ceil(log2 N)) B once
# scaled by APS.
bound() {
    awk -v e="$1" -v m="$2" -v n="$3" -v fn="${4:-}" 'BEGIN {
        bias = 2^(e-1) - 1; emin = 1 - bias; emax = (fn == "fn") ? 8 : 2^e - 2 - bias
        h = 0; while (2^h < n) h++
        printf "%.6g", (2^-(m+1) * (n + n*(n+1)/2 - 1) + (2*n - 1) * 2^(emin - m - emax + h)) / n }'
}

for spec in "fp16 5 10" "bf16 8 7" "e5m2 5 2" "e4m3 4 3 fn" "e4m3ieee 4 3" "e3m2 3 2" "e3m3 3 3" "e5m6 5 6"; do
    set -- $spec
    fmt=$1 e=$2 m=$3 kind=${4:-}
    for np in 1 2 3 4; do
        tol=$(bound "$e" "$m" "$np" "$kind")
        expect "$fmt np=$np per-block APS within $tol" \
            mpi "$np" yes APSMPI_FORMAT="$fmt" -- "$CHECK" --count 150000 --block 4096 --tol "$tol" --expect-inexact
    done
done

# The codec's portable level forced (the unit tests check every level bit for bit)
expect "e4m3 np=2 with APSMPI_CODEC_ISA=scalar" mpi 2 yes APSMPI_FORMAT=e4m3 APSMPI_CODEC_ISA=scalar -- \
    "$CHECK" --count 150000 --block 4096 --tol "$(bound 4 3 2 fn)" --expect-inexact

# One exponent per call (APS as in the paper): layers of one magnitude; the bound holds.
for fmt in e4m3 e5m2; do
    expect "$fmt np=4 per-call APS" mpi 4 yes APSMPI_FORMAT=$fmt APSMPI_SCALING=aps -- \
        "$CHECK" --count 150000 --uniform --tol "$(bound 4 3 4 fn)" --expect-inexact
done

# Scaling none: unit-sized values fit e5m2 as they are; 8-bit gradients of 1e-7 flush to 0
# without APS but not with it, which is what APS is for.
expect "e5m2 np=4 scaling none on values near 1" mpi 4 yes APSMPI_FORMAT=e5m2 APSMPI_SCALING=none -- \
    "$CHECK" --count 150000 --uniform --tol "$(bound 5 2 4)"
expect_fail "e4m3 np=2 scaling none loses small layers" "above the bound" \
    mpi 2 yes APSMPI_FORMAT=e4m3 APSMPI_SCALING=none -- "$CHECK" --count 150000 --block 4096 --tol "$(bound 4 3 2 fn)"

# A block size that does not divide the count, and stochastic rounding.
expect "e4m3 np=3 block 1000" mpi 3 yes APSMPI_BLOCK_SIZE=1000 -- \
    "$CHECK" --count 150001 --block 1000 --tol "$(bound 4 3 3 fn)" --expect-inexact
expect "e4m3 np=4 stochastic rounding" mpi 4 yes APSMPI_ROUNDING=stochastic APSMPI_SEED=7 -- \
    "$CHECK" --count 150000 --block 4096 --tol "$(bound 4 3 4 fn)" --expect-inexact
first=$(checksum)
expect "stochastic rounding repeats bit for bit" same_checksum "$first" \
    mpi 4 yes APSMPI_ROUNDING=stochastic APSMPI_SEED=7 -- "$CHECK" --count 150000 --block 4096 --tol 1
expect "another seed rounds differently" other_checksum "$first" \
    mpi 4 yes APSMPI_ROUNDING=stochastic APSMPI_SEED=8 -- "$CHECK" --count 150000 --block 4096 --tol 1
finish
