#!/bin/bash
# check_format.sh: fails when a tracked C, C++ or CUDA file differs from what clang-format (.clang-format) makes of it; --fix rewrites them.
#   scripts/ci/check_format.sh [--fix]
# CI runs it (.ci/run); scripts/setup.sh installs clang-format. One folder is left out:
# tests/gpu/gpusim_kit/, the GPU simulator kit's files byte for byte as the kit holds them
# (their checksums are tests/gpu/gpusim_kit.sha256; docs/gpusim.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v clang-format >/dev/null || { echo "check_format: FAILED: clang-format is not installed (scripts/setup.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cpp' '*.h.in' ':!:tests/gpu/gpusim_kit/')
if [ "${1:-}" = "--fix" ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
bad=()
for f in "${files[@]}"; do
    clang-format "$f" | cmp -s - "$f" || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
    echo "check_format: FAILED: ${#bad[@]} file(s) not as clang-format writes them (scripts/ci/check_format.sh --fix):"
    printf '  %s\n' "${bad[@]}"
    exit 1
fi
echo "check_format: ok (${#files[@]} files, $(clang-format --version | sed 's/.*version //'))"
