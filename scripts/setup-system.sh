#!/usr/bin/env bash
# System packages the test suite needs, installed from Debian's repositories when missing.
#
# `npm test` runs this first. CI runs `npm ci && npm test` as root, with no stdin, on a
# fresh machine that reaches Debian's package repositories: there it runs `apt-get update`
# once and installs what is missing. When everything is present it does nothing (a few
# stat calls). Not root, or no apt-get, and something missing: it says what to install and
# exits non-zero, so the tests that need it fail loudly instead of being skipped.
#
# Each entry is "debian-package:path-the-tests-use": chromium for the browser tests, nmap
# (the client tools' required dependency), tmux for terminal tests, curl to run the commands
# `api_debug.sh --show-curl` prints, systemd for `systemd-analyze verify` of svcd's unit. Browsers come from Debian only
# (never `npx playwright install`): the browser tests drive /usr/bin/chromium.
#
# The scanner's test network (test-support/netlab, docs/scanner/test-network.md) runs
# real daemons from Debian inside its own network namespaces: iproute2 for `ip netns`, openssl
# for certificates and the weak TLS host, and the services below. The tests start each daemon
# in the foreground with a config in a temp dir; none may run from the package. While apt
# installs, a policy-rc.d that refuses every start (exit 101) keeps them from starting in the
# root namespace; it is removed afterwards unless it was already there. bind9 serves the DNS
# host's zone; snmp, smbclient, bind9-dnsutils and masscan are the optional scan tools tested
# against it (docs/scanner/tools-enumeration.md).
set -euo pipefail

REQUIRED=(
  'chromium:/usr/bin/chromium'
  'nmap:/usr/bin/nmap'
  'tmux:/usr/bin/tmux'
  'curl:/usr/bin/curl'
  'iproute2:/usr/sbin/ip'
  'openssl:/usr/bin/openssl'
  'vsftpd:/usr/sbin/vsftpd'
  'redis-server:/usr/bin/redis-server'
  'memcached:/usr/bin/memcached'
  'postgresql:/usr/lib/postgresql/15/bin/initdb'
  'nginx:/usr/sbin/nginx'
  'openssh-server:/usr/sbin/sshd'
  'snmpd:/usr/sbin/snmpd'
  'inetutils-inetd:/usr/sbin/inetutils-inetd'
  'inetutils-telnetd:/usr/sbin/telnetd'
  'samba:/usr/sbin/smbd'
  'systemd:/usr/bin/systemd-analyze'
  # promtool evaluates the shipped alert rules over real scrapes (packages/portal/tests/alerts-fire.slow.test.ts).
  'prometheus:/usr/bin/promtool'
  'bind9:/usr/sbin/named'
  'snmp:/usr/bin/snmpwalk'
  'smbclient:/usr/bin/smbclient'
  'bind9-dnsutils:/usr/bin/dig'
  'masscan:/usr/bin/masscan'
  # The release build and its tests (scripts/release/, e2e/release.slow.test.ts).
  'debootstrap:/usr/sbin/debootstrap'
  'buildah:/usr/bin/buildah'
  'podman:/usr/bin/podman'
  'runc:/usr/sbin/runc'
  # Optional scan tools svc scan runs when installed (docs/scanner/tools.md).
  'testssl.sh:/usr/bin/testssl'
  'sslscan:/usr/bin/sslscan'
  'whatweb:/usr/bin/whatweb'
)

missing=()
for entry in "${REQUIRED[@]}"; do
  pkg="${entry%%:*}"
  bin="${entry#*:}"
  if [[ ! -x "$bin" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "setup-system: missing system packages: ${missing[*]}" >&2

if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  if [[ "$(id -u)" -ne 0 ]]; then why='not running as root'; else why='apt-get not found'; fi
  {
    echo "setup-system: cannot install them here ($why)."
    echo "setup-system: install the Debian package(s) yourself, then run the tests again:"
    echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
    if [[ " ${missing[*]} " == *' chromium '* ]]; then
      echo "setup-system: (the browser tests drive /usr/bin/chromium from Debian's 'chromium' package;"
      echo "setup-system:  never 'npx playwright install')"
    fi
  } >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
start=$SECONDS
# Wait for a dpkg lock held by another apt run instead of failing at once.
apt_opts=(-o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)

# A mirror hiccup should not fail a whole CI run: a failed step is tried again, twice.
retry() {
  local attempt
  for attempt in 1 2 3; do
    if "$@" </dev/null; then return 0; fi
    echo "setup-system: '$*' failed (attempt $attempt of 3)" >&2
    if [[ $attempt -lt 3 ]]; then sleep $((attempt * 5)); fi
  done
  return 1
}

echo "setup-system: apt-get update" >&2
retry apt-get "${apt_opts[@]}" update
# Daemons must not start from their packages: refuse every start while apt runs.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
echo "setup-system: apt-get install ${missing[*]}" >&2
retry apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}"

for entry in "${REQUIRED[@]}"; do
  bin="${entry#*:}"
  if [[ ! -x "$bin" ]]; then
    echo "setup-system: installed ${entry%%:*} but $bin is still missing" >&2
    exit 1
  fi
done
echo "setup-system: installed ${missing[*]} in $((SECONDS - start)) s" >&2
