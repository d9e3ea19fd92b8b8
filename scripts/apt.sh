# apt.sh: apt_install PACKAGE...: installs Debian packages, waiting (up to 15 minutes) for the
# apt and dpkg locks that another process (unattended-upgrades, a second job) may hold.
# Sourced by scripts/setup.sh and scripts/main.sh.

APT_LOCK_WAIT_S=${APT_LOCK_WAIT_S:-900}

# apt_locked_run COMMAND...: runs an apt command; while it fails because a lock is held,
# waits and tries again until APT_LOCK_WAIT_S seconds have passed.
apt_locked_run() {
    local waited=0 log
    log=$(mktemp)
    while :; do
        if "$@" >"$log" 2>&1; then
            rm -f "$log"
            return 0
        fi
        if ! grep -qi 'could not get lock\|unable to acquire\|is another process using it' "$log" ||
            [ "$waited" -ge "$APT_LOCK_WAIT_S" ]; then
            cat "$log" >&2
            rm -f "$log"
            return 1
        fi
        [ "$waited" -eq 0 ] && echo "apt: another process holds apt's lock; waiting up to ${APT_LOCK_WAIT_S} s" >&2
        sleep 5
        waited=$((waited + 5))
    done
}

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt_locked_run apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT_S" update -qq &&
        apt_locked_run apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT_S" install -y -qq --no-install-recommends "$@"
}
