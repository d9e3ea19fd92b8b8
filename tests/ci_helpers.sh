#!/bin/bash
# ci_helpers.sh: the CI scripts' shared helpers: .ci/run's step timing: each step's wall time and load, a failing step fails the run, the total.
# Run by make check. Takes the functions between .ci/run's "step timing" markers and runs
# them in a small script of their own, as .ci/run does (set -euo pipefail).
srcdir=$(cd "$(dirname "$0")/.." && pwd)
RUN=$srcdir/.ci/run
[ -f "$RUN" ] || { echo "SKIP: no .ci/run here"; exit 77; }
fns=$(sed -n '/^# --- step timing/,/^# --- end of step timing/p' "$RUN")
echo "$fns" | grep -q '^step()' || { echo "FAILED: .ci/run has no step function between its step timing markers"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }

# a run of two steps that pass and one that fails, then one that must not run
{
    echo 'set -euo pipefail'
    echo "$fns"
    echo 'trap ci_total EXIT'
    echo 'step first true'
    echo 'step second sh -c "exit 0"'
    echo 'step third sh -c "exit 3"'
    echo 'step fourth touch "$1/fourth_ran"'
} >"$work/run.sh"
out=$(bash "$work/run.sh" "$work" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 3 ] || bad "the run exited $rc after a step failed with 3; want 3"
[ ! -e "$work/fourth_ran" ] || bad "a step ran after a failing one"
for name in first second; do
    echo "$out" | grep -qE "^ci: $name: [0-9]+ s, load [0-9.]+ -> [0-9.]+, status 0$" ||
        bad "no time and load line for the step $name"
done
echo "$out" | grep -qE '^ci: third: [0-9]+ s, load [0-9.]+ -> [0-9.]+, status 3$' || bad "no line for the failing step"
echo "$out" | grep -qE '^ci: total: [0-9]+ s, load now [0-9.]+, status 3$' || bad "no total line with the run's status"

# a run whose steps all pass exits 0 with its total
printf '%s\n' 'set -euo pipefail' "$fns" 'trap ci_total EXIT' 'step only sleep 1' >"$work/ok.sh"
out=$(bash "$work/ok.sh" 2>&1) || bad "a run whose steps passed exited $?"
echo "$out" | grep -qE '^ci: only: [12] s, load' || bad "a step of one second was not timed as 1 s: $out"
echo "$out" | grep -qE '^ci: total: [0-9]+ s, load now [0-9.]+, status 0$' || bad "no total line for a passing run"

[ $fail = 0 ] || exit 1
echo "ok: .ci/run's steps print their time and load, a failing step fails the run, the run its total"
