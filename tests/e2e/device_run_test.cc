// The device side wired into a real run: a real job under the real
// supervisor, with NVML and the allocation probe replaced by doubles (the
// only parts that cannot exist on a machine without a GPU). Each test runs
// run_scenario() in-process and reads the three device checks' verdicts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "e2e_util.h"
#include "harness/check/device_checks.h"
#include "harness/check/scenario_load.h"
#include "harness/core/timeline.h"
#include "harness/observe/nvml_fake.h"
#include "harness/supervise/runner.h"
#include "tests/support/units.h"
#include "tests/unit/parse_helpers.h"

namespace aftermath {
namespace {

using e2e::TempDir;
using ::testing::HasSubstr;

// A probe that answers without starting anything.
class ScriptedProbe final : public ProbeRunner {
 public:
  explicit ScriptedProbe(ProbeStatus status, std::string error = {})
      : status_(status), error_(std::move(error)) {}
  ProbeReport run(const std::vector<GpuInfo>& gpus) override {
    ++calls;
    ProbeReport r;
    for (const auto& g : gpus) {
      GpuProbe p;
      p.ordinal = g.index;
      p.index = g.index;
      p.uuid = g.uuid;
      p.status = status_;
      p.error = error_;
      p.free = status_ == ProbeStatus::Ok ? 1 << 30 : -1;
      p.total = status_ == ProbeStatus::Ok ? 2 << 30 : -1;
      r.gpus.push_back(p);
    }
    return r;
  }
  int calls = 0;

 private:
  ProbeStatus status_;
  std::string error_;
};

Scenario scenario(const std::string& extra_checks = "") {
  std::string text =
      "name: device-wiring\n"
      "description: a job that runs for a moment\n"
      "job: {command: /bin/sh, args: [-c, 'exec sleep 0.4']}\n"
      "timeouts: {job: 20s, settle: 1s, teardown: 1s}\n" +
      (extra_checks.empty() ? std::string() : "checks:\n" + extra_checks);
  ParseContext ctx;
  ctx.file = "<test>";
  auto r = parse_scenario(text, ctx);
  if (!r.ok()) {
    for (const auto& d : diagnostics_of(r)) ADD_FAILURE() << d.to_string();
    return {};
  }
  return *r;
}

const CheckResult* find(const ScenarioResult& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return &c;
  return nullptr;
}

RunOptions options(const TempDir& dir, Nvml* nvml, ProbeRunner* probe) {
  RunOptions o;
  o.out_dir = dir / "out";
  o.contain.reaper_path = e2e::bin("aftermath-reaper");
  o.devices.nvml = nvml;
  o.devices.probe = probe;
  return o;
}

using testing_units::kMiB;

TEST(DeviceRun, NoDriverSkipsAllThreeWithTheReason) {
  TempDir dir;
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: libnvidia-ml.so.1 not found");
  ScriptedProbe probe(ProbeStatus::Ok);
  ScenarioResult r = run_scenario(scenario(), options(dir, &nvml, &probe));
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.verdict_reason;
  for (const char* name : {kDeviceMemoryReleased, kNoDeviceHolders, kDeviceAllocProbe}) {
    const CheckResult* c = find(r, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->status, CheckStatus::Skipped) << name;
    EXPECT_THAT(c->reason, HasSubstr("libnvidia-ml.so.1 not found")) << name;
  }
  EXPECT_EQ(probe.calls, 0);  // nothing to probe without a driver
}

// The job could not be started: supervise()'s error is the scenario's
// error, with the reason, and nothing ran.
TEST(RunScenario, AReaperThatCannotRunIsTheScenariosErrorWithTheReason) {
  TempDir dir;
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver");
  ScriptedProbe probe(ProbeStatus::Ok);
  RunOptions o = options(dir, &nvml, &probe);
  o.contain.reaper_path = dir / "no-such-reaper";
  ScenarioResult r = run_scenario(scenario(), o);
  EXPECT_EQ(r.verdict, Verdict::Error);
  EXPECT_THAT(r.error, HasSubstr("reaper not found or not executable"));
  EXPECT_THAT(r.error, HasSubstr("no-such-reaper"));
  EXPECT_TRUE(r.timeline.observations.empty());
  EXPECT_EQ(probe.calls, 0);
}

TEST(DeviceRun, MemoryReleasedLateIsWaitedForAndTimed) {
  TempDir dir;
  // Baseline 100 MiB; the job holds 1 GiB more; the memory comes back only
  // some samples later (a driver tearing a context down after the exit).
  auto held = FakeNvml::gpu(0, 1124, 81920, {FakeNvml::proc(4242, 1024)});
  FakeNvml nvml({{FakeNvml::gpu(0, 100)},
                 {held},
                 {held},
                 {held},
                 {held},
                 {held},
                 {held},
                 {FakeNvml::gpu(0, 100)}});
  ScriptedProbe probe(ProbeStatus::Ok);
  ScenarioResult r = run_scenario(scenario(), options(dir, &nvml, &probe));
  const CheckResult* mem = find(r, kDeviceMemoryReleased);
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->status, CheckStatus::Pass) << mem->reason << "\n" << mem->measured.dump();
  // Every scripted snapshot was read: the harness kept sampling past the
  // exit until the memory was back.
  EXPECT_GE(nvml.device_calls(), 8);
  EXPECT_EQ(r.timeline.device.baseline.size(), 1u);
  EXPECT_EQ(r.timeline.device.baseline[0].used, 100 * kMiB);
  ASSERT_FALSE(r.timeline.device.samples.empty());
  EXPECT_EQ(r.timeline.device.samples.back().used, 100 * kMiB);
  const CheckResult* pr = find(r, kDeviceAllocProbe);
  ASSERT_NE(pr, nullptr);
  EXPECT_EQ(pr->status, CheckStatus::Pass) << pr->reason;
  EXPECT_EQ(probe.calls, 1);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.verdict_reason;
}

TEST(DeviceRun, MemoryNeverReleasedFailsAtTheScenariosDeadline) {
  TempDir dir;
  auto held = FakeNvml::gpu(0, 2148, 81920, {FakeNvml::proc(4242, 2048)});
  FakeNvml nvml({{FakeNvml::gpu(0, 100)}, {held}});
  ScriptedProbe probe(ProbeStatus::Ok);
  Scenario sc = scenario("  device_memory_released: {tolerance: 256MiB, deadline: 1s}\n");
  Nanos start = monotonic_now();
  ScenarioResult r = run_scenario(sc, options(dir, &nvml, &probe));
  Nanos took = monotonic_now() - start;
  const CheckResult* mem = find(r, kDeviceMemoryReleased);
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->status, CheckStatus::Fail) << mem->reason;
  EXPECT_EQ(mem->measured["tolerance_bytes"], 256 * kMiB);
  EXPECT_EQ(mem->measured["deadline_ms"], 1000.0);
  EXPECT_EQ(r.verdict, Verdict::Fail);
  // The harness waited for the scenario's 1 s deadline, not the default 10 s.
  EXPECT_LT(took, 8 * kSecond);
}

