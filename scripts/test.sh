#!/usr/bin/env bash
# Command 2: install what is missing, build, run every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
scripts/build.sh
exec ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 300
