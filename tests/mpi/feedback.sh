#!/bin/bash
# feedback.sh: error feedback (APSMPI_ERROR_FEEDBACK=1): with the same input at every call, the sum of T results stays within one call's error of T times the exact sum, for every T; without it the sum drifts.
. "$top_builddir/tests/mpi/env.sh"
FBCHECK="$top_builddir/tests/mpi/feedback_check"

# bound FORMAT NRANKS: one call's error bound relative to N times the block maximum
# (tests/mpi/fuzz.c's error_bound), plus the fp32 sums' own rounding over the 40 calls
bound() { awk -v b="$("$FUZZ" --bound "$1" "$2")" -v n="$2" 'BEGIN { printf "%.6g\n", b + 40 * n * 2^-23 }'; }
# drifts COMMAND...: the run ends with the sum of its results beyond the bound
drifts() { ! "$@" && grep -q 'above the bound' "$TMPOUT/out"; }
# feedback NP FORMAT [NAME=VALUE ...] -- ARGS...: feedback_check with error feedback on
feedback() {
    local np=$1 fmt=$2
    shift 2
    mpi "$np" yes APSMPI_FORMAT="$fmt" APSMPI_ERROR_FEEDBACK=1 APSMPI_STATS=1 "$@"
}

for fmt in mxfp4 mxfp6e2m3 mxfp8 e4m3; do
    block=32
    [ "${fmt#mx}" = "$fmt" ] && block=4096 # APS blocks
    tol=$(bound "$fmt" 3)
    expect "$fmt allreduce np=3, 40 calls: the sum of the results within one call's bound $tol" \
        feedback 3 "$fmt" -- "$FBCHECK" --count 100000 --calls 40 --block "$block" --tol "$tol"
    expect "... the statistics show the residuals held" \
        grep -q 'error feedback: .*residuals held 6, 1.53 MiB' "$TMPOUT/err"
    expect "$fmt without error feedback: the same error at every call, the sum drifts beyond it" \
        drifts mpi 3 yes APSMPI_FORMAT="$fmt" -- "$FBCHECK" --count 100000 --calls 40 --block "$block" --tol "$tol"
done

# every path of a call: pipelined pieces (each sum piece its own residual), in place, reduce-scatter
# (the contributions' residuals only: the owner's fp32 sum is the result), the node path (its
# parts keyed by the job's buffer), stochastic rounding (a residual up to a whole step)
expect "mxfp6 allreduce np=4, pipelined, in place" feedback 4 mxfp6 APSMPI_CHUNK_SIZE=16k -- \
    "$FBCHECK" --in-place --count 150001 --calls 40 --block 32 --tol "$(bound mxfp6 4)"
expect "mxfp4 reduce_scatter np=3 (segments of whole blocks: the bound's B is on a grid of 32)" feedback 3 mxfp4 -- \
    "$FBCHECK" --op reduce_scatter --count 150048 --calls 40 --block 32 --tol "$(bound mxfp4 3)"
expect "mxfp4 reduce_scatter np=3 without error feedback drifts" drifts mpi 3 yes APSMPI_FORMAT=mxfp4 -- \
    "$FBCHECK" --op reduce_scatter --count 150048 --calls 40 --block 32 --tol "$(bound mxfp4 3)"
expect "mxfp4 on 2 nodes of 2 ranks (the node path)" \
    feedback 4 mxfp4 APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass -- \
    "$FBCHECK" --count 150000 --calls 40 --block 32 --tol "$(bound mxfp4 4)"
expect "mxfp4 np=3, stochastic rounding" feedback 3 mxfp4 APSMPI_ROUNDING=stochastic -- \
    "$FBCHECK" --count 100000 --calls 40 --block 32 --tol "$("$FUZZ" --bound mxfp4 3 --stochastic)"

# the bound: a residual that does not fit is refused, and the call goes without (so the sum drifts)
expect "APSMPI_FEEDBACK_MAX_BYTES=64k: residuals of 400 KB refused, the sum drifts" \
    drifts feedback 3 mxfp4 APSMPI_FEEDBACK_MAX_BYTES=64k -- \
    "$FBCHECK" --count 100000 --calls 40 --block 32 --tol "$(bound mxfp4 3)"
# (40 calls of 3 ranks: 120 contributions of 400 KB and 120 owned sums of 133 KB)
expect "... the statistics count them refused" grep -q 'error feedback: .*residuals held 0,.* refused 240' "$TMPOUT/err"
finish
