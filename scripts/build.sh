#!/usr/bin/env bash
# Configures and builds into build/ (the CLI lands at build/bin/aftermath),
# showing ninja's [n/N] progress as it goes.
#
#   scripts/build.sh            everything: the CLI, fixtures, tests, benchmarks,
#                               and the LibTorch trainer again against the
#                               venv's PyTorch 2.x (build/trainer-venv)
#   scripts/build.sh --suite    only what the default suite runs (README
#                               command 1): the CLI, the reaper, the probe and
#                               the fixtures of scenarios/nightly-cpu.suite
#
# The project's venv (scripts/venv.sh) is the default interpreter of Python
# jobs ($AFTERMATH_DEFAULT_PYTHON here overrides it). On failure it prints the
# end of the log (build/build.log) and fails.
set -euo pipefail
targets=()
case "${1:-}" in
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --suite) targets=(--target aftermath-suite) ;;
  "") ;;
  *) echo "scripts/build.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
mkdir -p build
python=${AFTERMATH_DEFAULT_PYTHON:-$PWD/.venv/bin/python}
log=build/build.log
: >"$log"
trainer_venv=
if [ ${#targets[@]} -eq 0 ] && [ -x "$python" ]; then
  trainer_venv=$PWD/build/trainer-venv/bin/aftermath-trainer
fi
if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DAFTERMATH_DEFAULT_PYTHON=$python" "-DAFTERMATH_TRAINER_VENV=$trainer_venv" >>"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "aftermath: configuring failed (log: $log)" >&2
  exit 1
fi
# ninja's own progress, one line per step ("[12/140] Building CXX object ..."),
# shortened to the file it builds.
set +e
NINJA_STATUS="[%f/%t %es] " cmake --build build -j "$(nproc)" "${targets[@]}" 2>&1 |
  tee -a "$log" |
  sed -u -n -E 's#^(\[[0-9]+/[0-9]+ [0-9.]+s\]) (Building|Linking) [A-Z]+ [a-z ]+ (.*/)?([^/ ]+)$#  \1 \2 \4#p'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  grep -E -A3 "error|Error" "$log" | tail -n 60 >&2
  echo "aftermath: build failed (log: $log)" >&2
  exit 1
fi
grep -E "warning:" "$log" >&2 || true

# The trainer against the venv's LibTorch (its own CMake project: nothing of
# the harness), so the trainer's scenarios run on PyTorch 2.x too. LibTorch
# from a pip wheel ships no gloo headers: Debian's libgloo-dev provides them.
if [ -n "$trainer_venv" ]; then
  prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
  if [ -n "$prefix" ]; then
    tlog=build/trainer-venv.log
    if ! { cmake -S fixtures/cpp -B build/trainer-venv -G Ninja -DCMAKE_BUILD_TYPE=Release \
             "-DCMAKE_PREFIX_PATH=$prefix;$(dirname "$(dirname "$prefix")")" &&
           NINJA_STATUS="[%f/%t %es] " cmake --build build/trainer-venv -j "$(nproc)"; } >"$tlog" 2>&1; then
      tail -n 40 "$tlog" >&2
      echo "aftermath: building the trainer against the venv's LibTorch failed (log: $tlog)" >&2
      exit 1
    fi
    sed -n -E 's#^(\[[0-9]+/[0-9]+ [0-9.]+s\]) (Building|Linking) [A-Z]+ [a-z ]+ (.*/)?([^/ ]+)$#  \1 \2 \4 (trainer, venv LibTorch)#p' "$tlog"
  fi
fi
