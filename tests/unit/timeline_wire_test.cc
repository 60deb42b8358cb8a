// Unit tests for the timeline on the wire (harness/core/timeline_wire): every
// field of every value comes back as it went, through the very line a sender
// writes; a field left at its default is not written; bad input gives an
// error naming the field; invalid UTF-8 is replaced, not thrown on.
#include "harness/core/timeline_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/full_values.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing_full;

constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

// ------------------------------------------------------------ field by field
//
// Each helper compares every member under its own name, so a member the wire
// drops fails with that name in the message.

void expect_same(const Observation& a, const Observation& b) {
  EXPECT_EQ(a.t, b.t);
  EXPECT_EQ(a.word(), b.word()) << "kind";
  EXPECT_EQ(a.node, b.node) << "node";
  if (a.what.index() != b.what.index()) return;
  std::visit(
      [&](const auto& pa) {
        using P = std::remove_cvref_t<decltype(pa)>;
        const P& pb = std::get<P>(b.what);
        for_each_field<P>([&](const auto& f) {
          EXPECT_TRUE(pa.*f.member == pb.*f.member) << P::word << "." << f.key;
        });
      },
      a.what);
  EXPECT_TRUE(a == b);
}

void expect_same(const FaultRecord& a, const FaultRecord& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.action, b.action);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.trigger, b.trigger);
  EXPECT_EQ(a.point, b.point);
  EXPECT_EQ(a.hit, b.hit);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.optional, b.optional);
  EXPECT_EQ(a.waiting_since, b.waiting_since);
  EXPECT_EQ(a.mechanism, b.mechanism);
  EXPECT_EQ(a.pids, b.pids);
  EXPECT_EQ(a.target_role, b.target_role);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.worker, b.worker);
  EXPECT_EQ(a.sent, b.sent);
  EXPECT_EQ(a.effect, b.effect);
  EXPECT_EQ(a.oom_kills, b.oom_kills);
  EXPECT_EQ(a.cgroups, b.cgroups);
  EXPECT_EQ(a.kernel_log, b.kernel_log);
}

void expect_same(const PythonFrame& a, const PythonFrame& b) {
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.line, b.line);
  EXPECT_EQ(a.function, b.function);
  EXPECT_EQ(a.code, b.code);
}

void expect_same(const ProcessDiagnosis& a, const ProcessDiagnosis& b) {
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.worker, b.worker);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.wchan, b.wchan);
  EXPECT_EQ(a.kernel_stack, b.kernel_stack);
  EXPECT_EQ(a.user_stacks, b.user_stacks);
  EXPECT_EQ(a.waiting_in, b.waiting_in);
  EXPECT_EQ(a.python_stacks, b.python_stacks);
  ASSERT_EQ(a.python_frames.size(), b.python_frames.size());
  for (std::size_t i = 0; i < a.python_frames.size(); ++i) {
    SCOPED_TRACE("python_frames[" + std::to_string(i) + "]");
    expect_same(a.python_frames[i], b.python_frames[i]);
  }
  EXPECT_EQ(a.python_note, b.python_note);
  EXPECT_EQ(a.took, b.took);
}

