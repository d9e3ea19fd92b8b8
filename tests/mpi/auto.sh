#!/bin/bash
# auto.sh: APSMPI_FORMAT=auto: Gaussian buckets go down to mxfp4 and stay; buckets whose 32-element blocks hold a few large values among many small ones widen at once until within the budget; an APS ladder with a tensor 2^20 smaller fused beside another; every rank goes on the same widths; every path of a call.
. "$top_builddir/tests/mpi/env.sh"
ACHECK="$top_builddir/tests/mpi/auto_check"

# run NP [NAME=VALUE ...] -- ARGS...: auto_check under auto with statistics, at a budget of 0.2
# unless one is given (the checks below were made for it; the default, 0.3, is checked last)
run() {
    local np=$1 budget=APSMPI_ERROR_BUDGET=0.2
    shift
    case " $* " in *" APSMPI_ERROR_BUDGET="*) budget=APSMPI_STATS=1 ;; esac
    mpi "$np" yes APSMPI_FORMAT=auto APSMPI_STATS=1 "$budget" "$@"
}
# stat PATTERN: the auto statistics line matches PATTERN (an extended regular expression)
stat() { grep 'apsmpi stats: auto' "$TMPOUT/err" | grep -Eq -- "$1"; }

# Gaussian, 12 calls of 3 ranks: the first on mxfp8 (a new bucket's width), whose histogram
# shows mxfp4 within the budget (a new bucket's first call is evidence enough): the other 11
# on mxfp4
expect "Gaussian np=3: 1 call on mxfp8, then mxfp4 to the end" run 3 -- "$ACHECK" --calls 12 --max-rel 0.3
expect "... the statistics: 3 and 33 calls, never over the budget, lowered once a rank" \
    stat 'mxfp4 calls 33, .*over budget 0, raised 0, lowered 0; mxfp5 calls 0, .*mxfp6 calls 0, .*mxfp8 calls 3, .*over budget 0, raised 0, lowered 3; fp32 calls 0.*same on every rank: yes'

# the same bucket's data turns to a few large values among many small ones in each block at
# call 6: that call on mxfp4 flushes ~94% on every rank, which raises the bucket at once to
# mxfp5 (the narrowest rung the histogram predicts within the budget: the sums' histogram saw
# no small values, which the contributions' mxfp4 had flushed); on mxfp5 the owners' sums of 3
# ranks (their largest values up to 6, a binade or two higher) flush past the budget, and the
# bucket goes on to mxfp6, where nothing is lost
expect "fixed mxfp4 on that data loses most of the sum's values (the data defeats it)" \
    mpi 3 yes APSMPI_FORMAT=mxfp4 -- "$ACHECK" --calls 8 --spread-from 6 --min-lost 0.5
expect "auto np=3: Gaussian, then spread from call 6: the last call loses at most the budget" \
    run 3 -- "$ACHECK" --calls 12 --spread-from 6 --max-lost 0.2 --max-rel 0.3
expect "... one call over the budget on mxfp4 per rank, raised at once, one on mxfp5, then mxfp6" \
    stat 'mxfp4 calls 18, .*over budget 3, raised 3, lowered 0; mxfp5 calls 3, .*over budget 3, raised 3, lowered 0; mxfp6 calls 12, .*over budget 0, raised 0, lowered 0; mxfp8 calls 3, .*fp32 calls 0.*same on every rank: yes'

# only rank 0's data is spread: its proposal wins the MAX, every rank goes wider with it (to
# mxfp5: the sums of one spread rank and three Gaussian ones keep mxfp5 within the budget)
expect "spread on rank 0 only, np=4: every rank on the same widths, nothing lost" \
    run 4 -- "$ACHECK" --calls 12 --spread-from 6 --spread-rank 0 --max-lost 0.2 --max-rel 0.3
expect "... the statistics: mxfp5 reached by all, raised by rank 0 alone" \
    stat 'mxfp4 calls 24, .*over budget 1, raised 1, lowered 0; mxfp5 calls 20, .*over budget 0, raised 0, lowered 0; mxfp6 calls 0, .*mxfp8 calls 4, .*same on every rank: yes'
