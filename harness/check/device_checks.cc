#include "harness/check/device_checks.h"

#include <algorithm>
#include <map>
#include <set>

#include "harness/core/device_json.h"

namespace aftermath {

using nlohmann::json;

namespace {

CheckResult named(const char* name) {
  CheckResult r;
  r.name = name;
  return r;
}

CheckResult skipped(const char* name, std::string why) {
  CheckResult r = named(name);
  r.status = CheckStatus::Skipped;
  r.reason = std::move(why);
  return r;
}

std::string no_driver(const DeviceTimeline& tl) { return "no GPU to check: " + tl.unavailable; }

// The GPUs a check judges: the job's, or every GPU when the job's are unknown.
std::vector<int> judged_gpus(const DeviceTimeline& tl) {
  if (!tl.job_gpus.empty()) return tl.job_gpus;
  std::vector<int> out;
  for (const auto& g : tl.gpus) out.push_back(g.index);
  if (out.empty())
    for (const auto& b : tl.baseline) out.push_back(b.index);
  return out;
}

std::string first_items(const std::vector<std::string>& items, size_t n) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < n; ++i) s += (i ? "; " : "") + items[i];
  if (items.size() > n) s += "; ... (" + std::to_string(items.size()) + " in all)";
  return s;
}

int job_pid(const std::vector<int>& nspid, int pid) { return nspid.empty() ? pid : nspid.back(); }

std::string describe(const GpuProcess& p) {
  std::string s = "pid " + std::to_string(p.pid ? p.pid : p.nvml_pid);
  if (!p.comm.empty()) s += " (" + p.comm + ")";
  if (p.nspid.size() > 1) s += " [pid " + std::to_string(p.nspid.back()) + " in its namespace]";
  if (!p.pid) s += " [not visible here]";
  return s;
}

json process_json(const GpuProcess& p) {
  return json{{"nvml_pid", p.nvml_pid},
              {"pid", p.pid},
              {"ns_pid", job_pid(p.nspid, p.pid)},
              {"comm", p.comm},
              {"state", p.state ? std::string(1, p.state) : std::string()},
              {"used_bytes", p.used_bytes},
              {"in_job", p.in_job},
              {"orphan", p.orphan}};
}

}  // namespace

