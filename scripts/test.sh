#!/usr/bin/env bash
# Command 2: install what is missing, build, run every test through ctest.
# The suite must leave the temp dir as it found it: PyTorch's and
# multiprocessing's residue (pymp-*, torch-shm-dir-*, torchelastic_*) that
# appears during the run and is still there after it fails the run, by name.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
scripts/build.sh

# The residue in each temp dir a test may use ($TMPDIR and /tmp), one path a line.
residue() {
  local d
  for d in $(printf '%s\n' "${TMPDIR:-/tmp}" /tmp | sort -u); do
    find "$d" -mindepth 1 -maxdepth 1 \
      \( -name 'pymp-?*' -o -name 'torch-shm-dir-?*' -o -name 'torchelastic_?*' \) 2>/dev/null
  done | sort
}

before=$(residue)
rc=0
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 300 || rc=$?
left=$(comm -13 <(printf '%s\n' "$before") <(residue) | sed '/^$/d')
echo "temp-dir residue: $(printf '%s' "$before" | grep -c . || true) before the tests," \
     "$(printf '%s' "$left" | grep -c . || true) new after them"
if [ -n "$left" ]; then
  echo "aftermath: the test suite left $(printf '%s\n' "$left" | wc -l) temp-dir entr(y/ies):" >&2
  printf '%s\n' "$left" | sed 's/^/  /' >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
