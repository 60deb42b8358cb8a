// Unit tests for the device observer (harness/observe/device_observer): NVML's
// view mapped onto a fake /proc (pids across PID namespaces, the job's and
// orphans), what start() makes of a missing driver or failing GPUs, and the
// timelines it records judged by the device checks end to end.
#include "harness/observe/device_observer.h"

#include <gtest/gtest.h>

#include "harness/check/device_checks.h"
#include "harness/observe/nvml_fake.h"
#include "harness/os/clock.h"
#include "tests/support/units.h"
#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

using testing::FakeProc;
using testing::TempDir;

using testing_units::kMiB;

// ---- the observer: FakeNvml + fake /proc -> DeviceTimeline -> checks

class DeviceObserverTest : public ::testing::Test {
 protected:
  TempDir dir_{"aftermath-devobs"};
  FakeProc proc_{dir_};
};

TEST_F(DeviceObserverTest, HolderInAnotherPidNamespaceIsMappedThroughNspid) {
  // The harness runs in a container (level 1 of the host's /proc); the job in
  // its own namespace below (level 2). An older driver reports host pids.
  proc_.add(9100, 9000, "python3", 'S', 1000, {9100, 4100, 7});
  proc_.add(9200, 1, "other", 'S', 1000, {9200, 300, 7});  // another container's pid 7
  FakeNvml nvml(
      {{FakeNvml::gpu(0, 500)},
       {FakeNvml::gpu(0, 4600, 81920, {FakeNvml::proc(9100, 4096), FakeNvml::proc(9200, 10)})}});
  JobRef job;
  job.pids = {4100};  // as the supervisor (level 1) knows them
  job.pid_level = 1;
  DeviceObserver obs(
      &nvml, nullptr,
      {.proc_root = proc_.root(), .device_pattern = "/dev/nvidia*", .nvml_pid_level = 0});
  ASSERT_TRUE(obs.start(0, job));
  obs.set_origin(kSecond);
  obs.sample(2 * kSecond, job);
  const auto& s = obs.timeline().samples.back();
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_TRUE(s.processes[0].in_job);
  EXPECT_EQ(s.processes[0].pid, 9100);
  EXPECT_EQ(s.processes[0].nspid.back(), 7);
  EXPECT_FALSE(s.processes[1].in_job) << "pid 7 of another namespace is not the job's";
  auto r = device_memory_released(obs.timeline());
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_NE(r.reason.find("[pid 7 in its namespace]"), std::string::npos) << r.reason;

  // Negative control: without the namespace level the job's process is not recognised.
  job.pid_level = 0;
  obs.sample(3 * kSecond, job);
  EXPECT_FALSE(obs.timeline().samples.back().processes[0].in_job);
}

TEST_F(DeviceObserverTest, NvmlPidsInANestedNamespaceAreFoundByLevel) {
  // A driver that translated pids into the caller's namespace (level 1) while
  // the proc root is the host's: pid 4100 at level 1 is host pid 9100.
  proc_.add(9100, 9000, "python3", 'S', 1000, {9100, 4100});
  proc_.add(4100, 1, "unrelated", 'S', 1000, {4100});  // host pid 4100: not it
  FakeNvml nvml({{FakeNvml::gpu(0, 4600, 81920, {FakeNvml::proc(4100, 4096)})}});
  JobRef job;
  job.pids = {9100};
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root(), .nvml_pid_level = 1});
  ASSERT_TRUE(obs.start(0, job));
  const auto& p = obs.timeline().baseline[0].processes.at(0);
  EXPECT_EQ(p.pid, 9100);
  EXPECT_TRUE(p.in_job);
}

TEST_F(DeviceObserverTest, ReleasedLateEndToEnd) {
  proc_.add(500, 1, "python3", 'S', 1000);
  auto busy = FakeNvml::gpu(0, 4600, 81920, {FakeNvml::proc(500, 4096)});
  FakeNvml nvml({{FakeNvml::gpu(0, 500)}, {busy}, {busy}, {FakeNvml::gpu(0, 500)}});
  JobRef job;
  job.pids = {500};
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  ASSERT_TRUE(obs.start(0, job));
  obs.set_job_environment(std::nullopt, std::nullopt);
  obs.sample(1 * kSecond, job);
  obs.set_origin(2 * kSecond);
  obs.sample(3 * kSecond, job);
  obs.finish(20 * kSecond, job);
  auto tl = obs.take();
  EXPECT_EQ(tl.job_gpus, (std::vector<int>{0}));
  auto r = device_memory_released(tl, {.tolerance_bytes = 64 * kMiB, .deadline = 5 * kSecond});
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_NE(r.reason.find("released 18s after"), std::string::npos) << r.reason;
  ASSERT_TRUE(tl.holders_after.has_value()) << "finish() scans device files";
  EXPECT_TRUE(tl.holders_after->empty());
  EXPECT_EQ(no_device_holders(tl).status, CheckStatus::Pass);
}