TEST(DeviceRun, ProbeFailureAfterTheJobFailsTheProbeCheck) {
  TempDir dir;
  FakeNvml nvml({{FakeNvml::gpu(0, 100)}});
  ScriptedProbe probe(ProbeStatus::Failed,
                      "cudaErrorDevicesUnavailable: all CUDA-capable devices are busy");
  ScenarioResult r = run_scenario(scenario(), options(dir, &nvml, &probe));
  const CheckResult* pr = find(r, kDeviceAllocProbe);
  ASSERT_NE(pr, nullptr);
  EXPECT_EQ(pr->status, CheckStatus::Fail);
  EXPECT_THAT(pr->reason, HasSubstr("cudaErrorDevicesUnavailable"));
  EXPECT_EQ(r.verdict, Verdict::Fail);
}

TEST(DeviceRun, UnmetRequirementSkipsWithoutLaunching) {
  TempDir dir;
  Scenario sc = scenario();
  // A Python that cannot import torch: the job must not start at all.
  std::string py = dir / "python-no-torch";
  {
    std::ofstream f(py);
    f << "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n";
  }
  ::chmod(py.c_str(), 0755);
  sc.job.argv = {py, dir / "never-run.py"};
  sc.requires_ = {"python-torch"};
  FakeNvml nvml({{FakeNvml::gpu(0, 100)}});
  ScriptedProbe probe(ProbeStatus::Ok);
  ScenarioResult r = run_scenario(sc, options(dir, &nvml, &probe));
  EXPECT_EQ(r.verdict, Verdict::Skipped);
  EXPECT_THAT(r.verdict_reason, HasSubstr("requires python-torch"));
  EXPECT_THAT(r.verdict_reason, HasSubstr("No module named 'torch'"));
  EXPECT_TRUE(r.checks.empty());
  EXPECT_TRUE(r.timeline.observations.empty());  // nothing was launched or observed
  EXPECT_EQ(nvml.init_calls(), 0);
}

// ---------------------------------------------------------------- device OOM

// A machine with a GPU, as far as the device OOM faults can tell: planted
// device nodes and the stand-in CUDA runtime.
struct PlantedGpu {
  TempDir dev;
  PlantedGpu() {
    std::ofstream(dev / "nvidiactl") << "";
    std::ofstream(dev / "nvidia0") << "";
  }
  void apply(RunOptions& o) const {
    o.inject.dev_root = dev.path();
    o.inject.cudart_candidates = {AFTERMATH_FAKECUDART_SO};
    o.inject.tools_dir = std::filesystem::path(AFTERMATH_CUDAFAIL_SO).parent_path().string();
  }
};

