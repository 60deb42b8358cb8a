// Device-side facts: GPUs as NVML reports them, processes holding device
// files, and allocation probes. Value types shared by the observers that record
// them (harness/observe) and the checks that judge them (harness/check); no I/O
// here, so a check's input can be written by hand in a test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "harness/core/fields.h"
#include "harness/core/types.h"

namespace aftermath {

// One GPU's identity, fixed for a run. `index` is NVML's index, which is not
// CUDA's ordinal: see harness/observe/cuda_devices.h.
struct GpuInfo {
  int index = 0;
  std::string uuid;        // "GPU-5f1ac2b4-..."
  std::string pci_bus_id;  // as NVML spells it: "00000000:3B:00.0"
  std::string name;
  std::int64_t total = 0;  // bytes

  static constexpr auto fields() {
    return std::tuple{field("index", &GpuInfo::index), field("uuid", &GpuInfo::uuid),
                      field("pci_bus_id", &GpuInfo::pci_bus_id), field("name", &GpuInfo::name),
                      field("total_bytes", &GpuInfo::total)};
  }
};

// One process's use of one GPU, as NVML reports it, mapped onto /proc.
struct GpuProcess {
  int nvml_pid = 0;        // the pid NVML reported (a host pid on most drivers)
  int pid = 0;             // the same process in the harness's PID namespace; 0: not found
  std::vector<int> nspid;  // its NSpid chain, outermost first; back() is its pid in the job
  std::string comm;
  int ppid = 0;
  char state = 0;                // /proc state letter; 0 when not found
  std::int64_t used_bytes = -1;  // -1: NVML could not tell (NVML_VALUE_NOT_AVAILABLE)
  bool in_job = false;
  bool orphan = false;  // re-parented to init or to the job's reaper

  static constexpr auto fields() {
    using P = GpuProcess;
    return std::tuple{field("nvml_pid", &P::nvml_pid),
                      field("pid", &P::pid),
                      field("nspid", &P::nspid),
                      field("comm", &P::comm),
                      field("ppid", &P::ppid),
                      field("state", &P::state),
                      field("used_bytes", &P::used_bytes),
                      field("in_job", &P::in_job),
                      field("orphan", &P::orphan)};
  }
};

// One GPU at one time.
struct GpuSample {
  Nanos t = 0;
  int index = 0;  // NVML index
  std::int64_t total = 0;
  std::int64_t used = 0;
  std::int64_t free = 0;
  std::vector<GpuProcess> processes;
  std::string error;  // non-empty: the query failed and the numbers mean nothing
};

// A process holding a device file open (what `fuser -v /dev/nvidia*` shows).
struct DeviceHolder {
  int pid = 0;  // in the scanned /proc's namespace
  int ppid = 0;
  char state = 0;
  unsigned uid = 0;
  std::uint64_t start_ticks = 0;  // with pid, identifies the process
  std::string comm;
  std::vector<std::string> devices;  // link targets, sorted, unique
  std::vector<int> nspid;
  bool in_job = false;
  bool orphan = false;  // ppid is init or the job's reaper
  bool zombie = false;

  static constexpr auto fields() {
    using H = DeviceHolder;
    return std::tuple{field("pid", &H::pid),
                      field("ppid", &H::ppid),
                      field("state", &H::state, Shown::WireOnly),
                      field("uid", &H::uid),
                      field("start_ticks", &H::start_ticks, Shown::WireOnly),
                      field("comm", &H::comm),
                      field("devices", &H::devices),
                      field("nspid", &H::nspid),
                      field("in_job", &H::in_job),
                      field("orphan", &H::orphan),
                      field("zombie", &H::zombie)};
  }
};

// How one GPU's allocation probe ended.
enum class ProbeStatus {
  Ok,           // selected the device, allocated one byte, read free/total memory
  Failed,       // a CUDA call failed (error holds CUDA's error name and string)
  TimedOut,     // no answer within the deadline: the probe was killed
  Unavailable,  // no CUDA runtime, no driver or no device: nothing to judge
  Error,        // the probe itself could not be run or answered nonsense
};
std::string_view to_string(ProbeStatus s);
std::optional<ProbeStatus> parse_probe_status(std::string_view s);

struct GpuProbe {
  int ordinal = -1;  // CUDA ordinal in the probe's own view; -1: not tied to a device
  int index = -1;    // NVML index, when known
  std::string uuid;
  std::string pci_bus_id;
  std::string name;
  ProbeStatus status = ProbeStatus::Error;
  std::string error;
  std::int64_t free = -1;  // bytes, from cudaMemGetInfo
  std::int64_t total = -1;
  Nanos elapsed = 0;  // the probe's wall time, start to answer (or to the kill)

  static constexpr auto fields() {
    using P = GpuProbe;
    return std::tuple{field("ordinal", &P::ordinal),
                      field("index", &P::index),
                      field("uuid", &P::uuid),
                      field("pci_bus_id", &P::pci_bus_id),
                      field("name", &P::name, Shown::WireOnly),
                      field("status", &P::status),
                      field("error", &P::error),
                      field("free_bytes", &P::free),
                      field("total_bytes", &P::total),
                      field("ms", &P::elapsed, Shown::Millis)};
  }
};

struct ProbeReport {
  std::string unavailable;  // non-empty: why nothing could be probed (no runtime, no driver)
  std::vector<GpuProbe> gpus;
};

// Everything the device checks judge, recorded over one run.
struct DeviceTimeline {
  std::string unavailable;  // non-empty: no driver / NVML, and why
  std::vector<GpuInfo> gpus;
  std::vector<int> job_gpus;        // NVML indices the job could see; empty: all of them
  std::vector<GpuSample> baseline;  // one per GPU, before the job started
  std::vector<GpuSample> samples;   // in time order, one per GPU per tick
  Nanos origin = 0;                 // release deadlines count from here (top exit / first fault)
  std::optional<std::vector<DeviceHolder>> holders_after;  // device-file scan after teardown
  std::string holders_unavailable;         // why there is no scan, when there is none
  std::optional<ProbeReport> probe_after;  // allocation probe after teardown
};

// "1.5 GiB", "512 MiB", "12 KiB", "17 B".
std::string format_bytes(std::int64_t bytes);
// "64MiB", "1.5GiB", "100MB", "4096" (bytes), "4096B"; a space before the unit
// is allowed. KiB/MiB/GiB/TiB are powers of 1024, kB/MB/GB/TB of 1000.
// nullopt on anything else.
std::optional<std::int64_t> parse_bytes(std::string_view text);

}  // namespace aftermath
