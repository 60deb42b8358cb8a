#!/usr/bin/env bash
# Installs what the build and the tests need, from Debian packages. Idempotent
# and quiet when nothing is missing. Needs root (or sudo) only to install.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config gdb python3-dbg
  libboost1.81-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtorch-dev libgloo-dev python3-torch python3-psutil python3-pytest python3-pytest-xdist
  psmisc lsof
)

# The whole test suite also renders a report in headless Chromium, and runs
# multi-node jobs on a Slurm cluster made of network namespaces
# (scripts/local-cluster.sh: iproute2 for them, util-linux for unshare/flock).
slurm_packages=(slurmctld slurmd slurm-client)
if [ "${1:-}" = "--test" ]; then packages+=(chromium "${slurm_packages[@]}" iproute2 util-linux nftables); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "aftermath: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "aftermath: run as root to install ${missing[*]}" >&2; exit 1; }
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
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
