#!/bin/bash
# overflow.sh: sums that overflow FP32, or come near its largest value, give what plain MPI gives: its inf in the elements where its sum overflows, the sum within the bound in every other (issue 18, defect 2).
. "$top_builddir/tests/mpi/env.sh"

# reduce_check --overflow (the data): on every rank x[i] = 1e37 or 2e37, x[100] = 3e38
# and x[200] = -3e38 (the sums overflow: +inf, -inf), x[5000] = 1.7e38 (3.4e38 on 2 ranks,
# finite but above what 1.7e38 rounded up in 8 bits sums to; +inf on 3), x[9000] = 3.3e38
# on rank 0 and -3.3e38 on rank 1 (cancelling). The check: the same signed inf where the exact
# sum overflows FP32; elsewhere within the format's bound (no inf, no NaN: a whole block
# came back NaN or inf before).
bound() { APSMPI_ALGORITHM=$1 "$FUZZ" --bound "$2" "$3"; }
args=(--overflow --count 70000 --block 4096 --identical)

for fmt in fp16 bf16 e5m2 e4m3 e3m2; do
    for algorithm in rsag ring; do
        for scaling in block aps; do
            block=4096
            [ $scaling = aps ] && block=0
            expect "$fmt, $algorithm, scaling $scaling, np=2: inf where plain MPI's sum overflows, the sums elsewhere" \
                mpi 2 yes APSMPI_FORMAT=$fmt APSMPI_ALGORITHM=$algorithm APSMPI_SCALING=$scaling -- \
                "$CHECK" "${args[@]}" --block $block --tol "$(bound $algorithm $fmt 2)"
        done
    done
    expect "$fmt, np=3 (1.7e38 three times overflows too)" mpi 3 yes APSMPI_FORMAT=$fmt -- \
        "$CHECK" "${args[@]}" --tol "$(bound rsag $fmt 3)"
done

tol=$(bound rsag e4m3 3)
expect "reduce_scatter, np=3" mpi 3 yes -- "$CHECK" --op reduce_scatter --overflow --count 70000 --block 4096 --tol "$tol"
expect "reduce_scatter_block in place, np=2" mpi 2 yes -- \
    "$CHECK" --op reduce_scatter_block --in-place --overflow --count 70000 --block 4096 --tol "$tol"
expect "pipelined in pieces, np=3" mpi 3 yes APSMPI_CHUNK_SIZE=4096 -- "$CHECK" "${args[@]}" --tol "$tol"
expect "2 nodes of 2 ranks (fp32 within, the node sums across)" \
    mpi 4 yes APSMPI_TEST_NODE_OF_RANK=0,0,1,1 APSMPI_INTRANODE=pass -- "$CHECK" "${args[@]}" --tol "$tol"
# Such a call goes in FP32 (whether plain MPI's sum overflows depends on digits that rounded
# contributions no longer hold): plain MPI's bits, and the statistics say why.
expect "plain MPI" with_checksum mpi 2 no -- "$CHECK" "${args[@]}" --tol 0
plain=$(checksum)
expect "e4m3: plain MPI's bits" same_checksum "$plain" mpi 2 yes APSMPI_STATS=1 -- "$CHECK" "${args[@]}" --tol 0
expect "... the statistics say why" grep -q 'for sums that may pass FLT_MAX 2;' "$TMPOUT/err"
# Where the limit lies on 2 ranks: values up to 2^126 (8.5e37) are compressed, since no sum of
# two can pass 2^127; a binade more goes in FP32.
expect "values up to 8.5e37 on 2 ranks: compressed" mpi 2 yes APSMPI_STATS=1 -- \
    "$CHECK" --uniform --scale 8.5e37 --count 70000 --block 4096 --tol "$(bound rsag e4m3 2)" --expect-inexact
expect "... (counted so)" grep -q 'calls compressed 2,' "$TMPOUT/err"
expect "values up to 1.2e38: in FP32 (within FP32 rounding)" mpi 2 yes APSMPI_STATS=1 -- \
    "$CHECK" --uniform --scale 1.2e38 --count 70000 --block 4096 --tol 1e-6
expect "... (counted so)" grep -q 'for sums that may pass FLT_MAX 2;' "$TMPOUT/err"
finish
