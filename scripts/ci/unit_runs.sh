#!/bin/bash
# unit_runs.sh: runs unit tests built for another target (sourced by check_aarch64.sh and check_avx512_emulated.sh): PASS or FAIL per test with its seconds, the levels they skipped, the count.

# run_unit_tests PROG LABEL BUILD RUNNER CHECK TEST...: runs each TEST in BUILD (its output in
# BUILD/TEST.log), prefixed by RUNNER (empty, or an emulator such as qemu-aarch64); after a test
# passes, CHECK TEST (a function, or true) must succeed too, or it says why and the test fails.
# Returns 0 when every test passed.
run_unit_tests() {
    local prog=$1 label=$2 build=$3 runner=$4 check=$5
    shift 5
    local failed=0 t start
    for t in "$@"; do
        start=$SECONDS
        # shellcheck disable=SC2086 # RUNNER is empty or one word
        if (cd "$build" && timeout 1800 $runner "./$t" >"$t.log" 2>&1); then
            if "$check" "$t"; then
                echo "PASS: $label $t ($((SECONDS - start)) s)"
            else
                failed=$((failed + 1))
            fi
        else
            echo "FAIL: $label $t ($((SECONDS - start)) s)"
            tail -30 "$build/$t.log"
            failed=$((failed + 1))
        fi
    done
    grep -h "SKIPPED \] level" "$build"/*.log | sed "s/^/$prog: /" || true
    echo "$prog: $(($# - failed)) passed, $failed failed"
    [ "$failed" = 0 ]
}
