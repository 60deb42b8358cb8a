#!/usr/bin/env bash
# Command 1: install what is missing, build only what the default CPU suite
# runs (with ninja's [n/N] progress), run it (scenarios/nightly-cpu.suite on
# the project's PyTorch 2.x), print the summary and where the reports are.
# Exit status is the suite's.
#
#   scripts/quickstart.sh [--help]
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "scripts/quickstart.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
step() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }
step "installing what is missing"
scripts/deps.sh
step "building the CLI and the suite's fixtures"
scripts/build.sh --suite
step "running scenarios/nightly-cpu.suite"
exec build/bin/aftermath run --out aftermath-out --jobs 2 scenarios/nightly-cpu.suite
