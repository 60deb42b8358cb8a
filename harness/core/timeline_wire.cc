#include "harness/core/timeline_wire.h"

#include <concepts>
#include <cstdint>
#include <utility>
#include <vector>

#include "harness/core/json_read.h"

namespace aftermath {

using nlohmann::json;

namespace {

using json_read::Integer;

// ---- Writing ------------------------------------------------------------

json to_wire(bool v) { return v; }
json to_wire(const std::string& v) { return v; }
template <Integer T>
json to_wire(T v) {
  return v;
}
// A /proc state letter reads as itself; any other byte as its value, so that
// no char is lost to UTF-8.
json to_wire(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  return static_cast<int>(static_cast<unsigned char>(c));
}
json to_wire(Role r) { return std::string(to_string(r)); }
json to_wire(HarnessPart p) { return std::string(to_string(p)); }
json to_wire(RunPhase p) { return std::string(to_string(p)); }
json to_wire(FaultAction a) { return std::string(to_string(a)); }
json to_wire(FaultMechanism m) { return std::string(to_string(m)); }
json to_wire(FaultStatus s) { return std::string(to_string(s)); }
json to_wire(ProbeStatus s) { return std::string(to_string(s)); }
json to_wire(JobContainment c) { return std::string(to_string(c)); }
json to_wire(ShmPlace p) { return std::string(to_string(p)); }
json to_wire(TmpKind k) { return std::string(to_string(k)); }
json to_wire(const Outcome& o);
json to_wire(const GpuSample& s);
template <HasFields S>
json to_wire(const S& s);
json to_wire(const ProbeReport& r);
template <typename T>
json to_wire(const std::vector<T>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(to_wire(x));
  return a;
}

// A field, unless it equals its default.
template <typename T>
void put(json& o, std::string_view key, const T& v, const T& fallback) {
  if (!(v == fallback)) o[std::string(key)] = to_wire(v);
}
// An optional, when engaged (even with an empty value inside).
template <typename T>
void put(json& o, std::string_view key, const std::optional<T>& v) {
  if (v) o[std::string(key)] = to_wire(*v);
}
// A list, when not empty.
template <typename T>
void put(json& o, std::string_view key, const std::vector<T>& v) {
  if (!v.empty()) o[std::string(key)] = to_wire(v);
}

json to_wire(const Outcome& o) {
  if (o.is_exited()) return json{{"kind", "exited"}, {"code", o.exit_code()}};
  json j = {{"kind", "killed"}, {"signal", o.signal()}};
  if (o.core_dumped()) j["core_dumped"] = true;
  return j;
}

template <typename T>
constexpr bool IsVector = false;
template <typename T>
constexpr bool IsVector<std::vector<T>> = true;

// Every listed field of a value, but a SignalName (the number travels),
// each left out where it equals its default; an optional, when engaged.
template <typename S>
void put_fields(json& o, const S& s) {
  static const S d{};
  for_each_field<S>([&](const auto& f) {
    if (f.shown == Shown::SignalName) return;
    const auto& v = s.*f.member;
    using M = std::remove_cvref_t<decltype(v)>;
    if constexpr (requires { v.has_value(); }) {
      put(o, f.key, v);
    } else if constexpr (IsVector<M>) {
      put(o, f.key, v);  // a list, when not empty
    } else {
      put(o, f.key, v, d.*f.member);
    }
  });
}

template <HasFields S>
json to_wire(const S& s) {
  json o = json::object();
  put_fields(o, s);
  return o;
}

json to_wire(const GpuSample& s) {
  static const GpuSample d;
  json o = json::object();
  put(o, "t", s.t, d.t);
  put(o, "index", s.index, d.index);
  put(o, "total", s.total, d.total);
  put(o, "used", s.used, d.used);
  put(o, "free", s.free, d.free);
  put(o, "processes", s.processes);
  put(o, "error", s.error, d.error);
  return o;
}

json to_wire(const ProbeReport& r) {
  json o = json::object();
  put(o, "unavailable", r.unavailable, std::string());
  put(o, "gpus", r.gpus);
  return o;
}

// ---- Reading ------------------------------------------------------------
//
// The readers below unwind with a json_read::ReadError at the first bad
// field; every public entry point catches it (and anything nlohmann might
// still throw) and returns it as an Error, so nothing escapes to the caller.

using json_read::fail;
using json_read::ReadError;
using json_read::shown;
using json_read::wrong_type;

using json_read::from;

void from(const json& v, const std::string& path, char& out) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() != 1) fail(path, "should be one character, not " + shown(s));
    out = s[0];
    return;
  }
  if (!v.is_number_integer()) wrong_type(path, "a character", v);
  const int byte = json_read::integer<int>(v, path);
  if (byte < 0 || byte > 255) fail(path, "is out of range: " + std::to_string(byte));
  out = static_cast<char>(static_cast<unsigned char>(byte));
}
void from(const json& v, const std::string& path, GpuSample& out);
template <HasFields S>
void from(const json& v, const std::string& path, S& out);
void from(const json& v, const std::string& path, ProbeReport& out);
void from(const json& v, const std::string& path, Observation& out);
void from(const json& v, const std::string& path, RunFacts& out);
void from(const json& v, const std::string& path, DeviceTimeline& out);
void from(const json& v, const std::string& path, Timeline& out);
// The wire's values, for the shared readers (json_read.h).
struct Wire {
  template <typename T>
  static void one(const json& v, const std::string& path, T&& out) {
    from(v, path, std::forward<T>(out));
  }
};
using Fields = json_read::Fields<Wire>;

