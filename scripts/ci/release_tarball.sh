# release_tarball.sh: sourced by the scripts that check the release tarball (check_minimal_build.sh, check_gpusim_tarball.sh): finds or makes it and unpacks it.
# unpack_release [TARBALL]: TARBALL, or make dist's apsmpi-*.tar.gz in the current folder (the
# source tree's root), made if missing, unpacked into a new temporary folder; sets tarball
# (its absolute path), work (the folder, removed on exit) and src (the unpacked tree).
unpack_release() {
    tarball=${1:-}
    if [ -z "$tarball" ]; then
        tarball=$(ls apsmpi-*.tar.gz 2>/dev/null | head -1 || true)
        if [ -z "$tarball" ]; then
            make -s dist >/dev/null
            tarball=$(ls apsmpi-*.tar.gz | head -1)
        fi
    fi
    tarball=$(realpath "$tarball")
    work=$(mktemp -d)
    # (write permission back first: a check may make the tree read-only)
    trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
    tar -xzf "$tarball" -C "$work"
    src=$(echo "$work"/apsmpi-*)
}
