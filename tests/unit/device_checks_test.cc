// Unit tests for harness/check/device_checks on hand-made DeviceTimelines:
// memory never released, released late, released in time; holders left; a
// probe that failed; and no driver -> skipped. (The same checks on timelines
// the DeviceObserver records: device_observer_test.cc.)
#include "harness/check/device_checks.h"

#include <gtest/gtest.h>

#include "tests/support/units.h"

namespace aftermath {
namespace {

using testing_units::kMiB;

GpuSample reading(Nanos t, int index, std::int64_t used_mib, std::vector<GpuProcess> procs = {}) {
  GpuSample s;
  s.t = t;
  s.index = index;
  s.total = 80 * 1024 * kMiB;
  s.used = used_mib * kMiB;
  s.free = s.total - s.used;
  s.processes = std::move(procs);
  return s;
}

GpuProcess job_proc(int pid, std::int64_t mib, std::vector<int> nspid = {}) {
  GpuProcess p;
  p.nvml_pid = p.pid = pid;
  p.nspid = nspid.empty() ? std::vector<int>{pid} : nspid;
  p.comm = "python3";
  p.used_bytes = mib * kMiB;
  p.in_job = true;
  p.state = 'S';
  return p;
}

// One GPU: 500 MiB at baseline, the job takes 4 GiB, then `after` readings.
DeviceTimeline timeline(std::vector<GpuSample> after) {
  DeviceTimeline tl;
  tl.gpus = {{0, "GPU-aaaa", "00000000:18:00.0", "Fake", 80 * 1024 * kMiB}};
  tl.baseline = {reading(0, 0, 500)};
  tl.samples = {reading(1 * kSecond, 0, 4600, {job_proc(4242, 4096)})};
  for (auto& s : after) tl.samples.push_back(std::move(s));
  tl.origin = 2 * kSecond;
  return tl;
}

TEST(DeviceChecks, MemoryReleasedInTime) {
  auto tl = timeline({reading(2100 * kMilli, 0, 4600, {job_proc(4242, 4096)}),
                      reading(2400 * kMilli, 0, 520), reading(3 * kSecond, 0, 510)});
  auto r = device_memory_released(tl, {.tolerance_bytes = 64 * kMiB, .deadline = 1 * kSecond});
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.name, "device_memory_released");
  EXPECT_DOUBLE_EQ(r.measured["max_release_ms"].get<double>(), 400.0);
  EXPECT_EQ(r.measured["gpus"][0]["release_ms"].get<double>(), 400.0);
  EXPECT_EQ(r.measured["gpus"][0]["peak_used_bytes"].get<std::int64_t>(), 4600 * kMiB);
}

TEST(DeviceChecks, MemoryNeverReleasedNamesTheHolder) {
  // The holder is a job process in a PID namespace: pid 7 inside.
  auto tl = timeline({reading(3 * kSecond, 0, 4600, {job_proc(4242, 4096, {4242, 7})}),
                      reading(5 * kSecond, 0, 4600, {job_proc(4242, 4096, {4242, 7})})});
  auto r = device_memory_released(tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_NE(r.reason.find("GPU 0: 4.0 GiB above its baseline"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("pid 4242 (python3) [pid 7 in its namespace]: 4.0 GiB"),
            std::string::npos)
      << r.reason;
  auto g = r.measured["gpus"][0];
  EXPECT_FALSE(g["released"].get<bool>());
  EXPECT_TRUE(g["release_ms"].is_null());
  ASSERT_EQ(g["holders"].size(), 1u);
  EXPECT_EQ(g["holders"][0]["ns_pid"].get<int>(), 7);
}

TEST(DeviceChecks, MemoryReleasedLate) {
  auto tl = timeline({reading(5 * kSecond, 0, 4600, {job_proc(4242, 4096)}),
                      reading(14 * kSecond, 0, 4600, {job_proc(4242, 4096)}),
                      reading(15 * kSecond, 0, 500)});
  auto r = device_memory_released(tl, {.tolerance_bytes = 64 * kMiB, .deadline = 10 * kSecond});
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_NE(r.reason.find("released 13s after the job's end (deadline 10s)"), std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("pid 4242"), std::string::npos) << r.reason;
  EXPECT_EQ(r.measured["gpus"][0]["release_ms"].get<double>(), 13000.0);
}

TEST(DeviceChecks, MemoryThatDropsAndComesBackIsNotReleased) {
  auto tl = timeline({reading(3 * kSecond, 0, 500), reading(4 * kSecond, 0, 2000)});
  EXPECT_EQ(device_memory_released(tl).status, CheckStatus::Fail);
}

TEST(DeviceChecks, ToleranceAndForeignProcessesAtBaseline) {
  // A foreign process present at baseline is not blamed; 40 MiB is within 64.
  GpuProcess other;
  other.nvml_pid = other.pid = 99;
  other.comm = "Xorg";
  other.used_bytes = 400 * kMiB;
  auto tl = timeline({reading(3 * kSecond, 0, 540, {other})});
  tl.baseline[0].processes = {other};
  EXPECT_EQ(device_memory_released(tl).status, CheckStatus::Pass);
  auto r = device_memory_released(tl, {.tolerance_bytes = 16 * kMiB, .deadline = 10 * kSecond});
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["gpus"][0]["holders"].size(), 0u) << "the baseline process is not blamed";
}

TEST(DeviceChecks, OnlyTheJobsGpusAreJudged) {
  auto tl = timeline({reading(3 * kSecond, 0, 4600), reading(3 * kSecond, 1, 900)});
  tl.gpus.push_back({1, "GPU-bbbb", "00000000:19:00.0", "Fake", 80 * 1024 * kMiB});
  tl.baseline.push_back(reading(0, 1, 900));
  tl.job_gpus = {1};
  EXPECT_EQ(device_memory_released(tl).status, CheckStatus::Pass);
  tl.job_gpus = {};
  EXPECT_EQ(device_memory_released(tl).status, CheckStatus::Fail);
}

TEST(DeviceChecks, NoReadingAfterTheJobIsAnError) {
  auto tl = timeline({});
  EXPECT_EQ(device_memory_released(tl).status, CheckStatus::Error);
}

TEST(DeviceChecks, WithoutADriverAllAreSkippedNeverPassed) {
  DeviceTimeline tl;
  tl.unavailable = "no NVIDIA driver: cannot load libnvidia-ml.so.1";
  for (const char* name : {kDeviceMemoryReleased, kNoDeviceHolders, kDeviceAllocProbe}) {
    auto r = run_device_check(name, tl);
    EXPECT_EQ(r.status, CheckStatus::Skipped) << name;
    EXPECT_NE(r.reason.find("libnvidia-ml.so.1"), std::string::npos) << r.reason;
  }
  EXPECT_EQ(run_device_check("no_such_check", tl).status, CheckStatus::Error);
}

TEST(DeviceChecks, HoldersLeftByTheJobFail) {
  auto tl = timeline({reading(3 * kSecond, 0, 500)});
  DeviceHolder job;
  job.pid = 4300;
  job.ppid = 1;
  job.comm = "pt_data_worker";
  job.devices = {"/dev/nvidia0", "/dev/nvidiactl"};
  job.nspid = {4300, 12};
  job.orphan = true;
  DeviceHolder other;
  other.pid = 55;
  other.comm = "nvidia-persiste";
  other.devices = {"/dev/nvidiactl"};
  tl.holders_after = std::vector<DeviceHolder>{other};
  auto pass = no_device_holders(tl);
  EXPECT_EQ(pass.status, CheckStatus::Pass) << pass.reason;
  EXPECT_NE(pass.reason.find("1 other process"), std::string::npos);
  tl.holders_after->push_back(job);
  auto r = no_device_holders(tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_NE(r.reason.find("pid 4300 (pt_data_worker, orphan) holds /dev/nvidia0"),
            std::string::npos)
      << r.reason;
  EXPECT_EQ(r.measured["holders"][0]["ns_pid"].get<int>(), 12);
}

TEST(DeviceChecks, JobProcessStillOwningMemoryPerNvmlIsAHolder) {
  auto tl = timeline({reading(3 * kSecond, 0, 4600, {job_proc(4242, 4096)})});
  tl.holders_after = std::vector<DeviceHolder>{};
  auto r = no_device_holders(tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["holders"][0]["source"], "nvml");
}

TEST(DeviceChecks, HolderScanMissingIsSkipped) {
  auto tl = timeline({});
  tl.holders_unavailable = "bad device pattern";
  auto r = no_device_holders(tl);
  EXPECT_EQ(r.status, CheckStatus::Skipped);
  EXPECT_EQ(r.reason, "bad device pattern");
}

TEST(DeviceChecks, ProbeResults) {
  auto tl = timeline({});
  EXPECT_EQ(device_alloc_probe(tl).status, CheckStatus::Skipped) << "the probe did not run";
  GpuProbe ok;
  ok.index = 0;
  ok.status = ProbeStatus::Ok;
  tl.probe_after = ProbeReport{"", {ok}};
  EXPECT_EQ(device_alloc_probe(tl).status, CheckStatus::Pass);
  GpuProbe hung;
  hung.index = 0;
  hung.status = ProbeStatus::TimedOut;
  hung.error = "no answer within 20s: killed";
  tl.probe_after = ProbeReport{"", {hung}};
  auto r = device_alloc_probe(tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_NE(r.reason.find("GPU 0 timed_out: no answer within 20s"), std::string::npos) << r.reason;
  tl.probe_after = ProbeReport{"no CUDA runtime: libcudart.so: not found", {}};
  EXPECT_EQ(device_alloc_probe(tl).status, CheckStatus::Skipped);
  tl.probe_after = ProbeReport{"", {}};
  EXPECT_EQ(device_alloc_probe(tl).status, CheckStatus::Fail) << "GPU 0 has no result";
}

}  // namespace
}  // namespace aftermath