// Long: per GPU, baseline, release time and holders are judged together and reported together.
CheckResult device_memory_released(const DeviceTimeline& tl, const DeviceMemoryParams& params) {
  const char* kName = kDeviceMemoryReleased;
  if (!tl.unavailable.empty()) return skipped(kName, no_driver(tl));
  if (tl.baseline.empty()) return skipped(kName, "no device baseline was taken before the job");
  CheckResult r = named(kName);
  r.measured["tolerance_bytes"] = params.tolerance_bytes;
  r.measured["deadline_ms"] = to_ms(params.deadline);
  json gpus = json::array();
  std::vector<std::string> bad, errors;
  double max_release_ms = 0;
  for (int index : judged_gpus(tl)) {
    const GpuSample* base = nullptr;
    for (const auto& b : tl.baseline)
      if (b.index == index && b.error.empty()) base = &b;
    if (!base) {
      errors.push_back("GPU " + std::to_string(index) + ": no baseline reading");
      continue;
    }
    std::vector<const GpuSample*> after;
    std::int64_t peak = base->used;
    for (const auto& s : tl.samples) {
      if (s.index != index || !s.error.empty()) continue;
      peak = std::max(peak, s.used);
      if (s.t >= tl.origin) after.push_back(&s);
    }
    if (after.empty()) {
      errors.push_back("GPU " + std::to_string(index) + ": no reading after the job's end");
      continue;
    }
    std::int64_t limit = base->used + params.tolerance_bytes;
    // Released at the first reading from which every later one is within the limit.
    size_t k = after.size();
    while (k > 0 && after[k - 1]->used <= limit) --k;
    bool released = k < after.size();
    const GpuSample& last = *after.back();
    json g{{"index", index},
           {"baseline_used_bytes", base->used},
           {"peak_used_bytes", peak},
           {"final_used_bytes", last.used},
           {"excess_bytes", last.used - base->used},
           {"released", released}};
    std::optional<double> release_ms;
    if (released) {
      release_ms = to_ms(std::max<Nanos>(0, after[k]->t - tl.origin));
      max_release_ms = std::max(max_release_ms, *release_ms);
    }
    g["release_ms"] = release_ms ? json(*release_ms) : json(nullptr);
    // Who held memory in the last reading over the limit: the job's processes
    // and any process that was not there at the baseline.
    const GpuSample& held = released ? *after[k > 0 ? k - 1 : 0] : last;
    std::set<int> at_baseline;
    for (const auto& p : base->processes) at_baseline.insert(p.nvml_pid);
    json holders = json::array();
    std::vector<std::string> who;
    if (!released || (k > 0 && release_ms && *release_ms > to_ms(params.deadline))) {
      for (const auto& p : held.processes) {
        if (!p.in_job && at_baseline.count(p.nvml_pid)) continue;
        holders.push_back(process_json(p));
        who.push_back(describe(p) + ": " + format_bytes(p.used_bytes));
      }
    }
    g["holders"] = holders;
    gpus.push_back(g);
    std::string gpu = "GPU " + std::to_string(index);
    if (!released) {
      bad.push_back(gpu + ": " + format_bytes(last.used - base->used) + " above its baseline at " +
                    "the last reading" + (who.empty() ? "" : ", held by " + first_items(who, 3)));
    } else if (*release_ms > to_ms(params.deadline)) {
      bad.push_back(gpu + ": released " + format_duration(after[k]->t - tl.origin) +
                    " after the job's end (deadline " + format_duration(params.deadline) + ")" +
                    (who.empty() ? "" : "; held until then by " + first_items(who, 3)));
    }
  }
  r.measured["gpus"] = gpus;
  r.measured["max_release_ms"] = max_release_ms;
  if (!errors.empty()) {
    r.status = CheckStatus::Error;
    r.reason = first_items(errors, 3);
  } else if (!bad.empty()) {
    r.status = CheckStatus::Fail;
    r.reason = first_items(bad, 3);
  } else {
    r.status = CheckStatus::Pass;
    r.reason = std::to_string(gpus.size()) + " GPU(s) back to baseline (within " +
               format_bytes(params.tolerance_bytes) + ") " +
               format_duration(static_cast<Nanos>(max_release_ms * kMilli)) +
               " after the job's end";
  }
  return r;
}

CheckResult no_device_holders(const DeviceTimeline& tl) {
  const char* kName = kNoDeviceHolders;
  if (!tl.unavailable.empty()) return skipped(kName, no_driver(tl));
  if (!tl.holders_after)
    return skipped(kName, tl.holders_unavailable.empty() ? "no device-file scan after the job"
                                                         : tl.holders_unavailable);
  CheckResult r = named(kName);
  json bad = json::array(), others = json::array();
  std::vector<std::string> names;
  for (const auto& h : *tl.holders_after) {
    json j{{"source", "fd"},       {"pid", h.pid},
           {"ppid", h.ppid},       {"ns_pid", job_pid(h.nspid, h.pid)},
           {"comm", h.comm},       {"state", h.state ? std::string(1, h.state) : std::string()},
           {"devices", h.devices}, {"in_job", h.in_job},
           {"orphan", h.orphan},   {"zombie", h.zombie}};
    if (h.in_job || h.orphan) {
      bad.push_back(j);
      std::string devs;
      for (size_t i = 0; i < h.devices.size() && i < 3; ++i) devs += (i ? "," : "") + h.devices[i];
      names.push_back("pid " + std::to_string(h.pid) + " (" + h.comm + ", " +
                      (h.in_job ? "job" : "orphan") + (h.zombie ? ", zombie" : "") + ") holds " +
                      devs);
    } else {
      others.push_back(j);
    }
  }
  // The driver's view: job processes that still own GPU memory at the last reading.
  std::map<int, const GpuSample*> last;
  for (const auto& s : tl.samples) last[s.index] = &s;
  for (const auto& [index, s] : last) {
    for (const auto& p : s->processes) {
      if (!p.in_job && !p.orphan) continue;
      json j = process_json(p);
      j["source"] = "nvml";
      j["gpu"] = index;
      bad.push_back(j);
      names.push_back(describe(p) + " holds " + format_bytes(p.used_bytes) + " on GPU " +
                      std::to_string(index));
    }
  }
  r.measured["holders"] = bad;
  r.measured["other_holders"] = others;
  if (bad.empty()) {
    r.status = CheckStatus::Pass;
    r.reason = "no job process holds a device file" +
               (others.empty() ? std::string()
                               : " (" + std::to_string(others.size()) + " other process(es) do)");
  } else {
    r.status = CheckStatus::Fail;
    r.reason = std::to_string(bad.size()) + " holder(s) left by the job: " + first_items(names, 3);
  }
  return r;
}