// Every listed field there is; the rest keep their defaults.
template <typename S>
void read_fields(const Fields& f, S& out) {
  for_each_field<S>([&](const auto& field) {
    if (field.shown == Shown::SignalName) return;
    if (field.required)
      f.need(field.key, out.*field.member);
    else
      f.read(field.key, out.*field.member);
  });
}

template <HasFields S>
void from(const json& v, const std::string& path, S& out) {
  read_fields(Fields(v, path), out);
}

void from(const json& v, const std::string& path, GpuSample& out) {
  Fields f(v, path);
  f.read("t", out.t);
  f.read("index", out.index);
  f.read("total", out.total);
  f.read("used", out.used);
  f.read("free", out.free);
  f.read("processes", out.processes);
  f.read("error", out.error);
}

void from(const json& v, const std::string& path, ProbeReport& out) {
  Fields f(v, path);
  f.read("unavailable", out.unavailable);
  f.read("gpus", out.gpus);
}

void from(const json& v, const std::string& path, Observation& out) {
  Fields f(v, path);
  f.need("t", out.t);
  std::string kind;
  f.need("kind", kind);
  f.read("node", out.node);
  const bool known = for_each_kind([&]<typename P>(std::type_identity<P>) {
    if (P::word != kind) return false;
    P p{};
    read_fields(f, p);
    out.what = std::move(p);
    return true;
  });
  if (!known) fail(path.empty() ? "kind" : path + ".kind", "has an unknown value " + shown(kind));
}

void from(const json& v, const std::string& path, RunFacts& out) {
  Fields f(v, path);
  f.read("top_pid", out.top_pid);
  f.read("init_pid", out.init_pid);
  f.read("top_outcome", out.top_outcome);
  f.read("stdout_text", out.stdout_text);
  f.read("stderr_text", out.stderr_text);
  f.read("deadline_hit", out.deadline_hit);
  f.read("stalled_since", out.stalled_since);
  f.read("stall_window", out.stall_window);
  f.read("stall_cpu_wait", out.stall_cpu_wait);
  f.read("containment", out.containment);
  f.read("containment_note", out.containment_note);
  f.read("shm", out.shm);
  f.read("faults", out.faults);
  f.read("diagnosis", out.diagnosis);
  f.read("diagnosis_note", out.diagnosis_note);
  f.read("diagnosis_took", out.diagnosis_took);
}

void from(const json& v, const std::string& path, DeviceTimeline& out) {
  Fields f(v, path);
  f.read("unavailable", out.unavailable);
  f.read("gpus", out.gpus);
  f.read("job_gpus", out.job_gpus);
  f.read("baseline", out.baseline);
  f.read("samples", out.samples);
  f.read("origin", out.origin);
  f.read("holders_after", out.holders_after);
  f.read("holders_unavailable", out.holders_unavailable);
  f.read("probe_after", out.probe_after);
}

