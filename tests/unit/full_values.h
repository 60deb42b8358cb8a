// Values of the run's types with every field away from its default, for the
// tests that prove a format carries every field (the wire, result.json).
#pragma once

#include <csignal>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/core/device.h"
#include "harness/core/observation.h"
#include "harness/core/timeline.h"

namespace aftermath::testing_full {

// A value of each member type away from its default, at the edge of its range.
template <typename M>
inline M full_value() {
  if constexpr (std::is_same_v<M, std::string>) {
    return "python -c \"print('a\\tb')\"\nsecond line";
  } else if constexpr (std::is_same_v<M, bool>) {
    return true;
  } else if constexpr (std::is_same_v<M, char>) {
    return 'D';
  } else if constexpr (std::is_same_v<M, Role>) {
    return Role::Worker;
  } else if constexpr (std::is_same_v<M, HarnessPart>) {
    return HarnessPart::ShmDir;
  } else if constexpr (std::is_same_v<M, RunPhase>) {
    return RunPhase::DeviceRelease;
  } else if constexpr (std::is_same_v<M, FaultAction>) {
    return FaultAction::HostOom;
  } else if constexpr (std::is_same_v<M, std::optional<Outcome>>) {
    return Outcome::killed(SIGSEGV, true);
  } else if constexpr (std::is_same_v<M, int>) {
    return -4242;
  } else if constexpr (std::is_signed_v<M>) {
    return std::numeric_limits<M>::min();
  } else {
    return std::numeric_limits<M>::max();
  }
}

// Every field of kind P away from its default, the time not whole milliseconds.
template <typename P>
inline Observation full_observation() {
  P p{};
  for_each_field<P>([&](const auto& f) {
    p.*f.member = full_value<std::remove_cvref_t<decltype(p.*f.member)>>();
  });
  return Observation{1'234'567'891'234, std::move(p), 2};
}

// One full observation of every kind.
inline std::vector<Observation> every_kind_full() {
  std::vector<Observation> out;
  for_each_kind([&]<typename P>(std::type_identity<P>) {
    out.push_back(full_observation<P>());
    return false;
  });
  return out;
}

inline FaultRecord full_fault(int index) {
  FaultRecord f;
  f.index = index;
  f.action = FaultAction::HostOom;
  f.target = "worker:0/3";
  f.trigger = "point loader.worker.getitem worker=3 hit 12";
  f.point = "loader.worker.getitem#12";
  f.hit = 12;
  f.status = FaultStatus::Failed;
  f.reason = "memory.max not writable";
  f.optional = true;
  f.waiting_since = 1'000'000'001;
  f.mechanism = FaultMechanism::PointReply;
  f.pids = {101, 102};
  f.target_role = "worker";
  f.rank = 0;
  f.worker = 3;
  f.sent = 2'000'000'003;
  f.effect = 2'500'000'007;
  f.oom_kills = 2;
  f.cgroups = {"/sys/fs/cgroup/a/f0", "/sys/fs/cgroup/a/f0b"};
  f.kernel_log = {"Out of memory: Killed process 102"};
  return f;
}

inline ProcessDiagnosis full_diagnosis() {
  ProcessDiagnosis d;
  d.pid = 101;
  d.role = Role::Rank;
  d.rank = 1;
  d.worker = 2;
  d.state = 'S';
  d.wchan = "futex_wait_queue";
  d.kernel_stack = "[<0>] futex_wait\n[<0>] do_syscall_64\n";
  d.user_stacks = "Thread 1 (LWP 101):\n#0 0x0 in poll ()\n";
  d.waiting_in = "allreduce#7";
  d.python_stacks = "Thread 0x1 (most recent call first):\n  File \"t.py\", line 3\n";
  PythonFrame inner{"/src/t.py", 3, "step", "dist.all_reduce(x)"};
  PythonFrame outer{"/src/t.py", 10, "<module>", "main()"};
  d.python_frames = {inner, outer};
  d.python_note = "py-bt: no symbols";
  d.took = 345'678'901;
  return d;
}

inline RunFacts full_facts() {
  RunFacts f;
  f.top_pid = 100;
  f.init_pid = 99;
  f.top_outcome = Outcome::exited(3);
  f.stdout_text = "epoch 1\nepoch 2\n";
  f.stderr_text = "Traceback (most recent call last):\n";
  f.deadline_hit = true;
  f.stalled_since = 4'000'000'009;
  f.stall_window = 5'000'000'000;
  f.stall_cpu_wait = 1'500'000'000;
  f.containment = JobContainment::UserPidNamespace;
  f.containment_note = "no CAP_SYS_ADMIN";
  f.shm = ShmPlace::Private;
  f.faults = {full_fault(0), full_fault(1)};
  f.diagnosis = {full_diagnosis()};
  f.diagnosis_note = "gdb not installed: no user stacks";
  f.diagnosis_took = 1'500'000'011;
  return f;
}

inline GpuProcess full_gpu_process() {
  GpuProcess p;
  p.nvml_pid = 50101;
  p.pid = 101;
  p.nspid = {50101, 101, 7};
  p.comm = "python3";
  p.ppid = 1;
  p.state = 'Z';
  p.used_bytes = 512LL << 20;
  p.in_job = true;
  p.orphan = true;
  return p;
}

inline GpuSample full_sample(Nanos t, int index) {
  GpuSample s;
  s.t = t;
  s.index = index;
  s.total = 80LL << 30;
  s.used = 1LL << 30;
  s.free = (80LL << 30) - (1LL << 30);
  s.processes = {full_gpu_process()};
  s.error = "NVML_ERROR_GPU_IS_LOST";
  return s;
}

inline DeviceTimeline full_device() {
  DeviceTimeline d;
  d.unavailable = "";  // a timeline with GPUs; see the unavailable case below
  d.gpus = {GpuInfo{0, "GPU-5f1ac2b4", "00000000:3B:00.0", "NVIDIA H100", 80LL << 30},
            GpuInfo{1, "GPU-77aa", "00000000:3C:00.0", "NVIDIA H100", 80LL << 30}};
  d.job_gpus = {1};
  d.baseline = {full_sample(0, 0), full_sample(0, 1)};
  d.samples = {full_sample(100'000'001, 0), full_sample(100'000'001, 1),
               full_sample(200'000'003, 0)};
  d.origin = 150'000'007;
  DeviceHolder h;
  h.pid = 102;
  h.ppid = 1;
  h.state = 'S';
  h.uid = 4'000'000'000u;
  h.start_ticks = std::numeric_limits<std::uint64_t>::max();
  h.comm = "pt_data_worker";
  h.devices = {"/dev/nvidia0", "/dev/nvidiactl"};
  h.nspid = {102, 9};
  h.in_job = true;
  h.orphan = true;
  h.zombie = true;
  d.holders_after = std::vector<DeviceHolder>{h};
  d.holders_unavailable = "not asked";
  ProbeReport r;
  r.unavailable = "partly";
  GpuProbe p;
  p.ordinal = 0;
  p.index = 1;
  p.uuid = "GPU-77aa";
  p.pci_bus_id = "00000000:3C:00.0";
  p.name = "NVIDIA H100";
  p.status = ProbeStatus::TimedOut;
  p.error = "cudaErrorMemoryAllocation: out of memory";
  p.free = 0;
  p.total = 80LL << 30;
  p.elapsed = 2'000'000'017;
  r.gpus = {p};
  d.probe_after = r;
  return d;
}

}  // namespace aftermath::testing_full