# widths RANK: the widths of the rank's calls in order (APSMPI_LOG_LEVEL=debug)
widths() { sed -n "s/^apsmpi\[$1\] DEBUG: auto: a [0-9]*-element call on \([a-z0-9]*\),.*/\1/p" "$TMPOUT/err" | tr '\n' ' '; }
want="mxfp8 mxfp4 mxfp4 mxfp4 mxfp4 mxfp4 mxfp4 mxfp5 mxfp5 mxfp5 mxfp5 mxfp5 "
same_widths() { for r in 0 1 2 3; do [ "$(widths $r)" = "$want" ] || return 1; done; }
expect "... call by call, every rank on the same widths: 1 mxfp8, 6 mxfp4, 5 mxfp5" \
    eval 'run 4 APSMPI_LOG_LEVEL=debug -- "$ACHECK" --calls 12 --spread-from 6 --spread-rank 0 && same_widths'
# a call agreed on a narrower rung than the one planned first is planned again with rsag's own
# input (its window) kept: the lines of the last run all say window 3, none another window
replans() { grep -c "DEBUG: auto: planned again for mxfp[456]: rsag, window $1\$" "$TMPOUT/err"; }
expect "... a call planned again for its rung keeps rsag's window (APSMPI_RSAG_WINDOW=3)" \
    eval 'run 4 APSMPI_LOG_LEVEL=debug APSMPI_RSAG_WINDOW=3 -- "$ACHECK" --calls 12 --spread-from 6 --spread-rank 0 &&
          [ "$(replans 3)" -ge 8 ] && ! grep "DEBUG: auto: planned again" "$TMPOUT/err" | grep -qv "window 3\$"'

# every path: in place, pipelined, the non-blocking and persistent forms, reduce-scatter, the
# node path (each part its own bucket), error feedback on (its residual carried across widths:
# it is what the last encoding did not send, whatever the width), stochastic rounding
# (the persistent form where the MPI has it: MPI 4)
persistent=("persistent" "persistent --in-place")
mpi 2 no -- "$ACHECK" --op persistent --calls 1 || {
    echo "skipped: the persistent form (this MPI has no MPI_Allreduce_init)"
    persistent=()
}
for args in "allreduce --in-place" "allreduce APSMPI_CHUNK_SIZE=16k" "iallreduce" "${persistent[@]}" \
    "reduce_scatter" "allreduce APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass" \
    "allreduce APSMPI_ERROR_FEEDBACK=1" "iallreduce APSMPI_ROUNDING=stochastic"; do
    # shellcheck disable=SC2086 # (the words of args, split on purpose)
    set -- $args
    op=$1
    shift
    envs=() opts=()
    for a in "$@"; do case $a in APSMPI_*) envs+=("$a") ;; *) opts+=("$a") ;; esac; done
    # the budget bounds each encoding: a contribution and then its sum each within it lose at
    # most 1 - 0.8^2 = 0.36 of the values; to nearest the sum keeps what the contributions kept
    # (0.2 holds), stochastically each encoding flushes small values of its own, and with error
    # feedback the residuals added to the inputs and sums move values across the flush depth
    # (on mxfp5 the share climbs from 7% to the budget over the last calls)
    lost=0.2
    case $args in *stochastic* | *FEEDBACK*) lost=0.36 ;; esac
    expect "$args np=4: widened within the budget" \
        run 4 "${envs[@]}" -- "$ACHECK" --op "$op" --calls 12 --spread-from 6 --max-lost $lost --max-rel 0.3 "${opts[@]}"
    expect "... raised on mxfp4, same widths on every rank" stat 'mxfp4 calls [1-9][0-9]*, .*raised [1-9].*same on every rank: yes'
done

# an APS ladder (APSMPI_AUTO_LADDER=e2m1,e3m2,e4m3: APS blocks of 4096): Gaussian goes down to
# e3m2 (e2m1 flushes about 38% of a Gaussian block's values) and stays there when a second
# tensor, 2^20 smaller, is fused beside the first from call 6 (it has blocks of its own, but the
# one they share: about 1.4% of the values lost); fixed e2m1 loses half of the sum's values
APS=APSMPI_AUTO_LADDER=e2m1,e3m2,e4m3
expect "fixed e2m1 (APS blocks) on two tensors 2^20 apart loses half of the values" \
    mpi 3 yes APSMPI_FORMAT=e2m1 -- "$ACHECK" --calls 8 --tensors-from 6 --min-lost 0.4
expect "APS ladder np=3: Gaussian, then two tensors 2^20 apart: within the budget on e3m2" \
    run 3 $APS -- "$ACHECK" --calls 12 --tensors-from 6 --max-lost 0.05 --max-rel 0.2
