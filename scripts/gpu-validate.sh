#!/usr/bin/env bash
# The GPU check, run from the wheel: nothing of the harness is compiled
# where it runs; only the LibTorch trainer is built there, against that
# machine's PyTorch. On a machine without a GPU every GPU step is skipped
# with its reason and every other step runs for real (the dry run).
#
#   scripts/gpu-validate.sh WHEEL OUT
#
# Steps, in order, each bounded, each recorded (OUT/steps.tsv: name, status,
# exit, seconds, note) with its output (OUT/<step>.log) even when a later one
# fails:
#   facts      driver, GPUs, CUDA, torch and NCCL versions, py-spy/gdb/cuda-gdb
#   install    the wheel, `pip install --target` (the runner's venv untouched)
#   inspect    `aftermath inspect --json --require-gpu` and aftermath-probe
#   unit       the GPU side's unit tests (a unit_tests binary carried along)
#   seed       the seed story: 16 DataLoader workers holding the GPU, their
#              main process SIGKILLed; under aftermath, then bare: inspect
#              names the holders, reap --yes frees them, the probe succeeds
#   trainer    the LibTorch trainer built against this torch, NCCL at world
#              size 1, its rank SIGKILLed mid-step
#   gpu-suite  scenarios/nightly-gpu.suite (what needs two GPUs is skipped by
#              its requires:)
#   cpu-suite  the CPU catalogue on this machine's torch
# and OUT.tar.gz holds the logs and reports (not the installed wheel or the
# trainer's build tree).
#
# Environment: AFTERMATH_GPU_PYTHON (the runner's interpreter; default
# python3 on PATH), AFTERMATH_GPU_UNIT_TESTS (default build/bin/unit_tests),
# AFTERMATH_GPU_CPU_SUITE (default scenarios/torch-cpu.suite),
# AFTERMATH_GPU_BUDGET_S (the whole script's bound, default 540).
# Exit status: 0 when no step failed (skipped steps are not failures).
set -uo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "scripts/gpu-validate.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
[ $# -eq 2 ] || { echo "usage: scripts/gpu-validate.sh WHEEL OUT (see --help)" >&2; exit 2; }
wheel=$(realpath "$1" 2>/dev/null) && [ -f "$wheel" ] || { echo "scripts/gpu-validate.sh: no wheel at $1" >&2; exit 2; }
mkdir -p "$2" && out=$(cd "$2" && pwd)
cd "$(dirname "$0")/.."
src=$PWD
py=${AFTERMATH_GPU_PYTHON:-$(command -v python3)}
unit=${AFTERMATH_GPU_UNIT_TESTS:-$src/build/bin/unit_tests}
cpu_suite=${AFTERMATH_GPU_CPU_SUITE:-$src/scenarios/torch-cpu.suite}
budget=${AFTERMATH_GPU_BUDGET_S:-540}
start=$(date +%s)
kit=$out/kit
failed=0
: >"$out/steps.tsv"
: >"$out/summary.txt"

have_gpu=0
gpu_why="no NVIDIA device (/dev/nvidiactl absent)"
if [ -e /dev/nvidiactl ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; gpu_why=""
  else gpu_why="nvidia-smi cannot list the GPUs"; fi
fi

record() {  # name status rc seconds note
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$out/steps.tsv"
  printf '%-10s %-7s %5ss  %s\n' "$1" "$2" "$4" "$5" | tee -a "$out/summary.txt"
}
skip() { record "$1" skipped - 0 "$2"; }
seconds_since() { local ms=$(( ($(date +%s%N) - $1) / 1000000 )); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }

# OUT.tar.gz: the logs and reports, not the installed kit or the trainer's
# build tree (object files, tens of MB).
archive() {
  tar -C "$(dirname "$out")" --exclude="$(basename "$out")/kit" \
    --exclude="$(basename "$out")/trainer-build" -czf "$out.tar.gz" "$(basename "$out")"
}

left() { echo $((budget - ($(date +%s) - start))); }
# step NAME LIMIT_S CMD...: runs CMD with its output in OUT/NAME.log, bounded
# by its limit and what is left of the budget.
step() {
  local name=$1 limit=$2
  shift 2
  local rest
  rest=$(left)
  if [ "$rest" -le 5 ]; then skip "$name" "the ${budget}s budget ran out"; return 1; fi
  [ "$limit" -le "$rest" ] || limit=$rest
  # `fn F`: a function of this script, run by a bash of its own (timeout
  # runs programs).
  if [ "$1" = fn ]; then set -- bash -c "$(declare -f seconds_since "$2"); $2"; fi
  local t0 rc
  t0=$(date +%s%N)
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  local took
  took=$(seconds_since "$t0")
  if [ $rc -eq 0 ]; then record "$name" ok 0 "$took" "$(tail -n 1 "$out/$name.log" | cut -c1-160)"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then record "$name" FAILED $rc "$took" "timed out after ${limit}s"; failed=1
  else record "$name" FAILED $rc "$took" "$(tail -n 1 "$out/$name.log" | cut -c1-160)"; failed=1; fi
  return $rc
}

# --- facts
facts() {
  echo "date: $(date -u +%FT%TZ)"
  echo "kernel: $(uname -r)"
  echo "python: $py ($("$py" --version 2>&1))"
  "$py" - <<'EOF' 2>&1
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count() if torch.cuda.is_available() else 0)
try:
    print("nccl", ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "none (no GPU)")
except Exception as e:
    print("nccl unknown:", e)
print("cmake prefix", torch.utils.cmake_prefix_path)
EOF
  if [ "$have_gpu" = 1 ]; then
    nvidia-smi --query-gpu=index,name,memory.used,memory.total,driver_version --format=csv
  else
    echo "gpu: $gpu_why"
  fi
  # inspect loads NVML by its soname: where the loader finds it, if it does.
  local nvml
  nvml=$(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libnvidia-ml\.so\.1$' | head -n 1 || true)
  echo "nvml: ${nvml:-not in the loader cache} (LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-})"
  echo "nvcc: $(command -v nvcc >/dev/null && nvcc --version | tail -n 1 || echo none)"
  for t in py-spy gdb cuda-gdb; do
    echo "$t: $(command -v "$t" || ls "$(dirname "$py")/$t" 2>/dev/null || echo none)"
  done
  echo "facts: done"
}
export py src out kit have_gpu gpu_why
step facts 60 fn facts

# --- the wheel, beside the runner's venv rather than in it
step install 180 "$py" -m pip install --disable-pip-version-check --no-deps --target "$kit" "$wheel" || {
  echo "the wheel did not install: nothing else can run" | tee -a "$out/summary.txt"
  archive
  exit 1
}
af=$kit/bin/aftermath
export af
export PYTHONPATH="$kit${PYTHONPATH:+:$PYTHONPATH}"  # the points client and the pytest plugin

# --- inspect and the probe
if [ "$have_gpu" = 1 ]; then
  step inspect 120 "$af" inspect --json --require-gpu
  step probe 120 "$kit/bin/aftermath-probe"
else
  step inspect 120 "$af" inspect --json  # the rest of the machine, for real
  skip probe "$gpu_why"
fi

# --- the GPU side's unit tests
if [ "$have_gpu" = 0 ]; then
  skip unit "$gpu_why"
elif [ ! -x "$unit" ]; then
  skip unit "no unit_tests binary at $unit (AFTERMATH_GPU_UNIT_TESTS)"
else
  # Not DeviceFaultCudaFail: it runs the interposer against a stand-in CUDA
  # runtime from the build tree, on any machine, and CI runs it.
  step unit 180 "$unit" --gtest_filter='Device*:Nvml*:Holder*:Probe*:Hygiene*:Reap*:CudaDevices*-DeviceFaultCudaFail.*'
fi

# --- the seed story
seed() {
  set -e
  echo "== under aftermath"
  "$af" run --python "$py" --out "$out/seed-run" "$src/scenarios/gpu-loader-main-kill-device-workers.yaml" || true
  echo "== bare: 16 workers on the GPU, their main process SIGKILLed"
  "$py" "$src/fixtures/python/loader_job.py" --workers 16 --batches 100000 --batch-size 2 \
    --step-time 50ms --worker-device-mb 64 >"$out/seed-job.log" 2>&1 &
  local main=$! holders=0 i
  for i in $(seq 1 600); do  # until 16 processes hold the GPU, 60 s at most
    holders=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c . || true)
    [ "$holders" -ge 16 ] && break
    sleep 0.1
  done
  echo "holders before the kill: $holders"
  local t0
  t0=$(date +%s%N)
  kill -KILL "$main"
  wait "$main" 2>/dev/null || true
  "$af" inspect --json >"$out/seed-inspect.json" || echo "inspect: NOT clean (as expected)"
  echo "inspect after the kill: $(seconds_since "$t0") s"
  "$af" reap --yes --json >"$out/seed-reap.json" || true
  echo "reap --yes done: $(seconds_since "$t0") s after the kill"
  "$kit/bin/aftermath-probe" >"$out/seed-probe.jsonl"
  echo "probe after reap: ok, $(seconds_since "$t0") s after the kill"
}
if [ "$have_gpu" = 1 ]; then step seed 150 fn seed; else skip seed "$gpu_why"; fi

# --- the LibTorch trainer with NCCL, built here against this torch
trainer() {
  set -e
  local prefix
  prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  # torch/ itself on the prefix path too: a libtorch.so in /usr/lib must not win.
  cmake -S "$src/fixtures/cpp" -B "$out/trainer-build" -G Ninja \
    "-DCMAKE_PREFIX_PATH=$prefix;$(dirname "$(dirname "$prefix")")"
  cmake --build "$out/trainer-build" -j "$(nproc)"
  "$out/trainer-build/bin/aftermath-trainer" --help | tail -n 1
  # As trainer-rank-kill-orphans on the CPU: the launcher exits 40 (a rank
  # failed), and the rank's 2 DataLoader workers outlive it.
  "$af" run --python "$py" --out "$out/trainer-run" --expect-exit 40 --expect-fail no_orphans \
    --fault '{action: SIGKILL, target: rank:0, at: {point: step, labels: {rank: 0}, hit: 5}}' \
    -- "$out/trainer-build/bin/aftermath-trainer" launch --backend nccl --world-size 1 --workers 2 \
    --dataset-size 512 || true
  grep -o '"verdict": "[a-z]*"' "$out/trainer-run/result.json" | head -n 1
}
if [ "$have_gpu" = 1 ]; then step trainer 240 fn trainer; else skip trainer "$gpu_why"; fi

# --- the single-GPU scenarios (skipped by their requires: without a GPU)
step gpu-suite 240 "$af" run --python "$py" --out "$out/gpu-suite" "$src/scenarios/nightly-gpu.suite"

# --- the CPU catalogue on this machine's torch
step cpu-suite 300 "$af" run --python "$py" --jobs "$(( $(nproc) > 4 ? 4 : 1 ))" --out "$out/cpu-suite" "$cpu_suite"

echo "total: $(( $(date +%s) - start ))s of the ${budget}s budget" | tee -a "$out/summary.txt"
archive
echo "archive: $out.tar.gz" | tee -a "$out/summary.txt"
exit $failed
