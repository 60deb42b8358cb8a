#!/usr/bin/env bash
# Configures and builds into build/ (the CLI lands at build/bin/aftermath).
# Quiet on success; on failure prints the build log and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
if ! { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build build -j "$(nproc)"; } >build/build.log 2>&1; then
  cat build/build.log >&2
  echo "aftermath: build failed (log: build/build.log)" >&2
  exit 1
fi
grep -E "warning:" build/build.log >&2 || true
