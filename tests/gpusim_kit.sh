#!/bin/bash
# gpusim_kit.sh: the repository's copy of the GPU simulator kit's own files (tests/gpu/gpusim_kit/: patch, build script, self-tests, PTX wrappers, notes) is the kit of tests/gpu/gpusim_kit.sha256, from which scripts/ci/make_gpusim_kit.sh assembles a kit (docs/gpusim.md); make check-gpusim's script stops with status 77 without a kit and 1 with another.
srcdir="$(cd "$(dirname "$0")/.." && pwd)"
if ! "$srcdir/scripts/ci/check_gpusim_kit.sh" --without-source "$srcdir/tests/gpu/gpusim_kit"; then
    echo "FAILED: tests/gpu/gpusim_kit/ differs from tests/gpu/gpusim_kit.sha256 (above): a changed kit file needs its new checksum, and docs/gpusim.md the change"
    exit 1
fi
# and no file there that the checksums leave out
listed=$(awk '!/\.tar$/ {print $2}' "$srcdir/tests/gpu/gpusim_kit.sha256" | LC_ALL=C sort)
present=$(cd "$srcdir/tests/gpu/gpusim_kit" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
if [ "$listed" != "$present" ]; then
    echo "FAILED: tests/gpu/gpusim_kit/ holds other files than tests/gpu/gpusim_kit.sha256 lists:"
    diff <(echo "$listed") <(echo "$present")
    exit 1
fi
echo "ok: tests/gpu/gpusim_kit/ is the kit's own files, as tests/gpu/gpusim_kit.sha256 lists them"

# make check-gpusim's script without a kit: status 77 ("not available here"), which fails make
# and .ci/run; with a kit that is not the one described (here the copy without its source
# archive): status 1, before anything is built
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# stops WHAT STATUS PATTERN KIT: check_gpusim.sh with GPUSIM_DIR=KIT exits STATUS, printing PATTERN.
stops() {
    local what=$1 want=$2 pattern=$3 rc=0
    GPUSIM_DIR=$4 "$srcdir/scripts/ci/check_gpusim.sh" "$srcdir" "$tmp/build" >"$tmp/out" 2>&1 || rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -q "$pattern" "$tmp/out"; then
        echo "FAILED: check_gpusim.sh $what exited $rc, not $want with '$pattern':"
        cat "$tmp/out"
        exit 1
    fi
    echo "ok: check_gpusim.sh $what exits $want: $pattern"
}
stops "without a kit" 77 'check-gpusim: not available here (exit 77): no GPU simulator kit' "$tmp/no-kit"
cp -r "$srcdir/tests/gpu/gpusim_kit" "$tmp/kit"
chmod -R u+w "$tmp/kit"
chmod +x "$tmp/kit/build.sh"
stops "with a kit lacking its source archive" 1 'gpgpu-sim-667834cf.tar.gz: missing' "$tmp/kit"
