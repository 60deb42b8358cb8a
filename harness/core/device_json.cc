#include "harness/core/device_json.h"

#include <map>

#include "harness/core/fields_json.h"

namespace aftermath {

using nlohmann::json;

namespace {
double ms(Nanos t) { return static_cast<double>(t) / 1e6; }
}  // namespace

json to_json(const GpuProbe& p) { return fields_json::shown_value(p); }

json to_json(const GpuProcess& p) { return fields_json::shown_value(p); }

json to_json(const DeviceHolder& h) { return fields_json::shown_value(h); }

json to_json(const DeviceTimeline& tl) {
  json j = {{"unavailable", tl.unavailable}};
  if (!tl.unavailable.empty()) return j;
  json gpus = json::array();
  for (const auto& g : tl.gpus) gpus.push_back(fields_json::shown_value(g));
  j["gpus"] = std::move(gpus);
  j["job_gpus"] = tl.job_gpus;
  j["origin_ms"] = ms(tl.origin);
  auto sample = [](const GpuSample& s) {
    json o = {
        {"t_ms", ms(s.t)}, {"index", s.index}, {"used_bytes", s.used}, {"free_bytes", s.free}};
    if (!s.error.empty()) o["error"] = s.error;
    return o;
  };
  json baseline = json::array();
  for (const auto& s : tl.baseline) {
    json b = sample(s);
    json procs = json::array();
    for (const auto& p : s.processes) procs.push_back(to_json(p));
    b["processes"] = std::move(procs);
    baseline.push_back(std::move(b));
  }
  j["baseline"] = std::move(baseline);
  json samples = json::array();
  std::map<int, const GpuSample*> last;
  for (const auto& s : tl.samples) {
    samples.push_back(sample(s));
    last[s.index] = &s;
  }
  j["samples"] = std::move(samples);
  json last_procs = json::object();
  for (const auto& [index, s] : last) {
    json procs = json::array();
    for (const auto& p : s->processes) procs.push_back(to_json(p));
    last_procs[std::to_string(index)] = std::move(procs);
  }
  j["last_processes"] = std::move(last_procs);
  if (tl.holders_after) {
    json hs = json::array();
    for (const auto& h : *tl.holders_after) hs.push_back(to_json(h));
    j["holders_after"] = std::move(hs);
  } else {
    j["holders_after"] = nullptr;
    j["holders_unavailable"] = tl.holders_unavailable;
  }
  if (tl.probe_after) {
    json ps = json::array();
    for (const auto& p : tl.probe_after->gpus) ps.push_back(to_json(p));
    j["probe_after"] = {{"unavailable", tl.probe_after->unavailable}, {"gpus", std::move(ps)}};
  } else {
    j["probe_after"] = nullptr;
  }
  return j;
}

}  // namespace aftermath
