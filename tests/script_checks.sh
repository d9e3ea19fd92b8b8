# script_checks.sh: sourced by the script tests that start no MPI job: check WHAT COMMAND... (ok or FAILED, counted) and finish (the status).
failures=0
check() { # check WHAT COMMAND...: the command must succeed
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
    else
        echo "FAILED: $what"
        failures=$((failures + 1))
    fi
}
finish() {
    [ "$failures" -eq 0 ] || echo "$failures check(s) failed"
    exit $((failures > 0))
}
