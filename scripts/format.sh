#!/usr/bin/env bash
# The C++ sources' format: .clang-format, applied by one pinned clang-format
# (installed from PyPI into the project's venv when missing).
#
#   scripts/format.sh           reformat every tracked .cc and .h in place
#   scripts/format.sh --check   change nothing; list the files that differ, exit 1 if any
set -euo pipefail
version=19.1.7
mode=fix
case "${1:-}" in
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --check) mode=check ;;
  "") ;;
  *) echo "scripts/format.sh: unknown option '$1' (--check, --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
venv=.venv
cf="$venv/bin/clang-format"
if ! [ -x "$cf" ] || [ "$("$cf" --version | grep -o '[0-9][0-9.]*' | head -1)" != "$version" ]; then
  [ -x "$venv/bin/python" ] || scripts/venv.sh
  "$venv/bin/python" -m pip install --disable-pip-version-check -q "clang-format==$version"
fi
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "$mode" = fix ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" "$f" | cmp -s - "$f" || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "scripts/format.sh: ${#bad[@]} of ${#files[@]} files differ from .clang-format (scripts/format.sh fixes them):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format: ${#files[@]} files as .clang-format says"
