#!/bin/bash
# make_gpusim_kit.sh: assembles the GPU simulator kit of make check-gpusim (docs/gpusim.md) in a new folder: GPGPU-Sim's source at its commit, and the kit's own files from tests/gpu/gpusim_kit/; checks it.
#   scripts/ci/make_gpusim_kit.sh DEST [SOURCE]
# SOURCE: a git clone of GPGPU-Sim that holds the commit, or an archive already made
# (gpgpu-sim-667834cf.tar.gz, from another kit); default: the commit fetched from GitHub
# (network needed). Then `make check-gpusim GPUSIM_DIR=DEST`.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
url=https://github.com/accel-sim/gpgpu-sim_distribution
commit=667834cfe5214523edd7769aeab77f91b7137686
archive=gpgpu-sim-667834cf.tar.gz
dest=${1:?usage: make_gpusim_kit.sh DEST [SOURCE]}
source=${2:-}
[ ! -e "$dest" ] || [ -z "$(ls -A "$dest")" ] || { echo "make_gpusim_kit: $dest is not empty"; exit 1; }
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# the simulator's source: the tar that git archive makes of the commit, under gpgpu-sim/
if [ -f "$source" ]; then
    cp "$source" "$dest/$archive"
else
    if [ -z "$source" ]; then
        source=$dest/.clone
        git init -q "$source"
        git -C "$source" fetch -q --depth 1 "$url" "$commit"
    fi
    git -C "$source" archive --format=tar --prefix=gpgpu-sim/ "$commit" | gzip -n -9 >"$dest/$archive"
    rm -rf "$dest/.clone"
fi
# the kit's own files: the patch, the build script, the self-tests, the PTX wrappers, notes
cp -R "$top/tests/gpu/gpusim_kit/." "$dest/"
chmod +x "$dest/build.sh" "$dest"/ptx13/*

if ! "$top/scripts/ci/check_gpusim_kit.sh" "$dest"; then
    echo "make_gpusim_kit: FAILED: $dest is not the kit docs/gpusim.md describes (above)"
    exit 1
fi
echo "make_gpusim_kit: ok: the kit in $dest (make check-gpusim GPUSIM_DIR=$dest)"
