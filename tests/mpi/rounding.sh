#!/bin/bash
# rounding.sh: the default algorithm rounds every value at most twice (the two-level schedule, over many ranks, three times): error bounds that do not grow with the rank count.
. "$top_builddir/tests/mpi/env.sh"

# bound FORMAT NRANKS [--stochastic]: the error bound of rsag, relative to N * B (B: the
# largest input of any rank in the element's block), written once: error_bound in
# tests/mpi/fuzz.c. Each value is rounded at most twice; only the fp32 sum's term grows with
# N, and it is below 1e-6 for N <= 8.
bound() { "$FUZZ" --bound "$@"; }
# The relative L2 error against the exact sum stays below u + t: two independent roundings
# of at most u each, with random signs, give about 0.6 u (measured), and t counts what a
# format as narrow as e2m1 flushes below its block's maximum; the old ring's N-1 roundings
# of the partial sums grow past it with N.
unit() {
    awk -v e="$1" -v m="$2" -v fn="${3:-}" 'BEGIN {
        bias = 2^(e-1) - 1; emin = 1 - bias; emax = (fn == "fn") ? 8 : 2^e - 2 - bias
        printf "%.6g", 2^-(m+1) + 2^(emin - m - emax) }'
}

for spec in "e4m3 4 3 fn" "e3m2 3 2" "fp16 5 10" "bf16 8 7" "e5m2 5 2" "e4m3ieee 4 3" "e3m3 3 3" "e5m6 5 6" "e2m1 2 1"; do
    set -- $spec
    fmt=$1 e=$2 m=$3 kind=${4:-}
    # one rank sends nothing and is not compressed (passthrough.sh checks it bit for bit)
    case $fmt in e4m3 | e3m2) nps="2 3 4 5 6 7 8" ;; *) nps="2 3 8" ;; esac
    for np in $nps; do
        tol=$(bound "$fmt" "$np")
        l2=$(unit "$e" "$m" "$kind")
        expect "$fmt np=$np: within $tol of N*B, relative L2 error below $l2, the same bits on every rank" \
            mpi "$np" yes APSMPI_FORMAT="$fmt" -- "$CHECK" --count 20000 --block 4096 --tol "$tol" \
            --rel-l2 "$l2" --expect-inexact --identical
    done
done

# The two-level schedule (from APSMPI_TWOLEVEL_FROM ranks; forced here) rounds each value three
# times: its bound r (3 + 3r + r^2) (error_bound), and the relative L2 error still below u + t
# (three independent roundings: about 0.7 u, measured in results/error_vs_n/twolevel.md).
for spec in "e4m3 4 3 fn" "e3m2 3 2" "e5m2 5 2"; do
    set -- $spec
    fmt=$1 e=$2 m=$3 kind=${4:-}
    for np in 4 6 9; do
        tol=$(APSMPI_TWOLEVEL_FROM=2 "$FUZZ" --bound "$fmt" "$np")
        l2=$(unit "$e" "$m" "$kind")
        expect "$fmt np=$np, two-level: within $tol of N*B, relative L2 error below $l2, the same bits on every rank" \
            mpi "$np" yes APSMPI_FORMAT="$fmt" APSMPI_TWOLEVEL_FROM=2 -- "$CHECK" --count 20000 --block 4096 \
            --tol "$tol" --rel-l2 "$l2" --expect-inexact --identical
    done
done

# The same bound through the pipelined path, both reduce-scatters, in place, per-call APS,
# stochastic rounding.
tol=$(bound e4m3 8)
expect "np=8, pipelined in pieces, in place" mpi 8 yes APSMPI_CHUNK_SIZE=20000 -- \
    "$CHECK" --in-place --count 300001 --block 4096 --tol "$tol" --expect-inexact --identical
expect "np=5, reduce_scatter uneven, pipelined" mpi 5 yes APSMPI_CHUNK_SIZE=20000 -- \
    "$CHECK" --op reduce_scatter --count 300003 --block 4096 --tol "$tol" --expect-inexact
expect "np=7, reduce_scatter_block in place" mpi 7 yes -- \
    "$CHECK" --op reduce_scatter_block --in-place --count 70000 --block 4096 --tol "$tol" --expect-inexact
expect "np=6, reduce_scatter with a zero count" mpi 6 yes -- \
    "$CHECK" --op reduce_scatter --zero-count --count 60000 --block 4096 --tol "$tol"
expect "np=6, per-call APS" mpi 6 yes APSMPI_SCALING=aps -- \
    "$CHECK" --uniform --count 60000 --tol "$tol" --expect-inexact --identical
expect "np=5, stochastic rounding" mpi 5 yes APSMPI_ROUNDING=stochastic -- \
    "$CHECK" --count 60000 --block 4096 --tol "$(bound e4m3 5 --stochastic)" --expect-inexact --identical

# A sum of ones in the 6-bit e3m2 (3 significant bits) is exact at every N the format can
# hold: no swamping, no flush. The ring's low-precision partial sums swamp from 9 ranks on.
for np in 1 2 3 4 5 6 7 8; do
    expect "e3m2 sum of ones exact at np=$np" mpi "$np" yes APSMPI_FORMAT=e3m2 -- "$CHECK" --ones --count 70000 --tol 0 --identical
done
expect "e3m2 sum of ones exact at np=12, pipelined" mpi 12 yes APSMPI_FORMAT=e3m2 APSMPI_CHUNK_SIZE=4096 -- \
    "$CHECK" --ones --count 70000 --tol 0 --identical
expect_fail "... where the old ring is not" "above the bound" \
    mpi 12 yes APSMPI_FORMAT=e3m2 APSMPI_CHUNK_SIZE=4096 APSMPI_ALGORITHM=ring -- "$CHECK" --ones --count 70000 --tol 0
finish
