#!/usr/bin/env bash
# Builds the aftermath wheel (scikit-build-core, from harness/python/) into
# dist/: the harness's programs, the points client, the pytest plugin.
# Self-contained: the programs need only glibc from the host (yaml-cpp and
# the C++ runtime linked in); NVML and CUDA are loaded at run time.
#
#   scripts/wheel.sh [--reuse-build] [--help]
#
# --reuse-build: package what scripts/build.sh built in build/ (same flags,
# nothing compiled twice) instead of a build of its own in build/wheel.
# Prints the wheel's path last.
set -euo pipefail
reuse=0
case "${1:-}" in
  -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --reuse-build) reuse=1 ;;
  "") ;;
  *) echo "scripts/wheel.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
py=${AFTERMATH_DEFAULT_PYTHON:-$PWD/.venv/bin/python}
[ -x "$py" ] || py=$(command -v python3)
mkdir -p dist
log=dist/wheel.log
settings=()
if [ "$reuse" = 1 ]; then
  [ -f build/CMakeCache.txt ] || { echo "scripts/wheel.sh: --reuse-build: no build/ (run scripts/build.sh)" >&2; exit 2; }
  # The tree as scripts/build.sh configured it: the same options, so only the
  # install step runs.
  settings=(-C "build-dir=$PWD/build"
            -C cmake.define.AFTERMATH_BUILD_TESTS=ON -C cmake.define.AFTERMATH_BUILD_BENCHMARKS=ON
            -C cmake.define.AFTERMATH_BUILD_FIXTURES=ON
            -C "cmake.define.AFTERMATH_DEFAULT_PYTHON=$(sed -n 's/^AFTERMATH_DEFAULT_PYTHON:FILEPATH=//p' build/CMakeCache.txt)")
  # scikit-build-core puts the venv's site-packages on CMAKE_PREFIX_PATH: keep
  # the LibTorch build/ was configured with, so its trainer does not switch.
  torch_dir=$(sed -n 's/^Torch_DIR:[A-Z]*=//p' build/CMakeCache.txt)
  case "$torch_dir" in ""|*NOTFOUND) ;; *) settings+=(-C "cmake.define.Torch_DIR=$torch_dir") ;; esac
fi
rm -f dist/aftermath-*.whl
if ! "$py" -m pip wheel --no-deps --disable-pip-version-check -w dist "${settings[@]}" harness/python >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "aftermath: building the wheel failed (log: $log)" >&2
  exit 1
fi
ls dist/aftermath-*.whl