void expect_same(const RunFacts& a, const RunFacts& b) {
  EXPECT_EQ(a.top_pid, b.top_pid);
  EXPECT_EQ(a.init_pid, b.init_pid);
  EXPECT_TRUE(a.top_outcome == b.top_outcome) << "top_outcome";
  EXPECT_EQ(a.stdout_text, b.stdout_text);
  EXPECT_EQ(a.stderr_text, b.stderr_text);
  EXPECT_EQ(a.deadline_hit, b.deadline_hit);
  EXPECT_EQ(a.stalled_since, b.stalled_since);
  EXPECT_EQ(a.stall_window, b.stall_window);
  EXPECT_EQ(a.stall_cpu_wait, b.stall_cpu_wait);
  EXPECT_EQ(a.containment, b.containment);
  EXPECT_EQ(a.containment_note, b.containment_note);
  EXPECT_EQ(a.shm, b.shm);
  ASSERT_EQ(a.faults.size(), b.faults.size());
  for (std::size_t i = 0; i < a.faults.size(); ++i) {
    SCOPED_TRACE("faults[" + std::to_string(i) + "]");
    expect_same(a.faults[i], b.faults[i]);
  }
  ASSERT_EQ(a.diagnosis.size(), b.diagnosis.size());
  for (std::size_t i = 0; i < a.diagnosis.size(); ++i) {
    SCOPED_TRACE("diagnosis[" + std::to_string(i) + "]");
    expect_same(a.diagnosis[i], b.diagnosis[i]);
  }
  EXPECT_EQ(a.diagnosis_note, b.diagnosis_note);
  EXPECT_EQ(a.diagnosis_took, b.diagnosis_took);
}

void expect_same(const GpuInfo& a, const GpuInfo& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_EQ(a.pci_bus_id, b.pci_bus_id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.total, b.total);
}

void expect_same(const GpuProcess& a, const GpuProcess& b) {
  EXPECT_EQ(a.nvml_pid, b.nvml_pid);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.nspid, b.nspid);
  EXPECT_EQ(a.comm, b.comm);
  EXPECT_EQ(a.ppid, b.ppid);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.used_bytes, b.used_bytes);
  EXPECT_EQ(a.in_job, b.in_job);
  EXPECT_EQ(a.orphan, b.orphan);
}

void expect_same(const GpuSample& a, const GpuSample& b) {
  EXPECT_EQ(a.t, b.t);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.used, b.used);
  EXPECT_EQ(a.free, b.free);
  ASSERT_EQ(a.processes.size(), b.processes.size());
  for (std::size_t i = 0; i < a.processes.size(); ++i) {
    SCOPED_TRACE("processes[" + std::to_string(i) + "]");
    expect_same(a.processes[i], b.processes[i]);
  }
  EXPECT_EQ(a.error, b.error);
}

void expect_same(const DeviceHolder& a, const DeviceHolder& b) {
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.ppid, b.ppid);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.start_ticks, b.start_ticks);
  EXPECT_EQ(a.comm, b.comm);
  EXPECT_EQ(a.devices, b.devices);
  EXPECT_EQ(a.nspid, b.nspid);
  EXPECT_EQ(a.in_job, b.in_job);
  EXPECT_EQ(a.orphan, b.orphan);
  EXPECT_EQ(a.zombie, b.zombie);
}

void expect_same(const GpuProbe& a, const GpuProbe& b) {
  EXPECT_EQ(a.ordinal, b.ordinal);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_EQ(a.pci_bus_id, b.pci_bus_id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.free, b.free);
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.elapsed, b.elapsed);
}

template <typename T>
void expect_same_list(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(what + "[" + std::to_string(i) + "]");
    expect_same(a[i], b[i]);
  }
}

void expect_same(const DeviceTimeline& a, const DeviceTimeline& b) {
  EXPECT_EQ(a.unavailable, b.unavailable);
  expect_same_list(a.gpus, b.gpus, "gpus");
  EXPECT_EQ(a.job_gpus, b.job_gpus);
  expect_same_list(a.baseline, b.baseline, "baseline");
  expect_same_list(a.samples, b.samples, "samples");
  EXPECT_EQ(a.origin, b.origin);
  ASSERT_EQ(a.holders_after.has_value(), b.holders_after.has_value()) << "holders_after";
  if (a.holders_after) expect_same_list(*a.holders_after, *b.holders_after, "holders_after");
  EXPECT_EQ(a.holders_unavailable, b.holders_unavailable);
  ASSERT_EQ(a.probe_after.has_value(), b.probe_after.has_value()) << "probe_after";
  if (a.probe_after) {
    EXPECT_EQ(a.probe_after->unavailable, b.probe_after->unavailable);
    expect_same_list(a.probe_after->gpus, b.probe_after->gpus, "probe_after.gpus");
  }
}

