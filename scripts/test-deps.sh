#!/usr/bin/env bash
# The system tools the test suite needs, installed from Debian's packages when missing:
# iproute2 and nftables (the Jepsen-style pass partitions nodes in network namespaces),
# chromium (the status page test drives it headless), docker.io (dockerd, for the
# container suite), docker-compose (validates docker-compose.yml and runs it in the
# container suite), debootstrap (the container suite's base image where no registry
# answers). `npm test` and .ci/run both run this first, so the two cannot drift.
#
# As root with apt-get, it installs what is missing. Otherwise it prints one line naming
# what to install and exits 0: the tests that need a missing tool skip, each saying so.
set -uo pipefail
need=()
command -v ip >/dev/null || need+=(iproute2)
command -v nft >/dev/null || need+=(nftables)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v dockerd >/dev/null || need+=(docker.io)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v debootstrap >/dev/null || need+=(debootstrap)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test-deps: installing ${need[*]} for the test suite (Debian packages)"
  log=$(mktemp)
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >"$log" 2>&1; then
    rm -f "$log"
    exit 0
  fi
  echo "test-deps: apt-get failed; its output ends:" >&2
  tail -5 "$log" >&2
  rm -f "$log"
  [ -n "${CI:-}" ] && exit 1 # CI must run every test
fi
echo "test-deps: missing ${need[*]} (as root: apt-get install ${need[*]}); the tests that need them skip"
exit 0