TEST_F(DeviceObserverTest, JobEnvironmentPicksItsGpus) {
  FakeNvml nvml({{FakeNvml::gpu(0, 1), FakeNvml::gpu(1, 1), FakeNvml::gpu(2, 1)}});
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  ASSERT_TRUE(obs.start(0, {}));
  obs.set_job_environment(std::string("GPU-000000a2,0"), std::string("PCI_BUS_ID"));
  EXPECT_EQ(obs.timeline().job_gpus, (std::vector<int>{2, 0}));
}

TEST_F(DeviceObserverTest, AHangingProbeAfterTheJobFailsTheCheck) {
  // A real child that never answers stands in for a probe wedged in the driver.
  FakeNvml nvml({{FakeNvml::gpu(0, 500)}});
  ProbeCommand hang;
  hang.argv = {"/bin/sleep", "30"};
  hang.deadline = 200 * kMilli;
  ProcessProbeRunner probe(hang);
  DeviceObserver obs(&nvml, &probe, {.proc_root = proc_.root()});
  ASSERT_TRUE(obs.start(0, {}));
  Nanos t0 = monotonic_now();
  obs.finish(kSecond, {});
  EXPECT_LT(monotonic_now() - t0, 5 * kSecond) << "the harness is not held by the hung probe";
  auto r = device_alloc_probe(obs.timeline());
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_NE(r.reason.find("GPU 0 timed_out: no answer within 200ms"), std::string::npos)
      << r.reason;
}

TEST_F(DeviceObserverTest, NoDriverMakesEverythingANoOp) {
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: cannot load libnvidia-ml.so.1");
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  EXPECT_FALSE(obs.start(0, {}));
  obs.sample(kSecond, {});
  obs.finish(2 * kSecond, {});
  EXPECT_EQ(nvml.device_calls(), 0);
  EXPECT_EQ(device_memory_released(obs.timeline()).status, CheckStatus::Skipped);
  EXPECT_EQ(device_alloc_probe(obs.timeline()).status, CheckStatus::Skipped);
  EXPECT_EQ(no_device_holders(obs.timeline()).status, CheckStatus::Skipped);
}

// ---- to_gpu_sample: one GPU's NVML view, its processes found in /proc

TEST(ToGpuSample, CopiesTheNumbersAndMarksTheJobsAndOrphanedProcesses) {
  ProcessIndex procs;
  ProcInfo in_job;
  in_job.pid = 500;
  in_job.ppid = 1;
  in_job.state = 'S';
  in_job.comm = "python3";
  in_job.nspid = {500, 3};
  procs.add(in_job);
  ProcInfo other;
  other.pid = 600;
  other.ppid = 42;
  other.state = 'R';
  other.comm = "other";
  procs.add(other);
  auto d = FakeNvml::gpu(2, 100, 1000, {FakeNvml::proc(500, 40), FakeNvml::proc(600, 50)});
  d.processes.push_back(NvmlProcessInfo{700, std::nullopt});  // not in /proc, no memory figure
  JobRef job;
  job.pids = {3};
  job.pid_level = 1;
  GpuSample s = to_gpu_sample(7 * kSecond, d, procs, job, 0);
  EXPECT_EQ(s.t, 7 * kSecond);
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.total, 1000 * kMiB);
  EXPECT_EQ(s.used, 100 * kMiB);
  EXPECT_EQ(s.free, 900 * kMiB);
  ASSERT_EQ(s.processes.size(), 3u);
  const GpuProcess& a = s.processes[0];
  EXPECT_EQ(a.nvml_pid, 500);
  EXPECT_EQ(a.pid, 500);
  EXPECT_EQ(a.nspid, (std::vector<int>{500, 3}));
  EXPECT_EQ(a.comm, "python3");
  EXPECT_EQ(a.state, 'S');
  EXPECT_EQ(a.used_bytes, 40 * kMiB);
  EXPECT_TRUE(a.in_job);
  EXPECT_TRUE(a.orphan);  // its parent is init
  const GpuProcess& b = s.processes[1];
  EXPECT_FALSE(b.in_job);
  EXPECT_FALSE(b.orphan);
  EXPECT_EQ(b.ppid, 42);
  const GpuProcess& gone = s.processes[2];
  EXPECT_EQ(gone.nvml_pid, 700);
  EXPECT_EQ(gone.pid, 0);  // not found
  EXPECT_EQ(gone.state, 0);
  EXPECT_EQ(gone.used_bytes, -1);  // NVML_VALUE_NOT_AVAILABLE
  EXPECT_FALSE(gone.in_job);
}

TEST(ToGpuSample, AFailedQueryKeepsItsError) {
  NvmlDeviceInfo d;
  d.index = 1;
  d.error = "GPU is lost";
  GpuSample s = to_gpu_sample(0, d, ProcessIndex{}, JobRef{}, 0);
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.error, "GPU is lost");
  EXPECT_TRUE(s.processes.empty());
}