// --------------------------------------------------------------- round trips
//
// Through the text a sender writes and a receiver reads, not only the JSON
// value, so wire_line's dump is part of every round trip.

json through_line(const json& j) {
  auto back = parse_wire_line(wire_line(j));
  EXPECT_TRUE(back.ok()) << back.error().what;
  return back.ok() ? *back : json();
}

Observation round_trip(const Observation& o) {
  auto back = observation_from_wire(through_line(wire_json(o)));
  EXPECT_TRUE(back.ok()) << back.error().what;
  return back.ok() ? *back : Observation{};
}

RunFacts round_trip(const RunFacts& f) {
  auto back = run_facts_from_wire(through_line(wire_json(f)));
  EXPECT_TRUE(back.ok()) << back.error().what;
  return back.ok() ? *back : RunFacts{};
}

DeviceTimeline round_trip(const DeviceTimeline& d) {
  auto back = device_timeline_from_wire(through_line(wire_json(d)));
  EXPECT_TRUE(back.ok()) << back.error().what;
  return back.ok() ? *back : DeviceTimeline{};
}

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

// =============================================================== observation

TEST(TimelineWireObservation, EveryKindRoundTripsWithEveryFieldSet) {
  const auto all = every_kind_full();
  ASSERT_EQ(all.size(), std::variant_size_v<ObsPayload>);
  for (const Observation& o : all) {
    SCOPED_TRACE(std::string(o.word()));
    expect_same(round_trip(o), o);
  }
}

TEST(TimelineWireObservation, ADefaultObservationIsOnlyItsTimeAndKind) {
  const json j = wire_json(Observation{});
  EXPECT_EQ(j, (json{{"t", 0}, {"kind", "note"}}));
  EXPECT_EQ(wire_line(j), "{\"kind\":\"note\",\"t\":0}\n");
  expect_same(round_trip(Observation{}), Observation{});
}

