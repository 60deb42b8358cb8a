#!/usr/bin/env bash
# Command 2: install what is missing, build everything, run every test through
# ctest (on every PyTorch the machine has: the project's venv and Debian's
# python3-torch).
#
#   scripts/test.sh [--help] [CTEST ARGS...]    e.g. scripts/test.sh -R MultiNode
#
# The suite must leave the temp dir as it found it: PyTorch's and
# multiprocessing's residue (pymp-*, torch-shm-dir-*, torchelastic_*,
# mp.spawn's pytorch-errorfile-*.pickle) that appears during the run and is
# still there 30 s after it fails the run, by name.
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
step() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }
step "installing what is missing"
scripts/deps.sh --test
step "checking the C++ format"
scripts/format.sh --check
step "building everything"
scripts/build.sh
step "packaging the wheel (what was just built, nothing compiled again)"
scripts/wheel.sh --reuse-build

# The residue in each temp dir a test may use ($TMPDIR and /tmp), one path a line.
residue() {
  local d
  for d in $(printf '%s\n' "${TMPDIR:-/tmp}" /tmp | sort -u); do
    find "$d" -mindepth 1 -maxdepth 1 \
      \( -name 'pymp-?*' -o -name 'torch-shm-dir-?*' -o -name 'torchelastic_?*' -o -name 'aftermath-torchrun-?*' \
         -o -name 'pytorch-errorfile-?*.pickle' \) 2>/dev/null
  done | sort
}

# .ci/run starts its NCCL link check's install and build on this banner.
step "running every test"
before=$(residue)
rc=0
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 300 "$@" || rc=$?
new_residue() { comm -13 <(printf '%s\n' "$before") <(residue) | sed '/^$/d'; }
left=$(new_residue)
# An entry whose owner still runs (a torch_shm_manager in its grace, or a
# job of another run sharing this /tmp) goes when that owner ends; what is
# still there 30 s on is counted as left.
t_end=$((SECONDS + 30))
while [ -n "$left" ] && [ "$SECONDS" -lt "$t_end" ]; do
  sleep 1
  left=$(new_residue)
done
echo "temp-dir residue: $(printf '%s' "$before" | grep -c . || true) before the tests," \
     "$(printf '%s' "$left" | grep -c . || true) new after them"
if [ -n "$left" ]; then
  echo "aftermath: the test suite left $(printf '%s\n' "$left" | wc -l) temp-dir entr(y/ies):" >&2
  printf '%s\n' "$left" | sed 's/^/  /' >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
