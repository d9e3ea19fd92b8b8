#!/bin/bash
# gpusim_ptxas_cache.sh: tests/gpu/gpusim_ptxas_cache.sh (the ptxas report check-gpusim's simulated processes share) runs ptxas once per PTX text and options, and never keeps a failed report.
srcdir="$(cd "$(dirname "$0")/.." && pwd)"
cache_sh=$srcdir/tests/gpu/gpusim_ptxas_cache.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$srcdir/tests/script_checks.sh"

# a stand-in ptxas: its report names the PTX's first line and the options, and each run adds a
# line to $tmp/runs; a PTX whose first line is "bad" fails it, after a partial report
cat >"$tmp/ptxas" <<'SH'
#!/bin/bash
echo run >>"${0%/*}/runs"
for a in "$@"; do case $a in *.ptx) ptx=$a ;; esac; done
echo "ptxas info    : $(head -1 "$ptx") with ${*//$ptx/PTX}" >&2
[ "$(head -1 "$ptx")" != bad ] || { echo "ptxas fatal   : bad" >&2; exit 255; }
SH
chmod +x "$tmp/ptxas"
runs() { cat "$tmp/runs" 2>/dev/null | wc -l; }
# report FILE [OPTION]: the cached ptxas on FILE as GPGPU-Sim calls it; its report into $tmp/got
report() {
    "$cache_sh" "$tmp/cache" "$tmp/ptxas" ${2:---gpu-name=sm_70} -v "$1" --output-file /dev/null 2>"$tmp/got"
}

echo kernel_a >"$tmp/a.ptx"
cp "$tmp/a.ptx" "$tmp/copy_of_a.ptx"
echo kernel_b >"$tmp/b.ptx"
report "$tmp/a.ptx"
want=$(cat "$tmp/got")
check "the first call runs ptxas and passes its report on" test "$(runs)" -eq 1 -a -n "$want"
check "... whose report is ptxas's own" grep -q "kernel_a with --gpu-name=sm_70 -v PTX --output-file /dev/null" "$tmp/got"
report "$tmp/a.ptx"
check "the same PTX again: the saved report, ptxas not run" test "$(runs)" -eq 1 -a "$(cat "$tmp/got")" = "$want"
report "$tmp/copy_of_a.ptx"
check "the same PTX text under another name (another rank's folder): the saved report" test "$(runs)" -eq 1 -a "$(cat "$tmp/got")" = "$want"
report "$tmp/b.ptx"
check "another PTX text: ptxas runs again" test "$(runs)" -eq 2
check "... and gives its own report" grep -q kernel_b "$tmp/got"
report "$tmp/a.ptx" --gpu-name=sm_75
check "the same PTX with other options: ptxas runs again" test "$(runs)" -eq 3
check "... and gives their report" grep -q sm_75 "$tmp/got"

echo bad >"$tmp/bad.ptx"
rc=0
report "$tmp/bad.ptx" || rc=$?
check "a failing ptxas: its status passed on" test "$rc" -eq 255
check "... with its report" grep -q "ptxas fatal" "$tmp/got"
rc=0
report "$tmp/bad.ptx" || rc=$?
check "... and not kept: ptxas runs again and fails again" test "$rc" -eq 255 -a "$(runs)" -eq 5
check "no report of a failed run and no partial file left in the cache" test "$(ls "$tmp/cache" | wc -l)" -eq 3

rc=0
"$cache_sh" "$tmp/cache" "$tmp/ptxas" --version 2>"$tmp/got" || rc=$?
check "no PTX file among the arguments: ptxas run as it is" test "$(runs)" -eq 6
finish