expect "... 1 call on e4m3, then e3m2, never e2m1, never over the budget" \
    stat '^.*e2m1 calls 0, .*e3m2 calls 33, .*over budget 0, raised 0, lowered 0; e4m3 calls 3, .*lowered 3; fp32 calls 0,.*same on every rank: yes'
# with one exponent per call (APSMPI_SCALING=aps) the small tensor shares the large one's scale:
# it flushes on every rung, and the bucket goes on in FP32, losing nothing
expect "APS ladder, one exponent per call: the small tensor sends the bucket to FP32" \
    run 3 $APS APSMPI_SCALING=aps -- "$ACHECK" --calls 12 --tensors-from 6 --max-lost 0 --max-rel 1e-6
expect "... one call over the budget on e3m2 per rank, raised past e4m3 to fp32" \
    stat 'e3m2 calls 18, .*over budget 3, raised 3, lowered 0; e4m3 calls 3, .*lowered 3; fp32 calls 15,.*same on every rank: yes'
# the APS ladder on the other paths: pieces that start inside a block, reduce-scatter (a rank's
# segment holds the shared block: up to 7% of its values), a request, the node path, error feedback
for args in "allreduce APSMPI_CHUNK_SIZE=3000" "reduce_scatter" "iallreduce" \
    "allreduce APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass" "allreduce APSMPI_ERROR_FEEDBACK=1"; do
    # shellcheck disable=SC2086 # (the words of args, split on purpose)
    set -- $args
    op=$1
    shift
    expect "APS ladder, $args np=4: e3m2 within the budget" \
        run 4 $APS "$@" -- "$ACHECK" --op "$op" --calls 12 --tensors-from 6 --max-lost 0.2 --max-rel 0.2
    expect "... lowered to e3m2, never e2m1" stat 'e2m1 calls 0, .*e3m2 calls [1-9][0-9]*, .*same on every rank: yes'
done

# the budget: 0.9 keeps the spread data on mxfp4 (it flushes ~94%: over even that); 0.99 keeps it
expect "APSMPI_ERROR_BUDGET=0.99: the spread data stays on mxfp4 and loses its small values" \
    run 3 APSMPI_ERROR_BUDGET=0.99 -- "$ACHECK" --calls 12 --spread-from 6 --min-lost 0.5
expect "... never over the budget" stat 'mxfp4 calls 33, .*over budget 0, raised 0'

# a bucket's state goes with its communicator: each call on a new duplicate (freed after it,
# so that MPI may hand its handle to the next one) starts on mxfp8 and never goes lower
expect "every call on a new communicator: a new bucket each time, all on mxfp8" \
    run 3 -- "$ACHECK" --calls 8 --fresh-comm --max-rel 0.3
grep -q 'handle came back for the next one [1-9]' "$TMPOUT/out" ||
    echo "note: this MPI made each duplicate a new handle: the check above cannot tell whether states are dropped"
# (each new bucket's proposal is lowered after its first call, and dropped with its communicator)
expect "... no call on mxfp4" stat 'mxfp4 calls 0, .*mxfp8 calls 24, .*lowered 24; fp32 calls 0'

# the default budget is 0.3: the spread data's mxfp4 (94% flushed) is over it, the bucket widens
expect "the default budget (0.3): spread data widens" \
    mpi 3 yes APSMPI_FORMAT=auto APSMPI_STATS=1 -- "$ACHECK" --calls 12 --spread-from 6 --max-lost 0.3
expect "... the statistics line says budget 0.3" stat 'budget 0.3 of non-zero values flushed.*mxfp4 calls [0-9]*, .*raised 3'

# settings auto refuses
expect_fail "auto with the ring: refused at MPI_Init" "APSMPI_FORMAT=auto goes with APSMPI_ALGORITHM=rsag" \
    run 2 APSMPI_ALGORITHM=ring -- "$ACHECK" --calls 1
expect_fail "APSMPI_ERROR_BUDGET=1.5: refused" "APSMPI_ERROR_BUDGET='1.5' is not valid" \
    run 2 APSMPI_ERROR_BUDGET=1.5 -- "$ACHECK" --calls 1
expect_fail "a ladder mixing MX and APS formats: refused" "APSMPI_AUTO_LADDER='mxfp4,e4m3' is not valid" \
    run 2 APSMPI_AUTO_LADDER=mxfp4,e4m3 -- "$ACHECK" --calls 1
expect_fail "auto without scaling: refused" "APSMPI_FORMAT=auto does not go with APSMPI_SCALING=none" \
    run 2 $APS APSMPI_SCALING=none -- "$ACHECK" --calls 1
finish