TEST(TimelineWireObservation, TimesAreWholeNanoseconds) {
  Observation o;
  o.t = 1'000'000'001;  // 1000.000001 ms: lost to any rounding to milliseconds
  EXPECT_EQ(wire_json(o)["t"], 1'000'000'001);
  EXPECT_TRUE(wire_json(o)["t"].is_number_integer());
  EXPECT_EQ(round_trip(o).t, 1'000'000'001);
}

// One case per field of every kind: a default payload with only that field
// changed must carry exactly that one key more than t and kind, and come back
// equal. A field the wire drops fails its own named case.
TEST(TimelineWireObservation, EachFieldOfEveryKindTravelsAlone) {
  int cases = 0;
  for_each_kind([&]<typename P>(std::type_identity<P>) {
    for_each_field<P>([&](const auto& f) {
      if (f.shown == Shown::SignalName) return;  // a second view of a field already sent
      SCOPED_TRACE(std::string(P::word) + "." + std::string(f.key));
      P p{};
      p.*f.member = full_value<std::remove_cvref_t<decltype(p.*f.member)>>();
      const Observation o{5, p};
      EXPECT_EQ(keys(wire_json(o)), (std::set<std::string>{"t", "kind", std::string(f.key)}));
      expect_same(round_trip(o), o);
      ++cases;
    });
    return false;
  });
  EXPECT_GT(cases, 80);
}

TEST(TimelineWireObservation, StateLettersAndOtherBytesTravel) {
  for (char c : {'Z', '\x01', static_cast<char>(0xE9)}) {
    const Observation o = obs::proc_state(5, 7, c);
    expect_same(round_trip(o), o);
  }
  EXPECT_EQ(wire_json(obs::proc_state(5, 7, 'Z'))["state"], "Z");
  EXPECT_EQ(wire_json(obs::proc_state(5, 7, '\x01'))["state"], 1);
}

TEST(TimelineWireObservation, TheNodeTravels) {
  Observation o = obs::note(5, "x");
  o.node = 3;
  EXPECT_EQ(wire_json(o)["node"], 3);
  expect_same(round_trip(o), o);
}

TEST(TimelineWireObservation, ASignalTravelsAsItsNumberOnly) {
  const json j = wire_json(obs::signal(5, 7, SIGKILL, "teardown"));
  EXPECT_EQ(keys(j), (std::set<std::string>{"t", "kind", "pid", "signo", "why"}));
  EXPECT_EQ(j["signo"], SIGKILL);
}

TEST(TimelineWireObservation, OutcomeShapes) {
  EXPECT_EQ(wire_json(obs::proc_exit(1, 2, Outcome::killed(SIGKILL)))["outcome"],
            (json{{"kind", "killed"}, {"signal", SIGKILL}}));
  EXPECT_EQ(wire_json(obs::proc_exit(1, 2, Outcome::killed(SIGSEGV, true)))["outcome"],
            (json{{"kind", "killed"}, {"signal", SIGSEGV}, {"core_dumped", true}}));
  EXPECT_EQ(wire_json(obs::proc_exit(1, 2, Outcome::exited(3)))["outcome"],
            (json{{"kind", "exited"}, {"code", 3}}));
  EXPECT_FALSE(wire_json(obs::proc_exit(1, 2, std::nullopt)).contains("outcome"));
}

TEST(TimelineWireObservation, UnknownFieldsAreIgnored) {
  json j = wire_json(full_observation<obs::ProcExit>());
  j["added_later"] = json{{"nested", {1, 2, 3}}};
  j["outcome"]["also_new"] = "x";
  auto back = observation_from_wire(j);
  ASSERT_TRUE(back.ok()) << back.error().what;
  expect_same(*back, full_observation<obs::ProcExit>());
}

TEST(TimelineWireObservation, NullOutcomeReadsAsNone) {
  auto back = observation_from_wire(json{{"t", 1}, {"kind", "proc_exit"}, {"outcome", nullptr}});
  ASSERT_TRUE(back.ok()) << back.error().what;
  ASSERT_TRUE(back->is<obs::ProcExit>());
  EXPECT_FALSE(back->as<obs::ProcExit>()->outcome.has_value());
}

// ==================================================================== errors

std::string error_of(const json& j) {
  auto back = observation_from_wire(j);
  EXPECT_FALSE(back.ok());
  return back.ok() ? std::string() : back.error().what;
}

TEST(TimelineWireErrors, MissingKindNamesIt) {
  const std::string e = error_of(json{{"t", 1}, {"pid", 3}});
  EXPECT_THAT(e, HasSubstr("field kind"));
  EXPECT_THAT(e, HasSubstr("missing"));
}

TEST(TimelineWireErrors, MissingTimeNamesIt) {
  EXPECT_THAT(error_of(json{{"kind", "note"}}), HasSubstr("field t is missing"));
}

TEST(TimelineWireErrors, KindOfTheWrongTypeNamesIt) {
  const std::string e = error_of(json{{"t", 1}, {"kind", 3}});
  EXPECT_THAT(e, HasSubstr("field kind"));
  EXPECT_THAT(e, HasSubstr("should be a string, not number"));
}

TEST(TimelineWireErrors, UnknownKindNamesItAndTheWord) {
  const std::string e = error_of(json{{"t", 1}, {"kind", "proc_explode"}});
  EXPECT_THAT(e, HasSubstr("field kind"));
  EXPECT_THAT(e, HasSubstr("\"proc_explode\""));
}

TEST(TimelineWireErrors, EachWrongTypeNamesItsField) {
  EXPECT_THAT(error_of(json{{"t", "soon"}, {"kind", "note"}}),
              HasSubstr("field t should be an integer"));
  EXPECT_THAT(error_of(json{{"t", 1.5}, {"kind", "note"}}),
              HasSubstr("field t should be an integer"));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "proc_gone"}, {"pid", "7"}}),
              HasSubstr("field pid should be an integer, not string"));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "shm_add"}, {"baseline", 1}}),
              HasSubstr("field baseline should be true or false"));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "announce"}, {"role", "captain"}}),
              HasSubstr("field role has an unknown value \"captain\""));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "proc_state"}, {"state", "RS"}}),
              HasSubstr("field state should be one character"));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "phase"}, {"name", json::array()}}),
              HasSubstr("field name should be a string, not array"));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "harness_failure"}, {"part", "disk"}}),
              HasSubstr("field part has an unknown value \"disk\""));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "fault"}, {"action", "SIGWHAT"}}),
              HasSubstr("field action has an unknown value \"SIGWHAT\""));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "proc_exit"}, {"outcome", {{"kind", "vanished"}}}}),
              HasSubstr("field outcome.kind has an unknown value"));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "proc_exit"}, {"outcome", {{"kind", "exited"}}}}),
              HasSubstr("field outcome.code is missing"));
}

