#!/usr/bin/env bash
# The wheel, installed into a fresh venv and run where our build dependencies
# are hidden: in a mount namespace of its own (as root), /usr/include is an
# empty tmpfs and every host copy of libyaml-cpp and libstdc++ is /dev/null,
# so a program that still needs one fails to start. There it must:
#   - carry nothing but glibc as a dependency (ldd of each program),
#   - answer `aftermath --version`, `python -m aftermath --version`,
#     `import aftermath_points, aftermath_pytest`,
#   - judge a clean job pass and a leaking one fail, naming the leaks,
#   - turn `pytest --aftermath` into a judged session (the pytest11 entry point),
# and stay under 40 MB. Leaves nothing: the venv and the reports are in a temp
# dir removed at exit; the namespace dies with this script's child.
#
#   tests/wheel/wheel_test.sh WHEEL|DIR PYTHON   (DIR: its aftermath-*.whl; PYTHON: the venv's base)
#
# Exit 77 (skipped) where a mount namespace cannot be made (not root).
set -euo pipefail
wheel=${1:?usage: wheel_test.sh WHEEL|DIR PYTHON}
base=${2:?usage: wheel_test.sh WHEEL|DIR PYTHON}
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ -d "$wheel" ]; then wheel=$(ls "$wheel"/aftermath-*.whl 2>/dev/null | head -n 1 || true); fi
[ -n "$wheel" ] && [ -f "$wheel" ] || fail "no wheel (scripts/wheel.sh builds it into dist/)"
[ "$(id -u)" = 0 ] || { echo "skipped: hiding the build dependencies needs root (a mount namespace)"; exit 77; }
size=$(stat -c %s "$wheel")
echo "wheel: $(basename "$wheel"), $((size / 1024)) KiB"
[ "$size" -lt $((40 * 1024 * 1024)) ] || fail "the wheel is $size bytes, over 40 MB"

work=$(mktemp -d "${TMPDIR:-/tmp}/aftermath-wheel-XXXXXX")
trap 'rm -rf "$work"' EXIT
timeout 120 "$base" -m venv "$work/venv"
# The wheel alone, and pytest for the plugin test (from the configured index).
timeout 300 "$work/venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "$wheel"
timeout 300 "$work/venv/bin/python" -m pip install -q --disable-pip-version-check pytest >/dev/null

cat >"$work/inside.sh" <<'INSIDE'
set -euo pipefail
work=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
# Hide what the build needed.
mount -t tmpfs none /usr/include
for lib in /usr/lib/x86_64-linux-gnu/libyaml-cpp.so* /usr/lib/x86_64-linux-gnu/libstdc++.so*; do
  [ -e "$lib" ] && [ ! -L "$lib" ] && mount --bind /dev/null "$lib"
done
bin=$work/venv/bin
for p in aftermath aftermath-reaper aftermath-probe aftermath-device-hog libaftermath-cudafail.so; do
  deps=$(ldd "$bin/$p" | awk '{print $1}' | grep -vE '^(linux-vdso|/lib64/ld-linux|libc\.so|libm\.so)' || true)
  [ -z "$deps" ] || fail "$p needs more than glibc: $deps"
  echo "ldd $p: $(ldd "$bin/$p" | awk '{print $1}' | tr '\n' ' ')"
done
"$bin/aftermath" --version | grep -q '^aftermath [0-9]' || fail "aftermath --version"
"$bin/python" -m aftermath --version | grep -q '^aftermath [0-9]' || fail "python -m aftermath --version"
"$bin/python" -c 'import aftermath_points, aftermath_pytest' || fail "the modules do not import"
cd "$work"
# A clean job: pass, exit 0.
"$bin/aftermath" run --out clean --settle 0s -- "$bin/python" -c 'print("clean")' >clean.log 2>&1 ||
  { cat clean.log; fail "a clean job did not pass"; }
grep -q '"verdict": "pass"' clean/result.json || fail "clean: no pass in result.json"
# Its interpreter is the venv's own (the python beside the program).
grep -q "\"interpreter\": \"$bin/python\"" clean/result.json || fail "clean: not the venv's python"
# A leaking job: a /dev/shm file and a child that outlives it (1 s grace).
rc=0
"$bin/aftermath" run --out leaky --settle 3s -- "$bin/python" -c '
import os, time
open("/dev/shm/aftermath-wheel-leak", "w").write("x" * 4096)
if os.fork() == 0:
    time.sleep(2.5)
    os._exit(0)
' >leaky.log 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat leaky.log; fail "a leaking job exited $rc, not 1"; }
for c in shm_clean no_orphans; do
  grep -q "\"name\": \"$c\"" leaky/result.json || fail "leaky: no $c"
done
"$bin/python" - "$work/leaky/result.json" <<'PY' || fail "leaky: wrong verdicts"
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
st = {c["name"]: c["status"] for c in s["checks"]}
assert s["verdict"] == "fail", s["verdict"]
assert st["shm_clean"] == "fail" and st["no_orphans"] == "fail", st
assert st["job_exit"] == "pass", st
print("leaky:", s["verdict_reason"])
PY
# pytest --aftermath: the session re-run under the harness, each test judged.
mkdir -p suite
printf 'import os, time\ndef test_clean():\n    pass\ndef test_orphan():\n    if os.fork() == 0:\n        time.sleep(2.5)\n        os._exit(0)\n' >suite/test_x.py
rc=0
(cd suite && "$bin/python" -m pytest --aftermath -q -p no:cacheprovider test_x.py) >pytest.log 2>&1 || rc=$?
[ -f suite/aftermath-out/result.json ] || { cat pytest.log; fail "pytest --aftermath wrote no reports"; }
grep -q 'test_orphan' suite/aftermath-out/summary.md || { cat pytest.log; fail "pytest --aftermath did not name the leaking test"; }
echo "pytest --aftermath: exit $rc, the leaking test named"
echo "PASS"
INSIDE
rm -f /dev/shm/aftermath-wheel-leak
rc=0
timeout 240 unshare -m --propagation private bash "$work/inside.sh" "$work" || rc=$?
rm -f /dev/shm/aftermath-wheel-leak
exit "$rc"
