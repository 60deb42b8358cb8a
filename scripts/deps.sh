#!/usr/bin/env bash
# Installs what the build and the tests need: Debian packages (Debian 12 or
# 13), then the project's Python (scripts/venv.sh: a venv with the pinned
# PyTorch 2.x). Idempotent and quiet when nothing is missing. Needs root (or
# sudo) only to install packages.
#
#   scripts/deps.sh [--test] [--help]    --test: what the whole test suite needs too
set -euo pipefail
test_deps=0
case "${1:-}" in
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --test) test_deps=1 ;;
  "") ;;
  *) echo "scripts/deps.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

# No versioned names: Boost is "the newest libboost1.N-dev, N >= 81" (1.81 on
# Debian 12, where libboost-dev is still 1.74; 1.83 on Debian 13), resolved
# below; everything else has one name on both.
packages=(
  cmake ninja-build g++ pkg-config gdb python3-dbg python3-venv
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtorch-dev libgloo-dev python3-torch python3-psutil python3-pytest python3-pytest-xdist
  psmisc lsof
)

# The whole test suite also renders a report in headless Chromium, and runs
# multi-node jobs on a Slurm cluster made of network namespaces
# (scripts/local-cluster.sh: iproute2 for them, util-linux for unshare/flock).
slurm_packages=(slurmctld slurmd slurm-client)
if [ "$test_deps" = 1 ]; then packages+=(chromium "${slurm_packages[@]}" iproute2 util-linux nftables); fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# An installed libboost1.N-dev with N >= 81, if any.
boost_installed() {
  dpkg-query -W -f='${Package} ${Status}\n' 'libboost1.*-dev' 2>/dev/null |
    awk '/install ok installed/ { split($1, v, /[.-]/); if (v[2] + 0 >= 81) found = 1 } END { exit !found }'
}

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
need_boost=0
boost_installed || need_boost=1

if [ ${#missing[@]} -gt 0 ] || [ "$need_boost" = 1 ]; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "aftermath: run as root to install ${missing[*]} (and Boost)" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  # The Slurm packages would start system services on install: munge (a
  # dependency; auth/none clusters do not use it) always, slurmd and slurmctld
  # where /etc/slurm/slurm.conf exists. The test clusters run daemons of their
  # own, so nothing may start: a policy-rc.d that denies every start, for the
  # length of the install, unless the machine has one already.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    "${sudo_cmd[@]}" sh -c "printf '#!/bin/sh\\nexit 101\\n' >$policy && chmod 755 $policy"
    trap '"${sudo_cmd[@]}" rm -f "$policy"' EXIT
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  if [ "$need_boost" = 1 ]; then
    boost=$(apt-cache pkgnames libboost1. | grep -E '^libboost1\.[0-9]+-dev$' |
            awk -F'[.-]' '$2 + 0 >= 81' | sort -t. -k2,2n | tail -n 1)
    [ -n "$boost" ] || { echo "aftermath: no libboost1.N-dev with N >= 81 in the package lists" >&2; exit 1; }
    missing+=("$boost")
  fi
  echo "aftermath: installing ${missing[*]} ($(. /etc/os-release && echo "$PRETTY_NAME"))"
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The project's Python: PyTorch 2.x in .venv (prints its path; quiet otherwise).
scripts/venv.sh >/dev/null