Scenario oom_scenario(const std::string& fault, const std::string& checks = "") {
  std::string text =
      "name: device-oom\n"
      "description: a job that allocates device memory after each point\n"
      "job: {command: " +
      std::string(AFTERMATH_CUDAFAIL_POINT_JOB) +
      ", args: ['3']}\n"
      "timeouts: {job: 20s, settle: 1s, teardown: 1s}\n"
      "faults:\n" +
      fault + checks;
  ParseContext ctx;
  ctx.file = "<test>";
  auto r = parse_scenario(text, ctx);
  if (!r.ok()) {
    for (const auto& d : diagnostics_of(r)) ADD_FAILURE() << d.to_string();
    return {};
  }
  return *r;
}

TEST(DeviceOomRun, InterposerMakesTheTargetsNextAllocationFailForReal) {
  TempDir dir;
  PlantedGpu gpu;
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: planted");
  RunOptions o = options(dir, &nvml, nullptr);
  gpu.apply(o);
  Scenario sc = oom_scenario(
      "  - {action: device_oom, mechanism: interposer, target: self,\n"
      "     at: {point: device.alloc, hit: 2}}\n",
      "checks:\n  job_exit: {code: 2, output_regex: 'device allocation 2 failed: out of memory "
      "\\(rc=2\\)'}\n");
  ScenarioResult r = run_scenario(sc, o);
  ASSERT_EQ(r.timeline.facts.faults.size(), 1u);
  const FaultRecord& f = r.timeline.facts.faults[0];
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.verdict_reason << "\n" << f.reason;
  EXPECT_EQ(to_string(f.status), "injected") << f.reason;
  EXPECT_EQ(to_string(f.mechanism), "interposer");
  EXPECT_EQ(f.hit, 2);
  // The first allocation went through to the runtime; the armed one did not.
  EXPECT_THAT(r.timeline.facts.stdout_text, HasSubstr("alloc 1 rc=0")) << f.reason;
  EXPECT_THAT(r.timeline.facts.stdout_text, HasSubstr("alloc 2 rc=2"));
  EXPECT_THAT(r.timeline.facts.stderr_text, HasSubstr("aftermath-cudafail: cudaMalloc"));
}

TEST(DeviceOomRun, HogHoldsMemoryFromTheTriggerUntilTeardown) {
  TempDir dir;
  PlantedGpu gpu;
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: planted");
  RunOptions o = options(dir, &nvml, nullptr);
  gpu.apply(o);
  Scenario sc = oom_scenario(
      "  - {action: device_oom, mechanism: hog, share: 0.5, device: 0,\n"
      "     at: {point: device.alloc, hit: 1}}\n");
  ScenarioResult r = run_scenario(sc, o);
  ASSERT_EQ(r.timeline.facts.faults.size(), 1u);
  const FaultRecord& f = r.timeline.facts.faults[0];
  EXPECT_EQ(to_string(f.status), "injected") << f.reason;
  EXPECT_EQ(to_string(f.mechanism), "hog");
  EXPECT_THAT(f.reason, HasSubstr("holds 8.0 GiB of GPU 0"));  // half the stand-in's 16 GiB
  bool released = false;
  for (const auto& e : r.timeline.observations)
    if (const auto* n = e.as<obs::Note>(); n &&
                                           n->text.find("released 8.0 GiB") != std::string::npos &&
                                           n->text.find("did not exit") == std::string::npos)
      released = true;
  EXPECT_TRUE(released);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.verdict_reason;
}

TEST(DeviceOomRun, WithoutAGpuEveryMechanismIsSkippedWithTheReason) {
  TempDir dir;
  TempDir empty_dev;
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: planted");
  for (const char* mech : {"point", "hog", "interposer"}) {
    RunOptions o = options(dir, &nvml, nullptr);
    o.inject.dev_root = empty_dev.path();
    Scenario sc = oom_scenario(std::string("  - {action: device_oom, mechanism: ") + mech +
                               ", target: self, at: {point: device.alloc, hit: 1}}\n");
    ScenarioResult r = run_scenario(sc, o);
    ASSERT_EQ(r.timeline.facts.faults.size(), 1u) << mech;
    const FaultRecord& f = r.timeline.facts.faults[0];
    EXPECT_EQ(to_string(f.status), "skipped") << mech << ": " << f.reason;
    EXPECT_THAT(f.reason, HasSubstr("nvidiactl")) << mech;
    // The job went on untouched: all three allocations succeeded.
    EXPECT_THAT(r.timeline.facts.stdout_text, HasSubstr("alloc 3 rc=0")) << mech;
    // A fault that cannot act here makes the scenario skipped, never a pass.
    EXPECT_EQ(r.verdict, Verdict::Skipped) << mech << ": " << r.verdict_reason;
    EXPECT_THAT(r.verdict_reason, HasSubstr("cannot act on this machine")) << mech;
  }
}

}  // namespace
}  // namespace aftermath
