#!/usr/bin/env bash
# Command 1: install what is missing, build, run the default CPU suite, print
# the summary and where the reports are. Exit status is the suite's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
exec build/bin/aftermath run --out aftermath-out --jobs 2 scenarios/nightly-cpu.suite
