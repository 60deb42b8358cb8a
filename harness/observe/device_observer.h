// The device observer: records a DeviceTimeline over one run, like the /proc
// and /dev/shm observers record the Timeline. It never judges (the checks in
// harness/check/device_checks.h do). The supervisor drives it:
//
//   DeviceObserver dev(&nvml, &probe, {.proc_root = ...});
//   dev.start(t0, job);                      // before launch: the baseline
//   dev.set_job_environment(cvd, order);     // which GPUs the job sees
//   every tick: dev.sample(t, job);          // memory + processes per GPU
//   dev.set_origin(top_exit_or_first_fault);
//   after teardown: dev.finish(t, job);      // last sample, holder scan, probe
//   DeviceTimeline tl = dev.take();
//
// With no driver every call is a cheap no-op after start(), and the timeline
// says why (the checks then skip with that reason). Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/device.h"
#include "harness/observe/holders.h"
#include "harness/observe/nvml.h"
#include "harness/observe/probe.h"
#include "harness/observe/process_index.h"

namespace aftermath {

struct DeviceObserverOptions {
  std::string proc_root = "/proc";
  std::string device_pattern = std::string(kNvidiaDevicePattern);
  // The namespace level (below the proc root's) that NVML's pids are counted
  // in: 0 when the driver reports pids as this /proc names them (the host, or
  // a driver that translates into the caller's namespace).
  int nvml_pid_level = 0;
};

// NVML's view of one GPU, its processes found in `procs` and marked against
// the job. Pure given its inputs.
GpuSample to_gpu_sample(Nanos t, const NvmlDeviceInfo& d, const ProcessIndex& procs,
                        const JobRef& job, int nvml_pid_level);

class DeviceObserver {
 public:
  // `nvml` and `probe` are not owned and may be null: no NVML makes the
  // device side unavailable; no probe leaves probe_after empty.
  DeviceObserver(Nvml* nvml, ProbeRunner* probe, DeviceObserverOptions options = {});

  // Loads NVML and takes the baseline. False when the device side is
  // unavailable; timeline().unavailable says why.
  bool start(Nanos t, const JobRef& job);
  // The GPUs the job can see, from its CUDA_VISIBLE_DEVICES and
  // CUDA_DEVICE_ORDER (nullopt: unset). Call after start().
  void set_job_environment(std::optional<std::string> visible, std::optional<std::string> order);
  // One sample of every GPU.
  void sample(Nanos t, const JobRef& job);
  // Where release deadlines count from: the top process's exit, or the first fault.
  void set_origin(Nanos t) { tl_.origin = t; }
  // After teardown: a last sample, the device-file holder scan, the probe.
  void finish(Nanos t, const JobRef& job);

  bool available() const { return tl_.unavailable.empty(); }
  const DeviceTimeline& timeline() const { return tl_; }
  DeviceTimeline take() { return std::move(tl_); }
  // Notes for the run's timeline ("GPU 1 query failed: ...").
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::vector<GpuSample> snapshot(Nanos t, const JobRef& job,
                                  const std::vector<NvmlDeviceInfo>& devices);

  Nvml* nvml_;
  ProbeRunner* probe_;
  DeviceObserverOptions opts_;
  ProcReader proc_;
  DeviceTimeline tl_;
  std::vector<std::string> notes_;
};

}  // namespace aftermath
