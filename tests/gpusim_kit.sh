#!/bin/bash
# gpusim_kit.sh: the repository's copy of the GPU simulator kit's own files (tests/gpu/gpusim_kit/: patch, build script, self-tests, PTX wrappers, notes) is the kit of tests/gpu/gpusim_kit.sha256, from which scripts/make_gpusim_kit.sh assembles a kit (docs/gpusim.md).
srcdir="$(cd "$(dirname "$0")/.." && pwd)"
if ! "$srcdir/scripts/check_gpusim_kit.sh" --without-source "$srcdir/tests/gpu/gpusim_kit"; then
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
