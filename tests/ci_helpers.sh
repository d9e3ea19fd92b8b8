#!/bin/bash
# ci_helpers.sh: the CI scripts' shared helpers: .ci/run's step timing (each step's wall time and load, a failing step fails the run, the total) and scripts/ci/matrix_mpis.sh's option parsing and CSV start.
# Run by make check. Takes the functions between .ci/run's "step timing" markers and runs
# them in a small script of their own, as .ci/run does (set -euo pipefail); sources
# matrix_mpis.sh (which only defines things) in subshells.
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

# matrix_options: each option sets its variable, the last one given wins, values may hold
# spaces; an unknown word or an option without its value prints the usage and exits 2
MATRIX=$srcdir/scripts/ci/matrix_mpis.sh
parse() {
    bash -c '. "$1"; shift; a=A b="" c=C
        matrix_options "prog [--aa X] [--bb Y] [--cc Z]" --aa=a --bb=b --cc=c -- "$@"
        echo "a=$a b=$b c=$c"' _ "$MATRIX" "$@" 2>&1
}
got=$(parse --bb "x y" --aa 1 --aa 2) || bad "matrix_options failed on good options: $got"
[ "$got" = "a=2 b=x y c=C" ] || bad "matrix_options set '$got'; want 'a=2 b=x y c=C'"
got=$(parse) || bad "matrix_options failed without options: $got"
[ "$got" = "a=A b= c=C" ] || bad "matrix_options without options set '$got'"
for args in "--dd 1" "--aa" "--aa 1 extra"; do
    # shellcheck disable=SC2086 # the words are the arguments
    got=$(parse $args)
    rc=$?
    [ "$rc" = 2 ] && [ "$got" = "usage: prog [--aa X] [--bb Y] [--cc Z]" ] ||
        bad "matrix_options on '$args': status $rc, '$got'; want 2 and the usage"
done
# matrix_csv_start: an absolute folder, the CSV in it by default (or where --csv said), its header
got=$(cd "$work" && bash -c '. "$1"; dir=out/m csv=""; matrix_csv_start x.csv; echo "$dir $csv"; cat "$csv"' _ "$MATRIX")
[ "$got" = "$work/out/m $work/out/m/x.csv
suite,test,ranks,MPI,result,reason" ] || bad "matrix_csv_start: '$got'"
got=$(cd "$work" && bash -c '. "$1"; dir=d csv=$PWD/given.csv; matrix_csv_start x.csv; echo "$csv"' _ "$MATRIX")
[ "$got" = "$work/given.csv" ] && [ -s "$work/given.csv" ] || bad "matrix_csv_start did not keep the CSV given: '$got'"

[ $fail = 0 ] || exit 1
echo "ok: .ci/run's steps print their time and load, a failing step fails the run, the run its total; matrix_mpis.sh's options and CSV"