// ---- start(): when the device side is unavailable, and why

TEST_F(DeviceObserverTest, WithoutNvmlNothingIsObserved) {
  DeviceObserver obs(nullptr, nullptr, {.proc_root = proc_.root()});
  EXPECT_FALSE(obs.start(0, {}));
  EXPECT_FALSE(obs.available());
  EXPECT_EQ(obs.timeline().unavailable, "no NVML");
  obs.sample(kSecond, {});
  EXPECT_TRUE(obs.timeline().samples.empty());
}

TEST_F(DeviceObserverTest, NvmlSeeingNoGpuIsUnavailable) {
  FakeNvml nvml;
  nvml.push({});  // one snapshot, of no GPU
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  EXPECT_FALSE(obs.start(0, {}));
  EXPECT_EQ(obs.timeline().unavailable, "NVML sees no GPU");
}

TEST_F(DeviceObserverTest, EveryGpuFailingIsUnavailableWithTheFirstError) {
  NvmlDeviceInfo lost;
  lost.index = 0;
  lost.error = "GPU is lost";
  NvmlDeviceInfo lost2 = lost;
  lost2.index = 1;
  lost2.error = "unknown error";
  FakeNvml nvml({{lost, lost2}});
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  EXPECT_FALSE(obs.start(0, {}));
  EXPECT_EQ(obs.timeline().unavailable, "every GPU query failed: GPU is lost");
  EXPECT_TRUE(obs.timeline().baseline.empty());
  EXPECT_TRUE(obs.timeline().gpus.empty());
}

TEST_F(DeviceObserverTest, OneFailingGpuIsANoteAndLeftOutOfTheGpus) {
  NvmlDeviceInfo lost;
  lost.index = 1;
  lost.error = "GPU is lost";
  FakeNvml nvml({{FakeNvml::gpu(0, 10), lost}});
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  ASSERT_TRUE(obs.start(0, {}));
  ASSERT_EQ(obs.timeline().gpus.size(), 1u);
  EXPECT_EQ(obs.timeline().gpus[0].index, 0);
  EXPECT_EQ(obs.timeline().gpus[0].uuid, FakeNvml::gpu(0, 0).uuid);
  EXPECT_EQ(obs.timeline().baseline.size(), 2u);  // the failed reading is kept, with its error
  EXPECT_EQ(obs.timeline().baseline[1].error, "GPU is lost");
  ASSERT_EQ(obs.notes().size(), 1u);
  EXPECT_EQ(obs.notes()[0], "GPU 1: GPU is lost");
}

// ---- finish(): the holder scan, or why there is none

TEST_F(DeviceObserverTest, ABadDevicePatternLeavesNoScanAndSaysWhy) {
  FakeNvml nvml({{FakeNvml::gpu(0, 10)}});
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root(), .device_pattern = "re:(["});
  ASSERT_TRUE(obs.start(0, {}));
  obs.finish(kSecond, {});
  EXPECT_FALSE(obs.timeline().holders_after.has_value());
  EXPECT_NE(obs.timeline().holders_unavailable.find("bad device pattern"), std::string::npos)
      << obs.timeline().holders_unavailable;
  EXPECT_FALSE(obs.timeline().probe_after.has_value());  // no probe runner given
  EXPECT_EQ(obs.timeline().samples.size(), 1u);          // finish() takes a last sample
}

TEST_F(DeviceObserverTest, FinishFindsAJobProcessStillHoldingADeviceFile) {
  proc_.add(500, 1, "python3", 'S', 1000);
  proc_.fd(500, 3, "/dev/nvidia0");
  FakeNvml nvml({{FakeNvml::gpu(0, 10)}});
  JobRef job;
  job.pids = {500};
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  ASSERT_TRUE(obs.start(0, job));
  obs.finish(kSecond, job);
  ASSERT_TRUE(obs.timeline().holders_after.has_value());
  ASSERT_EQ(obs.timeline().holders_after->size(), 1u);
  EXPECT_EQ((*obs.timeline().holders_after)[0].pid, 500);
  EXPECT_TRUE((*obs.timeline().holders_after)[0].in_job);
  EXPECT_EQ(no_device_holders(obs.timeline()).status, CheckStatus::Fail);
}

TEST_F(DeviceObserverTest, TakeHandsOverTheTimeline) {
  FakeNvml nvml({{FakeNvml::gpu(0, 10)}});
  DeviceObserver obs(&nvml, nullptr, {.proc_root = proc_.root()});
  ASSERT_TRUE(obs.start(0, {}));
  obs.set_origin(3 * kSecond);
  obs.sample(kSecond, {});
  DeviceTimeline tl = obs.take();
  EXPECT_EQ(tl.origin, 3 * kSecond);
  EXPECT_EQ(tl.baseline.size(), 1u);
  EXPECT_EQ(tl.samples.size(), 1u);
}

}  // namespace
}  // namespace aftermath
