#!/usr/bin/env bash
# Validates the GPU side on a machine with an NVIDIA GPU: builds aftermath
# there against the PyTorch it carries (LibTorch from torch.utils.cmake_prefix_path;
# the CUDA toolkit when present; nothing is downloaded), then runs the
# allocation probe, `aftermath inspect --json`, the GPU scenarios and the
# GPU-side unit tests.
#
#   scripts/gpu-validate.sh OUT_DIR
#
# OUT_DIR receives: env.txt (GPUs, driver, toolchain), build.log, probe.jsonl
# (one JSON line per GPU), check.json and check.txt, gpu-suite/ (the reports
# of scenarios/nightly-gpu.suite) and gpu-suite.log, unit-tests.log, and
# summary.txt. The build goes to $AFTERMATH_GPU_BUILD (default build-gpu).
# Exit status: 0 when everything ran and the machine is clean; 1 otherwise.
set -uo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "scripts/gpu-validate.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
out=${1:?usage: scripts/gpu-validate.sh OUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
build=${AFTERMATH_GPU_BUILD:-build-gpu}
status=0
summary() { echo "$*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"

# --- the machine
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
{
  echo "date: $(date -u +%FT%TZ)"
  echo "kernel: $(uname -r)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.used,memory.total,compute_mode,driver_version --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())' 2>&1
  echo "torch cmake prefix: ${torch_prefix:-none}"
  echo "nvcc: $(command -v nvcc || echo none)"
  cmake --version | head -1
  c++ --version | head -1
  ldconfig -p | grep -E 'libnvidia-ml.so.1|libcudart.so' || true
  ls -l /dev/nvidia* 2>&1
} >"$out/env.txt" 2>&1

# The probe loads libcudart at run time: where the system has none, use the
# one PyTorch ships.
if ! ldconfig -p | grep -q 'libcudart.so' && [ -z "${AFTERMATH_CUDART:-}" ]; then
  AFTERMATH_CUDART=$(python3 - <<'EOF' 2>/dev/null
import glob, os, torch
root = os.path.dirname(os.path.dirname(torch.__file__))
hits = sorted(glob.glob(os.path.join(root, "nvidia", "**", "libcudart.so*"), recursive=True))
print(hits[0] if hits else "")
EOF
  )
  [ -n "$AFTERMATH_CUDART" ] && export AFTERMATH_CUDART && echo "libcudart: $AFTERMATH_CUDART (PyTorch's)" >>"$out/env.txt"
fi

# --- build
cmake_args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ -n "$torch_prefix" ]; then
  cmake_args+=("-DCMAKE_PREFIX_PATH=$torch_prefix" "-DTorch_DIR=$torch_prefix/Torch")
fi
if cmake "${cmake_args[@]}" >"$out/build.log" 2>&1 &&
   cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1; then
  summary "build: ok ($build${torch_prefix:+, LibTorch from PyTorch})"
else
  summary "build: FAILED: $(grep -m1 -E 'error:|Error' "$out/build.log")"
  status=1
  # The GPU side needs no LibTorch: build without it, so that its validation
  # still runs when only a LibTorch fixture fails against this PyTorch.
  build="$build-nolibtorch"
  if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON >>"$out/build.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1; then
    summary "build: ok without LibTorch ($build)"
  else
    summary "build: FAILED without LibTorch too"
  fi
fi

# --- the probe (built by the project, else on its own: it needs no library)
probe="$build/bin/aftermath-probe"
if [ ! -x "$probe" ]; then
  probe="$out/aftermath-probe"
  c++ -O2 -std=c++20 -I. harness/observe/probe/probe_main.cc -ldl -o "$probe" >>"$out/build.log" 2>&1 ||
    summary "probe: cannot build even on its own"
  export AFTERMATH_PROBE="$probe"  # where `aftermath inspect` finds it
fi
if [ -x "$probe" ]; then
  timeout 120 "$probe" >"$out/probe.jsonl" 2>>"$out/build.log"
  rc=$?
  summary "probe: exit $rc, $(grep -c '"status":"ok"' "$out/probe.jsonl") GPU(s) ok"
  [ $rc -eq 0 ] || status=1
fi

# --- aftermath inspect
cli="$build/bin/aftermath"
# `inspect --help` would print the top help and succeed: look for the subcommand.
if [ -x "$cli" ] && "$cli" --help 2>&1 | grep -qE '^[[:space:]]+inspect[[:space:],]'; then
  timeout 300 "$cli" inspect --json >"$out/check.json" 2>>"$out/build.log"
  rc=$?
  timeout 300 "$cli" inspect >"$out/check.txt" 2>&1
  summary "aftermath inspect: exit $rc ($([ $rc -eq 0 ] && echo clean || echo NOT clean))"
  [ $rc -eq 0 ] || status=1
else
  summary "aftermath inspect: not available in this build"
  status=1
fi

# --- the GPU scenarios: device OOM by interposer, orphaned workers holding
# device memory, NCCL rank death and watchdog, the pin-memory exit stall.
# /usr/bin/python3 must be the runner's CUDA PyTorch; scenarios whose
# requirements are not met (e.g. one GPU for the NCCL pair) are skipped.
if [ -x "$cli" ]; then
  timeout 900 "$cli" run --out "$out/gpu-suite" scenarios/nightly-gpu.suite >"$out/gpu-suite.log" 2>&1
  rc=$?
  summary "GPU suite: exit $rc, $(grep -E '^[0-9]+ scenario\(s\):' "$out/gpu-suite.log" | tail -1)"
  [ $rc -eq 0 ] || status=1
fi

# --- the GPU-side unit tests (NVML, probe and checks for real where a driver is)
if [ -x "$build/bin/unit_tests" ]; then
  timeout 300 "$build/bin/unit_tests" --gtest_filter='Device*:Nvml*:Holder*:Probe*:Hygiene*:Reap*' \
    >"$out/unit-tests.log" 2>&1
  rc=$?
  summary "unit tests (GPU side): exit $rc, $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/unit-tests.log" | head -2 | tr '\n' ' ')"
  [ $rc -eq 0 ] || status=1
fi
exit $status
