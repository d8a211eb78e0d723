# Sourced by scripts/browser.sh and scripts/java.sh: install Debian packages the test suite needs, saying what and
# why, and waiting for the apt/dpkg lock (another apt-get, unattended-upgrades) instead of failing at once.
#   apt_install WHY PACKAGE...
# EVALKIT_APT_LOCK_TIMEOUT: seconds to wait for the lock (default 300). Needs root and apt-get; without them it
# prints the command to run and returns 3.
apt_install() {
  local why=$1
  shift
  local timeout=${EVALKIT_APT_LOCK_TIMEOUT:-300}
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "$* missing: $why. Install it with 'sudo apt-get install -y $*' (Debian / Ubuntu), then run the command again." >&2
    return 3
  fi
  echo "Installing $* with apt-get: $why (waits up to ${timeout} s for another apt or dpkg process to finish)..."
  local started=$SECONDS
  if ! apt-get -o DPkg::Lock::Timeout="$timeout" update -qq \
    || ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$timeout" install -y -qq "$@" >/dev/null; then
    echo "apt-get could not install $* (see its message above; if another apt or dpkg process held the lock for" \
      "more than ${timeout} s, let it finish or set EVALKIT_APT_LOCK_TIMEOUT, then run the command again)." >&2
    return 3
  fi
  echo "Installed $* in $((SECONDS - started)) s."
}
