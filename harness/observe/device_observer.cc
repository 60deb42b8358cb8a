#include "harness/observe/device_observer.h"

#include <algorithm>

#include "harness/observe/cuda_devices.h"

namespace aftermath {

GpuSample to_gpu_sample(Nanos t, const NvmlDeviceInfo& d, const ProcessIndex& procs,
                        const JobRef& job, int nvml_pid_level) {
  GpuSample s;
  s.t = t;
  s.index = static_cast<int>(d.index);
  s.total = static_cast<std::int64_t>(d.total);
  s.used = static_cast<std::int64_t>(d.used);
  s.free = static_cast<std::int64_t>(d.free);
  s.error = d.error;
  for (const auto& np : d.processes) {
    GpuProcess g;
    g.nvml_pid = static_cast<int>(np.pid);
    g.used_bytes = np.used_bytes ? static_cast<std::int64_t>(*np.used_bytes) : -1;
    if (const ProcInfo* p = procs.find_at_level(g.nvml_pid, nvml_pid_level)) {
      g.pid = p->pid;
      g.nspid = p->nspid;
      g.comm = p->comm;
      g.ppid = p->ppid;
      g.state = p->state;
      g.in_job = job.contains(*p);
      g.orphan = job.orphan(*p);
    }
    s.processes.push_back(std::move(g));
  }
  return s;
}

DeviceObserver::DeviceObserver(Nvml* nvml, ProbeRunner* probe, DeviceObserverOptions options)
    : nvml_(nvml), probe_(probe), opts_(std::move(options)), proc_(opts_.proc_root) {}

std::vector<GpuSample> DeviceObserver::snapshot(Nanos t, const JobRef& job,
                                                const std::vector<NvmlDeviceInfo>& devices) {
  bool any_process = false;
  for (const auto& d : devices) any_process |= !d.processes.empty();
  // Level 0 needs only the processes NVML named; deeper levels need the
  // whole table to find a pid among the NSpid chains.
  ProcessIndex procs;
  if (any_process && opts_.nvml_pid_level > 0) {
    procs = ProcessIndex::scan(proc_);
  } else {
    for (const auto& d : devices)
      for (const auto& p : d.processes)
        if (auto info = read_proc_info(proc_, static_cast<int>(p.pid))) procs.add(std::move(*info));
  }
  std::vector<GpuSample> out;
  for (const auto& d : devices) {
    out.push_back(to_gpu_sample(t, d, procs, job, opts_.nvml_pid_level));
    if (!d.error.empty()) notes_.push_back("GPU " + std::to_string(d.index) + ": " + d.error);
  }
  return out;
}

bool DeviceObserver::start(Nanos t, const JobRef& job) {
  if (!nvml_) {
    tl_.unavailable = "no NVML";
    return false;
  }
  std::string why = nvml_->init();
  if (!why.empty()) {
    tl_.unavailable = why;
    return false;
  }
  auto devices = nvml_->devices();
  tl_.baseline = snapshot(t, job, devices);
  auto devices_ok = std::any_of(tl_.baseline.begin(), tl_.baseline.end(),
                                [](const GpuSample& s) { return s.error.empty(); });
  if (tl_.baseline.empty() || !devices_ok) {
    tl_.unavailable = tl_.baseline.empty() ? "NVML sees no GPU"
                                           : "every GPU query failed: " + tl_.baseline[0].error;
    tl_.baseline.clear();
    return false;
  }
  for (const auto& d : devices) {
    if (!d.error.empty() && d.uuid.empty()) continue;
    GpuInfo g;
    g.index = static_cast<int>(d.index);
    g.uuid = d.uuid;
    g.pci_bus_id = d.pci_bus_id;
    g.name = d.name;
    g.total = static_cast<std::int64_t>(d.total);
    tl_.gpus.push_back(std::move(g));
  }
  return true;
}

void DeviceObserver::set_job_environment(std::optional<std::string> visible,
                                         std::optional<std::string> order) {
  if (!available()) return;
  std::vector<GpuIdentity> ids;
  for (const auto& g : tl_.gpus) ids.push_back({g.index, g.uuid, g.pci_bus_id, g.name, 0});
  auto m = map_cuda_visible(
      ids, visible ? std::optional<std::string_view>(*visible) : std::nullopt,
      parse_cuda_device_order(order ? std::optional<std::string_view>(*order) : std::nullopt));
  tl_.job_gpus = m.nvml_index;
  if (!m.note.empty()) notes_.push_back(m.note);
}

void DeviceObserver::sample(Nanos t, const JobRef& job) {
  if (!available()) return;
  for (auto& s : snapshot(t, job, nvml_->devices())) tl_.samples.push_back(std::move(s));
}

void DeviceObserver::finish(Nanos t, const JobRef& job) {
  sample(t, job);
  auto pattern = PathPattern::parse(opts_.device_pattern);
  if (!pattern) {
    tl_.holders_unavailable = pattern.error().what;
  } else {
    int unreadable = 0;
    auto procs = ProcessIndex::scan(proc_);
    tl_.holders_after = find_device_holders(procs, opts_.proc_root, *pattern, job, &unreadable);
    if (unreadable)
      notes_.push_back(std::to_string(unreadable) +
                       " process(es) could not be inspected for device files (not ours)");
  }
  if (probe_ && available()) tl_.probe_after = probe_->run(tl_.gpus);
}

}  // namespace aftermath