void from(const json& v, const std::string& path, Timeline& out) {
  Fields f(v, path);
  f.read("observations", out.observations);
  f.read("facts", out.facts);
  f.read("device", out.device);
}

// The public face of every reader: a value or one Error, never a throw.
template <typename T>
Expected<T> decode(const json& j, const char* what) {
  if (!j.is_object())
    return Error{std::string(what) + " should be a JSON object, not " + j.type_name()};
  try {
    T out{};
    json_read::read<Wire>(j, "", out);
    return out;
  } catch (const ReadError& e) {
    return Error{std::string(what) + ": field " + e.path + " " + e.problem};
  } catch (const json::exception& e) {
    return Error{std::string(what) + ": " + e.what()};
  }
}

}  // namespace

json wire_json(const Observation& o) {
  json j = {{"t", o.t}, {"kind", std::string(o.word())}};
  put(j, "node", o.node, -1);
  std::visit([&](const auto& p) { put_fields(j, p); }, o.what);
  return j;
}

Expected<Observation> observation_from_wire(const json& j) {
  return decode<Observation>(j, "observation");
}

json wire_json(const RunFacts& f) {
  static const RunFacts d;
  json o = json::object();
  put(o, "top_pid", f.top_pid, d.top_pid);
  put(o, "init_pid", f.init_pid, d.init_pid);
  put(o, "top_outcome", f.top_outcome);
  put(o, "stdout_text", f.stdout_text, d.stdout_text);
  put(o, "stderr_text", f.stderr_text, d.stderr_text);
  put(o, "deadline_hit", f.deadline_hit, d.deadline_hit);
  put(o, "stalled_since", f.stalled_since);
  put(o, "stall_window", f.stall_window, d.stall_window);
  put(o, "stall_cpu_wait", f.stall_cpu_wait, d.stall_cpu_wait);
  put(o, "containment", f.containment, d.containment);
  put(o, "containment_note", f.containment_note, d.containment_note);
  put(o, "shm", f.shm, d.shm);
  put(o, "faults", f.faults);
  put(o, "diagnosis", f.diagnosis);
  put(o, "diagnosis_note", f.diagnosis_note, d.diagnosis_note);
  put(o, "diagnosis_took", f.diagnosis_took, d.diagnosis_took);
  return o;
}

Expected<RunFacts> run_facts_from_wire(const json& j) { return decode<RunFacts>(j, "run facts"); }

json wire_json(const DeviceTimeline& t) {
  static const DeviceTimeline d;
  json o = json::object();
  put(o, "unavailable", t.unavailable, d.unavailable);
  put(o, "gpus", t.gpus);
  put(o, "job_gpus", t.job_gpus);
  put(o, "baseline", t.baseline);
  put(o, "samples", t.samples);
  put(o, "origin", t.origin, d.origin);
  put(o, "holders_after", t.holders_after);
  put(o, "holders_unavailable", t.holders_unavailable, d.holders_unavailable);
  put(o, "probe_after", t.probe_after);
  return o;
}

Expected<DeviceTimeline> device_timeline_from_wire(const json& j) {
  return decode<DeviceTimeline>(j, "device timeline");
}

json wire_json(const Timeline& tl) {
  json o = json::object();
  if (!tl.observations.empty()) {
    json a = json::array();
    for (const auto& x : tl.observations) a.push_back(wire_json(x));
    o["observations"] = std::move(a);
  }
  if (json f = wire_json(tl.facts); !f.empty()) o["facts"] = std::move(f);
  if (json d = wire_json(tl.device); !d.empty()) o["device"] = std::move(d);
  return o;
}

Expected<Timeline> timeline_from_wire(const json& j) { return decode<Timeline>(j, "timeline"); }

std::string wire_line(const json& j) {
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
  line += '\n';
  return line;
}

Expected<json> parse_wire_line(std::string_view line) {
  if (line.ends_with('\n')) line.remove_suffix(1);
  if (line.ends_with('\r')) line.remove_suffix(1);
  try {
    return json::parse(line);
  } catch (const json::exception& e) {
    return Error{std::string("wire line: ") + e.what()};
  }
}

}  // namespace aftermath
