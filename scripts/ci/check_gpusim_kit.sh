#!/bin/bash
# check_gpusim_kit.sh: a GPU simulator kit is the one docs/gpusim.md describes: its files have the checksums of tests/gpu/gpusim_kit.sha256, its source archive the checksum of its content.
#   scripts/ci/check_gpusim_kit.sh [--without-source] KIT
# The source archive, gpgpu-sim-667834cf.tar.gz, is checked by the tar it holds (the line
# gpgpu-sim-667834cf.tar): the tar that `git archive` makes of the simulator's commit, however
# it was compressed. --without-source: every file but the archive (the repository's own copy
# of the kit, tests/gpu/gpusim_kit/, has none). Prints each file that differs or is missing;
# exits 1 then, 0 when the kit is the one described.
set -euo pipefail
sums="$(cd "$(dirname "$0")/../.." && pwd)/tests/gpu/gpusim_kit.sha256"
with_source=1
if [ "${1:-}" = "--without-source" ]; then
    with_source=0
    shift
fi
kit=${1:?usage: check_gpusim_kit.sh [--without-source] KIT}
status=0

files=$(grep -v '\.tar$' "$sums")
(cd "$kit" && sha256sum --quiet -c <(echo "$files")) 2>&1 || status=1
if [ "$with_source" = 1 ]; then
    read -r want name < <(grep '\.tar$' "$sums")
    if [ ! -f "$kit/$name.gz" ]; then
        echo "$name.gz: missing"
        status=1
    elif ! got=$(gzip -dc "$kit/$name.gz" | sha256sum | cut -d' ' -f1) || [ "$got" != "$want" ]; then
        echo "$name.gz: the tar it holds has sha256 $got, not $want (docs/gpusim.md: how to make it)"
        status=1
    fi
fi
exit "$status"
