#!/usr/bin/env bash
# Makes the project's Python environment, .venv, with the pinned PyTorch 2.x
# and tools of scripts/requirements.txt. Idempotent: quiet and quick when the
# venv already holds exactly those pins. Prints the interpreter's path last.
#
#   scripts/venv.sh [--help]
#
# The venv's base interpreter: $AFTERMATH_VENV_PYTHON, else python3 on PATH
# (a pyenv or other interpreter is fine), else /usr/bin/python3.
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "scripts/venv.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
venv=.venv
req=scripts/requirements.txt
stamp=$venv/.aftermath-requirements
if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp" 2>/dev/null; then
  echo "$PWD/$venv/bin/python"
  exit 0
fi
base=${AFTERMATH_VENV_PYTHON:-$(command -v python3 || true)}
[ -n "$base" ] || base=/usr/bin/python3
if ! "$base" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "aftermath: $base cannot make a venv (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
echo "aftermath: making $venv with $("$base" --version 2>&1) and $(grep -c '^[a-z]' "$req") pinned packages" >&2
[ -x "$venv/bin/python" ] || "$base" -m venv "$venv"
# pip says which index it looked at when a pin is missing; keep its last lines.
if ! "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req" >"$venv/pip.log" 2>&1; then
  tail -n 20 "$venv/pip.log" >&2
  echo "aftermath: installing $req into $venv failed (log: $venv/pip.log)" >&2
  exit 1
fi
cp "$req" "$stamp"
echo "$PWD/$venv/bin/python"