TEST(TimelineWireErrors, OutOfRangeIntegersAreRefused) {
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "proc_gone"}, {"pid", 1LL << 40}}),
              HasSubstr("field pid is out of range"));
  EXPECT_THAT(error_of(json{{"t", 1}, {"kind", "sample"}, {"procs", 18446744073709551615ULL}}),
              HasSubstr("field procs is out of range"));
  DeviceTimeline d;
  d.holders_after = std::vector<DeviceHolder>{DeviceHolder{}};
  json j = wire_json(d);
  j["holders_after"][0]["uid"] = -1;
  auto back = device_timeline_from_wire(j);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.error().what, HasSubstr("field holders_after[0].uid is out of range"));
}

TEST(TimelineWireErrors, NotAnObject) {
  EXPECT_THAT(error_of(json::array()), HasSubstr("should be a JSON object, not array"));
  EXPECT_THAT(error_of(json("note")), HasSubstr("should be a JSON object, not string"));
}

TEST(TimelineWireErrors, NestedFieldsAreNamedByTheirPath) {
  Timeline tl;
  tl.add(full_observation<obs::Note>());
  tl.add(full_observation<obs::Signal>());
  tl.facts = full_facts();
  tl.device = full_device();
  const json good = wire_json(tl);
  struct Case {
    std::function<void(json&)> spoil;
    const char* path;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["observations"][1].erase("kind"); },
       "field observations[1].kind is missing"},
      {[](json& j) { j["observations"] = json::object(); },
       "field observations should be an array"},
      {[](json& j) { j["facts"]["faults"][1]["action"] = "SIGWHAT"; },
       "field facts.faults[1].action has an unknown value \"SIGWHAT\""},
      {[](json& j) { j["facts"]["faults"][0]["mechanism"] = "telepathy"; },
       "field facts.faults[0].mechanism has an unknown value"},
      {[](json& j) { j["facts"]["faults"][0]["status"] = 2; },
       "field facts.faults[0].status should be a string"},
      {[](json& j) { j["facts"]["faults"][0]["pids"][1] = "x"; },
       "field facts.faults[0].pids[1] should be an integer"},
      {[](json& j) { j["facts"]["diagnosis"][0]["python_frames"][1]["line"] = true; },
       "field facts.diagnosis[0].python_frames[1].line should be an integer"},
      {[](json& j) { j["facts"]["top_outcome"] = "exited"; },
       "field facts.top_outcome should be an object"},
      {[](json& j) { j["device"]["samples"][2]["processes"][0]["in_job"] = "yes"; },
       "field device.samples[2].processes[0].in_job should be true or false"},
      {[](json& j) { j["device"]["probe_after"]["gpus"][0]["status"] = "fine"; },
       "field device.probe_after.gpus[0].status has an unknown value \"fine\""},
      {[](json& j) { j["device"] = 3; }, "field device should be an object"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    json j = good;
    c.spoil(j);
    auto back = timeline_from_wire(j);
    ASSERT_FALSE(back.ok());
    EXPECT_THAT(back.error().what, HasSubstr(c.path));
    EXPECT_THAT(back.error().what, HasSubstr("timeline: "));
  }
  EXPECT_TRUE(timeline_from_wire(good).ok());
}

