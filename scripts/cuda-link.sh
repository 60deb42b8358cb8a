#!/usr/bin/env bash
# CI's proof that the LibTorch trainer's NCCL backend compiles and links
# against a CUDA PyTorch wheel (scripts/requirements-cuda.txt: torch 2.14.1
# with its NCCL, and nvcc from pip), on a machine with no GPU: the trainer
# is built on its own against that LibTorch, must say "backends built: ...
# nccl", must load libnccl, and `launch --backend nccl` must refuse with
# "needs a GPU" (nothing more can run here; scripts/gpu-validate.sh runs it
# on a GPU). About 5.6 GB is installed into build/cuda-link/venv, reused by
# the next run while the pins are the same, as is the trainer's build.
#
#   scripts/cuda-link.sh [--help]
#   scripts/cuda-link.sh --prepare   only install and build (no checks); a
#                                    run without it then reuses both
#
# The venv's base interpreter: $AFTERMATH_VENV_PYTHON, else python3 on PATH.
set -euo pipefail
prepare=0
case "${1:-}" in
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --prepare) prepare=1 ;;
  "") ;;
  *) echo "scripts/cuda-link.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
req=scripts/requirements-cuda.txt
dir=build/cuda-link
venv=$dir/venv
log=$dir/cuda-link.log
start=$(date +%s)
fail() { echo "aftermath: cuda-link: $*" >&2; [ -f "$log" ] && tail -n 30 "$log" >&2; exit 1; }
say() { echo "  [$(( $(date +%s) - start ))s] $*"; }

base=${AFTERMATH_VENV_PYTHON:-$(command -v python3 || true)}
[ -n "$base" ] || base=/usr/bin/python3
stamp=$venv/.aftermath-requirements
mkdir -p "$dir"
: >"$log"
if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp" 2>/dev/null; then
  say "reusing $venv (the pins of $req)"
else
  rm -rf "$venv" "$dir/build"
  "$base" -m venv "$venv" >>"$log" 2>&1 || fail "$base cannot make a venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req" >>"$log" 2>&1 ||
    fail "installing $req failed (log: $log)"
  cp "$req" "$stamp"
  say "installed the $(grep -c '^[a-z]' "$req") pins of $req ($(du -sh "$venv" | cut -f1))"
fi

# The pip CUDA toolkit, laid out as CMake looks for one: libraries in lib64
# and unversioned names beside the versioned ones (our own venv: nothing
# outside build/cuda-link/ changes).
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cuda=$site/nvidia/cu13
[ -x "$cuda/bin/nvcc" ] || fail "no nvcc in $cuda/bin after installing $req"
ln -sfn lib "$cuda/lib64"
for f in "$cuda"/lib/lib*.so.[0-9]*; do
  b=$(basename "$f")
  [ -e "$cuda/lib/${b%%.so.*}.so" ] || ln -s "$b" "$cuda/lib/${b%%.so.*}.so"
done

prefix=$("$venv/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>>"$log") ||
  fail "the CUDA torch does not import"
# Debian's libtorch.so in /usr/lib must not be found first: the wheel's torch/
# goes on the prefix path too.
cmake -S fixtures/cpp -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_PREFIX_PATH=$prefix;$(dirname "$(dirname "$prefix")")" \
  "-DCUDA_TOOLKIT_ROOT_DIR=$cuda" "-DCUDAToolkit_ROOT=$cuda" "-DCMAKE_CUDA_COMPILER=$cuda/bin/nvcc" \
  >>"$log" 2>&1 || fail "configuring the trainer against the CUDA LibTorch failed (log: $log)"
grep -q "trainer fixture with gloo [A-Z]*, NCCL ON" "$log" ||
  fail "the trainer's NCCL backend was left out against LibTorch $("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
say "configured: $(sed -n 's/^-- aftermath: //p' "$log" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
NINJA_STATUS="[%f/%t %es] " cmake --build "$dir/build" -j "$(nproc)" >>"$log" 2>&1 ||
  fail "building the trainer against the CUDA LibTorch failed (log: $log)"
trainer=$dir/build/bin/aftermath-trainer
say "built and linked $trainer"
if [ "$prepare" = 1 ]; then
  echo "cuda-link: prepared in $(( $(date +%s) - start )) s (the checks run without --prepare)"
  exit 0
fi

backends=$("$trainer" --help 2>&1 | sed -n 's/^backends built: //p')
case " $backends " in *" nccl "*) ;; *) fail "the trainer says its backends are '$backends', without nccl" ;; esac
# ldd's list read whole first: `ldd | grep -q` under pipefail fails when grep
# stops at its match while ldd still writes (SIGPIPE), as it once did here.
libs=$(ldd "$trainer")
grep -q 'libnccl\.so' <<<"$libs" || fail "the trainer does not load libnccl"
if grep -q 'not found' <<<"$libs"; then
  fail "the trainer has unresolved libraries: $(grep 'not found' <<<"$libs" | tr -s ' \t' ' ')"
fi
set +e
out=$(timeout 60 "$trainer" launch --backend nccl --world-size 1 --workers 0 --dataset-size 64 2>&1)
rc=$?
set -e
case "$out" in
  *"needs a GPU"*) [ "$rc" -ne 0 ] || fail "launch --backend nccl with no GPU exited 0" ;;
  *) fail "launch --backend nccl with no GPU did not refuse as expected (exit $rc): $out" ;;
esac
say "backends built: $backends; libnccl loaded; with no GPU: $(printf '%s\n' "$out" | head -n 1)"
echo "cuda-link: the trainer's NCCL backend compiled and linked against LibTorch $(sed -n 's/^torch==//p' "$req") in $(( $(date +%s) - start )) s"
