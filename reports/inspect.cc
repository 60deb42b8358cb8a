#include "reports/inspect.h"

#include <algorithm>
#include <cstdio>

#include "harness/core/device_json.h"

namespace aftermath {

using nlohmann::json;

namespace {

std::string who(int pid, const std::string& comm, unsigned uid) {
  return "pid " + std::to_string(pid) + " (" + comm + ", uid " + std::to_string(uid) + ")";
}

}  // namespace

namespace {

json gpu_json(const HygieneGpu& g) {
  json procs = json::array();
  for (const auto& p : g.processes)
    procs.push_back(json{{"nvml_pid", p.nvml_pid},
                         {"pid", p.pid},
                         {"nspid", p.nspid},
                         {"comm", p.comm},
                         {"used_bytes", p.used_bytes},
                         {"orphan", p.orphan}});
  return json{{"index", g.info.index},
              {"uuid", g.info.uuid},
              {"pci_bus_id", g.info.pci_bus_id},
              {"name", g.info.name},
              {"total_bytes", g.info.total},
              {"used_bytes", g.used},
              {"free_bytes", g.free},
              {"processes", procs},
              {"probe", g.probe ? to_json(*g.probe) : json(nullptr)},
              {"error", g.error}};
}

json process_json(const HygieneProcess& p) {
  return json{{"pid", p.proc.pid},
              {"ppid", p.proc.ppid},
              {"state", std::string(1, p.proc.state)},
              {"uid", p.proc.uid},
              {"comm", p.proc.comm},
              {"cmdline", p.cmdline},
              {"nspid", p.proc.nspid},
              {"devices", p.devices},
              {"shm", p.shm},
              {"gpus", p.gpus},
              {"gpu_bytes", p.gpu_bytes},
              {"orphan", p.orphan},
              {"zombie", p.zombie()},
              {"daemon", p.daemon},
              {"leftover", p.leftover},
              {"leftover_root", p.leftover_root},
              {"why", p.why}};
}

json shm_json(const HygieneShm& s) {
  return json{{"name", s.name},
              {"bytes", s.bytes},
              {"allocated_bytes", s.allocated},
              {"uid", s.uid},
              {"age_ms", to_ms(s.age)},
              {"creator_pid", s.creator_pid ? json(*s.creator_pid) : json(nullptr)},
              {"creator", std::string(to_string(s.creator))},
              {"mapped_by", s.mapped_by},
              {"held_by", s.held_by},
              {"leftover", s.leftover},
              {"freed_by_reap", s.freed_by_reap},
              {"why", s.why}};
}

json tmp_json(const HygieneTmp& t) {
  return json{{"name", t.name},
              {"kind", std::string(to_string(t.kind))},
              {"bytes", t.bytes},
              {"bytes_partial", t.bytes_partial},
              {"uid", t.uid},
              {"age_ms", to_ms(t.age)},
              {"held_by", t.held_by},
              {"bound", t.bound},
              {"maker_gone", t.maker_gone},
              {"leftover", t.leftover},
              {"freed_by_reap", t.freed_by_reap},
              {"why", t.why}};
}

json uninspected_json(const Uninspected& u) {
  return json{{"pid", u.pid}, {"comm", u.comm},       {"uid", u.uid},
              {"why", u.why}, {"matters", u.matters}, {"matters_why", u.matters_why}};
}

json cgroup_json(const HygieneCgroup& g) {
  return json{{"dir", g.dir},         {"owner", g.owner}, {"owner_alive", g.owner_alive},
              {"members", g.members}, {"uid", g.uid},     {"leftover", g.leftover},
              {"why", g.why}};
}

// Each element of `items` as `one` renders it.
template <typename T, typename F>
json array_of(const std::vector<T>& items, F one) {
  json out = json::array();
  for (const auto& item : items) out.push_back(one(item));
  return out;
}

}  // namespace

nlohmann::json inspect_json(const InspectReport& r) {
  return json{{"clean", r.clean()},
              {"problems", r.problems},
              {"notes", r.notes},
              {"gpu_unavailable", r.gpu_unavailable},
              {"probe_unavailable", r.probe_unavailable},
              {"driver_version", r.driver_version},
              {"gpus", array_of(r.gpus, gpu_json)},
              {"unmapped_probes",
               array_of(r.unmapped_probes, [](const GpuProbe& p) { return to_json(p); })},
              {"processes", array_of(r.processes, process_json)},
              {"shm", array_of(r.shm, shm_json)},
              {"tmp", array_of(r.tmp, tmp_json)},
              {"cgroups", array_of(r.cgroups, cgroup_json)},
              {"unreadable_processes", r.unreadable_processes},
              {"uninspected", array_of(r.uninspected, uninspected_json)},
              {"roots", json{{"proc", r.proc_root},
                             {"shm", r.shm_dir},
                             {"tmp", r.tmp_dir},
                             {"device_pattern", r.device_pattern},
                             {"cgroup", r.cgroup_dir}}}};
}

namespace {

// The table's text, one printf-formatted line at a time.
struct TableText {
  std::string out;
  template <typename... Args>
  void add(const char* fmt, Args... args) {
    char line[512];
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  }
};

std::string cut(std::string s, size_t n) { return s.size() > n ? s.substr(0, n - 3) + "..." : s; }

std::string probe_text(const std::optional<GpuProbe>& p) {
  if (!p) return "-";
  if (p->status == ProbeStatus::Ok)
    return "ok (" + format_bytes(p->free) + " free, " + format_duration(p->elapsed) + ")";
  return std::string(to_string(p->status)) + ": " + cut(p->error, 60);
}

void gpus_table(const InspectReport& r, TableText& t) {
  t.out += "GPUs";
  if (!r.driver_version.empty()) t.out += " (driver " + r.driver_version + ")";
  t.out += "\n";
  if (!r.gpu_unavailable.empty()) {
    t.out += "  not inspected: " + r.gpu_unavailable + "\n";
  } else if (r.gpus.empty()) {
    t.out += "  none\n";
  } else {
    t.add("  %-4s %-24s %-17s %11s %11s %5s  %s\n", "idx", "name", "bus id", "used", "total",
          "procs", "probe");
    for (const auto& g : r.gpus)
      t.add("  %-4d %-24s %-17s %11s %11s %5zu  %s\n", g.info.index, cut(g.info.name, 24).c_str(),
            g.info.pci_bus_id.c_str(), format_bytes(g.used).c_str(),
            format_bytes(g.info.total).c_str(), g.processes.size(), probe_text(g.probe).c_str());
  }
  for (const auto& p : r.unmapped_probes)
    t.out += "  probe, CUDA device " + std::to_string(p.ordinal) + ": " + probe_text(p) + "\n";
  if (!r.probe_unavailable.empty()) t.out += "  probe: " + r.probe_unavailable + "\n";
}

void processes_table(const InspectReport& r, TableText& t) {
  t.out += "\nProcesses holding GPUs or /dev/shm (device files: " + r.device_pattern + ")\n";
  if (r.processes.empty()) {
    t.out += "  none\n";
    return;
  }
  t.add("  %-8s %-8s %-6s %-2s %-16s %-44s %s\n", "pid", "ppid", "uid", "st", "command", "holds",
        "verdict");
  for (const auto& p : r.processes) {
    std::string indent(static_cast<size_t>(std::min(p.depth, 4)) * 2, ' ');
    t.add("  %-8s %-8d %-6u %-2c %-16s %-44s %s%s\n", (indent + std::to_string(p.proc.pid)).c_str(),
          p.proc.ppid, p.proc.uid, p.proc.state, cut(p.proc.comm, 16).c_str(),
          cut(holdings(p), 44).c_str(), p.leftover || p.zombie() ? "LEFTOVER " : "", p.why.c_str());
  }
}

void shm_table(const InspectReport& r, TableText& t) {
  t.out += "\n" + r.shm_dir + " (torch_*, sem.*)\n";
  if (r.shm.empty()) {
    t.out += "  none\n";
    return;
  }
  t.add("  %-36s %10s %8s %-18s %-12s %s\n", "name", "size", "age", "creator", "used by",
        "verdict");
  for (const auto& s : r.shm) {
    std::string creator = s.creator_pid ? std::to_string(*s.creator_pid) + " (" +
                                              std::string(to_string(s.creator)) + ")"
                                        : "-";
    std::vector<int> users = s.mapped_by;
    users.insert(users.end(), s.held_by.begin(), s.held_by.end());
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    t.add("  %-36s %10s %8s %-18s %-12s %s%s\n", cut(s.name, 36).c_str(),
          format_bytes(s.bytes).c_str(), format_age(s.age).c_str(), creator.c_str(),
          users.empty() ? "-" : cut(join_ints(users), 12).c_str(), s.leftover ? "LEFTOVER " : "",
          s.why.c_str());
  }
}

void tmp_table(const InspectReport& r, TableText& t) {
  if (r.tmp_dir.empty()) return;
  t.out += "\n" + r.tmp_dir + " (pymp-*, torch-shm-dir-*, torchelastic_*, aftermath-torchrun-*)\n";
  if (r.tmp.empty()) {
    t.out += "  none\n";
    return;
  }
  t.add("  %-36s %-13s %10s %8s %-12s %s\n", "name", "kind", "size", "age", "held by", "verdict");
  for (const auto& e : r.tmp) {
    std::string held = !e.held_by.empty() ? join_ints(e.held_by)
                       : !e.bound.empty() ? "socket"
                                          : "-";
    t.add("  %-36s %-13s %10s %8s %-12s %s%s\n", cut(e.name, 36).c_str(),
          std::string(to_string(e.kind)).c_str(),
          (format_bytes(e.bytes) + (e.bytes_partial ? "+" : "")).c_str(), format_age(e.age).c_str(),
          cut(held, 12).c_str(), e.leftover ? "LEFTOVER " : "", e.why.c_str());
  }
}

// Fault cgroups, notes, and the verdict with its problems.
void closing_table(const InspectReport& r, TableText& t) {
  if (!r.cgroups.empty()) {
    t.out += "\nFault cgroups in " + r.cgroup_dir + "\n";
    for (const auto& g : r.cgroups)
      t.out += "  " + g.dir.substr(g.dir.rfind('/') + 1) + "  " + (g.leftover ? "LEFTOVER " : "") +
               g.why + "\n";
  }
  // The GPU section above already says why the GPUs or the probe were not
  // looked at: each reason once.
  std::vector<std::string> notes;
  for (const auto& n : r.notes) {
    bool said = (!r.gpu_unavailable.empty() && n.find(r.gpu_unavailable) != std::string::npos) ||
                (!r.probe_unavailable.empty() && n.find(r.probe_unavailable) != std::string::npos);
    if (!said) notes.push_back(n);
  }
  if (!notes.empty()) {
    t.out += "\nNotes\n";
    for (const auto& n : notes) t.out += "  - " + n + "\n";
  }
  t.out += "\n";
  if (r.clean()) {
    t.out += "CLEAN: nothing left behind\n";
  } else {
    t.out += "NOT CLEAN: " + std::to_string(r.problems.size()) + " problem(s)\n";
    for (const auto& p : r.problems) t.out += "  - " + p + "\n";
  }
}

}  // namespace

std::string inspect_table(const InspectReport& r) {
  TableText t;
  gpus_table(r, t);
  processes_table(r, t);
  shm_table(r, t);
  tmp_table(r, t);
  closing_table(r, t);
  return t.out;
}

std::string format_reap_plan(const ReapPlan& plan, bool executed) {
  std::string out;
  if (plan.steps.empty())
    out += executed ? "Nothing was done: nothing to reap.\n" : "Nothing to reap.\n";
  if (!plan.steps.empty()) out += executed ? "Done:\n" : "Plan:\n";
  for (const auto& s : plan.steps) {
    std::string what;
    if (s.kind == ReapStep::Kind::Terminate)
      what = std::string(static_cast<size_t>(std::min(s.depth, 4)) * 2, ' ') + "terminate " +
             who(s.pid, s.comm, s.uid) + " (SIGTERM, then SIGKILL)";
    else if (s.kind == ReapStep::Kind::RemoveCgroup)
      what =
          "remove cgroup " + s.name + (s.after_processes ? " (once its processes are gone)" : "");
    else if (s.kind == ReapStep::Kind::RemoveTmp)
      what = "remove " + s.name + " and everything in it" +
             (s.after_processes ? " (once its holders are gone)" : "");
    else
      what =
          std::string("remove ") + s.name + (s.after_processes ? " (once its users are gone)" : "");
    out += "  " + what + "\n      why: " + s.why + "\n";
    if (executed)
      out += "      -> " + (s.result.empty() ? std::string("not attempted") : s.result) + "\n";
  }
  if (!plan.untouched.empty() || !plan.in_use.empty()) {
    out += "Left alone:\n";
    for (const auto& u : plan.untouched) out += "  " + u + "\n";
    if (!plan.in_use.empty())
      out += "  " + std::to_string(plan.in_use.size()) + " process(es) in use: no leftover (" +
             (executed ? "each listed below" : "each listed above") + ")\n";
  }
  return out;
}

nlohmann::json reap_plan_json(const ReapPlan& plan) {
  json steps = json::array();
  for (const auto& s : plan.steps) {
    const char* kind = s.kind == ReapStep::Kind::Terminate      ? "terminate"
                       : s.kind == ReapStep::Kind::RemoveCgroup ? "remove_cgroup"
                       : s.kind == ReapStep::Kind::RemoveTmp    ? "remove_tmp"
                                                                : "remove";
    json j{{"kind", kind}, {"why", s.why}, {"result", s.result}, {"done", s.done}};
    if (s.kind == ReapStep::Kind::Terminate) {
      j["pid"] = s.pid;
      j["comm"] = s.comm;
      j["uid"] = s.uid;
      j["depth"] = s.depth;
    } else {
      j["name"] = s.name;
      j["after_processes"] = s.after_processes;
    }
    steps.push_back(j);
  }
  json untouched = plan.untouched;
  for (const auto& u : plan.in_use) untouched.push_back(u);
  return json{{"steps", steps}, {"untouched", untouched}};
}

}  // namespace aftermath
