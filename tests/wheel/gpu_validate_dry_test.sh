#!/usr/bin/env bash
# scripts/gpu-validate.sh from the wheel on this machine (no GPU): every GPU
# step skipped with its reason, every other step run for real and passing,
# one archive of it all. Everything it writes is in a temp dir removed at exit,
# which is also the run's TMPDIR: inspect judges the temp dir this run uses,
# not what other programs left in the machine's /tmp.
#
#   tests/wheel/gpu_validate_dry_test.sh WHEEL|DIR PYTHON
set -euo pipefail
wheel=${1:?usage: gpu_validate_dry_test.sh WHEEL|DIR PYTHON}
py=${2:?usage: gpu_validate_dry_test.sh WHEEL|DIR PYTHON}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ -d "$wheel" ]; then wheel=$(ls "$wheel"/aftermath-*.whl 2>/dev/null | head -n 1 || true); fi
[ -n "$wheel" ] && [ -f "$wheel" ] || fail "no wheel (scripts/wheel.sh builds it into dist/)"
work=$(mktemp -d "${TMPDIR:-/tmp}/aftermath-gpu-dry-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"
rc=0
TMPDIR=$work/tmp AFTERMATH_GPU_PYTHON=$py \
  AFTERMATH_GPU_CPU_SUITE=$src/tests/data/scenarios/gpu-dry-cpu.suite \
  timeout 500 "$src/scripts/gpu-validate.sh" "$wheel" "$work/out" || rc=$?
cat "$work/out/summary.txt"
if [ "$rc" != 0 ]; then
  # What each failed step printed, the end of it.
  awk -F'\t' '$2 == "FAILED" { print $1 }' "$work/out/steps.tsv" | while read -r s; do
    echo "--- $s.log (the last 40 lines)"
    tail -n 40 "$work/out/$s.log"
  done
  fail "gpu-validate.sh exited $rc"
fi
status() { awk -F'\t' -v s="$1" '$1 == s { print $2 }' "$work/out/steps.tsv"; }
for s in facts install inspect gpu-suite cpu-suite; do
  [ "$(status "$s")" = ok ] || fail "step $s: $(status "$s"), not ok"
done
if [ ! -e /dev/nvidiactl ]; then
  for s in probe unit seed trainer; do
    [ "$(status "$s")" = skipped ] || fail "step $s: $(status "$s"), not skipped without a GPU"
    grep -P "^$s\tskipped\t-\t0\tno NVIDIA device" "$work/out/steps.tsv" >/dev/null || fail "step $s: no reason"
  done
  grep -q '"skipped": 6' "$work/out/gpu-suite/result.json" || fail "the GPU suite was not skipped scenario by scenario"
fi
grep -q '"xfail": 1' "$work/out/cpu-suite/result.json" || fail "the CPU step's scenarios did not run as expected"
tar -tzf "$work/out.tar.gz" >"$work/listing" || fail "no archive"
grep -q 'out/steps.tsv' "$work/listing" || fail "no archive with the steps"
! grep -q 'out/kit/' "$work/listing" || fail "the installed wheel is in the archive"
echo PASS