CheckResult device_alloc_probe(const DeviceTimeline& tl) {
  const char* kName = kDeviceAllocProbe;
  if (!tl.unavailable.empty()) return skipped(kName, no_driver(tl));
  if (!tl.probe_after) return skipped(kName, "the allocation probe did not run");
  if (!tl.probe_after->unavailable.empty())
    return skipped(kName, "nothing to probe: " + tl.probe_after->unavailable);
  CheckResult r = named(kName);
  auto judged = judged_gpus(tl);
  std::set<int> wanted(judged.begin(), judged.end());
  json gpus = json::array();
  std::vector<std::string> bad;
  std::set<int> seen;
  for (const auto& p : tl.probe_after->gpus) {
    // A result not tied to an NVML index (one child for every GPU) is judged too.
    if (p.index >= 0 && !wanted.count(p.index)) continue;
    if (p.index >= 0) seen.insert(p.index);
    gpus.push_back(to_json(p));
    if (p.status != ProbeStatus::Ok)
      bad.push_back("GPU " + std::to_string(p.index >= 0 ? p.index : p.ordinal) + " " +
                    std::string(to_string(p.status)) + (p.error.empty() ? "" : ": " + p.error));
  }
  for (int index : judged)
    if (!seen.count(index) && std::none_of(tl.probe_after->gpus.begin(), tl.probe_after->gpus.end(),
                                           [](const GpuProbe& p) { return p.index < 0; }))
      bad.push_back("GPU " + std::to_string(index) + ": no probe result");
  r.measured["gpus"] = gpus;
  if (gpus.empty() && bad.empty()) {
    r.status = CheckStatus::Error;
    r.reason = "the probe reported no GPU";
  } else if (!bad.empty()) {
    r.status = CheckStatus::Fail;
    r.reason = first_items(bad, 3);
  } else {
    r.status = CheckStatus::Pass;
    r.reason = std::to_string(gpus.size()) + " GPU(s) allocate after the job";
  }
  return r;
}

const DeviceMemoryParams& device_memory_params(const Scenario& sc) {
  return check_params<DeviceMemoryParams>(sc);
}

CheckResult run_device_check(const std::string& name, const DeviceTimeline& tl,
                             const DeviceMemoryParams& params) {
  CheckResult r;
  r.name = name;
  r.status = CheckStatus::Error;
  try {
    if (name == kDeviceMemoryReleased) return device_memory_released(tl, params);
    if (name == kNoDeviceHolders) return no_device_holders(tl);
    if (name == kDeviceAllocProbe) return device_alloc_probe(tl);
    r.reason = "unknown device check '" + name + "'";
  } catch (const std::exception& e) {
    r.reason = std::string("the check threw: ") + e.what();
  }
  return r;
}

}  // namespace aftermath