// ================================================================= run facts

TEST(TimelineWireFacts, RoundTripWithFaultsAndDiagnosis) {
  const RunFacts f = full_facts();
  expect_same(round_trip(f), f);
}

TEST(TimelineWireFacts, DefaultFactsAreEmpty) {
  EXPECT_EQ(wire_json(RunFacts{}), json::object());
  expect_same(round_trip(RunFacts{}), RunFacts{});
}

TEST(TimelineWireFacts, EachFieldTravelsAlone) {
  struct Case {
    const char* key;
    std::function<void(RunFacts&)> set;
  };
  const std::vector<Case> cases = {
      {"top_pid", [](RunFacts& f) { f.top_pid = 100; }},
      {"init_pid", [](RunFacts& f) { f.init_pid = 1; }},
      {"top_outcome", [](RunFacts& f) { f.top_outcome = Outcome::killed(SIGTERM); }},
      {"stdout_text", [](RunFacts& f) { f.stdout_text = "out"; }},
      {"stderr_text", [](RunFacts& f) { f.stderr_text = "err"; }},
      {"deadline_hit", [](RunFacts& f) { f.deadline_hit = true; }},
      {"stalled_since", [](RunFacts& f) { f.stalled_since = 0; }},  // engaged at zero
      {"stall_window", [](RunFacts& f) { f.stall_window = 3; }},
      {"stall_cpu_wait", [](RunFacts& f) { f.stall_cpu_wait = 4; }},
      {"containment", [](RunFacts& f) { f.containment = JobContainment::Subreaper; }},
      {"containment_note", [](RunFacts& f) { f.containment_note = "no userns"; }},
      {"shm", [](RunFacts& f) { f.shm = ShmPlace::Host; }},
      {"faults", [](RunFacts& f) { f.faults = {FaultRecord{}}; }},
      {"diagnosis", [](RunFacts& f) { f.diagnosis = {ProcessDiagnosis{}}; }},
      {"diagnosis_note", [](RunFacts& f) { f.diagnosis_note = "note"; }},
      {"diagnosis_took", [](RunFacts& f) { f.diagnosis_took = 9; }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    RunFacts f;
    c.set(f);
    EXPECT_EQ(keys(wire_json(f)), (std::set<std::string>{c.key}));
    expect_same(round_trip(f), f);
  }
}

TEST(TimelineWireFacts, FaultEnumsTravelAsTheirWords) {
  const json j = wire_json(full_facts())["faults"][0];
  EXPECT_EQ(j["action"], "host_oom");
  EXPECT_EQ(j["mechanism"], "point-reply");
  EXPECT_EQ(j["status"], "failed");
  // A default fault record: index 0 and every default left out.
  RunFacts plain;
  plain.faults = {FaultRecord{}};
  EXPECT_EQ(wire_json(plain)["faults"][0], json::object());
}

// ==================================================================== device

TEST(TimelineWireDevice, RoundTripFilled) {
  const DeviceTimeline d = full_device();
  expect_same(round_trip(d), d);
}

TEST(TimelineWireDevice, UnavailableWithItsReason) {
  DeviceTimeline d;
  d.unavailable = "NVML: driver not loaded";
  EXPECT_EQ(wire_json(d), (json{{"unavailable", "NVML: driver not loaded"}}));
  expect_same(round_trip(d), d);
}

TEST(TimelineWireDevice, AnEngagedEmptyOptionalIsNotLost) {
  DeviceTimeline d;
  d.holders_after = std::vector<DeviceHolder>{};  // scanned, nobody held a device
  d.probe_after = ProbeReport{};                  // probed, nothing to say
  const json j = wire_json(d);
  EXPECT_EQ(j, (json{{"holders_after", json::array()}, {"probe_after", json::object()}}));
  const DeviceTimeline back = round_trip(d);
  EXPECT_TRUE(back.holders_after.has_value());
  EXPECT_TRUE(back.probe_after.has_value());
  EXPECT_FALSE(round_trip(DeviceTimeline{}).holders_after.has_value());
  EXPECT_FALSE(round_trip(DeviceTimeline{}).probe_after.has_value());
}

// ================================================================== timeline

TEST(TimelineWireTimeline, WholeTimelineRoundTrips) {
  Timeline tl;
  for (auto& o : every_kind_full()) tl.add(std::move(o));
  tl.add(Observation{});
  tl.facts = full_facts();
  tl.device = full_device();
  auto back = timeline_from_wire(through_line(wire_json(tl)));
  ASSERT_TRUE(back.ok()) << back.error().what;
  ASSERT_EQ(back->observations.size(), tl.observations.size());
  for (std::size_t i = 0; i < tl.observations.size(); ++i) {
    SCOPED_TRACE("observations[" + std::to_string(i) + "]");
    expect_same(back->observations[i], tl.observations[i]);
  }
  expect_same(back->facts, tl.facts);
  expect_same(back->device, tl.device);
}

TEST(TimelineWireTimeline, EmptyTimelineIsAnEmptyObject) {
  EXPECT_EQ(wire_json(Timeline{}), json::object());
  auto back = timeline_from_wire(json::object());
  ASSERT_TRUE(back.ok()) << back.error().what;
  EXPECT_TRUE(back->observations.empty());
}

// ===================================================================== lines

TEST(TimelineWireLine, InvalidUtf8BecomesReplacementCharacters) {
  RunFacts f;
  f.stdout_text = "ok \xff\xfe end";           // a job's output need not be UTF-8
  f.stderr_text = "caf\xc3\xa9 \xe2\x9c\x93";  // valid UTF-8 comes through byte for byte
  const json j = wire_json(f);
  // The negative control: nlohmann's default dump refuses it.
  EXPECT_THROW((void)j.dump(), json::type_error);
  std::string line;
  ASSERT_NO_THROW(line = wire_line(j));
  auto back = parse_wire_line(line);
  ASSERT_TRUE(back.ok()) << back.error().what;
  auto facts = run_facts_from_wire(*back);
  ASSERT_TRUE(facts.ok()) << facts.error().what;
  EXPECT_EQ(facts->stdout_text, "ok \xef\xbf\xbd\xef\xbf\xbd end");
  EXPECT_EQ(facts->stderr_text, f.stderr_text);
}

TEST(TimelineWireLine, OneLineEndingInANewline) {
  Observation o = full_observation<obs::Note>();
  o.as<obs::Note>()->text = "a\nb\r\nc\n";
  const std::string line = wire_line(wire_json(o));
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_THAT(line, ::testing::Not(HasSubstr("\": ")));  // compact
  auto crlf = parse_wire_line(line.substr(0, line.size() - 1) + "\r\n");
  ASSERT_TRUE(crlf.ok()) << crlf.error().what;
  EXPECT_EQ(*crlf, wire_json(o));
}

TEST(TimelineWireLine, AMalformedLineIsAnErrorNotAThrow) {
  Expected<json> back = json();
  ASSERT_NO_THROW(back = parse_wire_line("{\"t\":1,\"kind\":"));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.error().what, HasSubstr("wire line"));
  EXPECT_FALSE(parse_wire_line("").ok());
  EXPECT_FALSE(parse_wire_line("{} {}").ok());
}

}  // namespace
}  // namespace aftermath
