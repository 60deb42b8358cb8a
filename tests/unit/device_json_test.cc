// Unit tests for the device types as JSON (harness/core/device_json): each
// field under its name, and a device timeline written compactly (the
// processes of each GPU's last sample only, the scan and probe after the job
// or why there were none).
#include "harness/core/device_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/units.h"

namespace aftermath {
namespace {

using nlohmann::json;

using testing_units::msec;

GpuProcess gpu_process(int pid, std::int64_t used) {
  GpuProcess p;
  p.nvml_pid = 50000 + pid;
  p.pid = pid;
  p.nspid = {50000 + pid, pid};
  p.comm = "python3";
  p.ppid = 1;
  p.state = 'S';
  p.used_bytes = used;
  p.in_job = true;
  p.orphan = true;
  return p;
}

GpuSample gpu_sample(Nanos t, int index, std::int64_t used, std::vector<GpuProcess> procs = {}) {
  GpuSample s;
  s.t = t;
  s.index = index;
  s.total = 1000;
  s.used = used;
  s.free = 1000 - used;
  s.processes = std::move(procs);
  return s;
}

TEST(DeviceJson, AProbeWithItsStatusByNameAndItsTimeInMilliseconds) {
  GpuProbe p;
  p.ordinal = 1;
  p.index = 3;
  p.uuid = "GPU-1";
  p.pci_bus_id = "00000000:3B:00.0";
  p.status = ProbeStatus::TimedOut;
  p.error = "no answer";
  p.free = 10;
  p.total = 20;
  p.elapsed = msec(1500);
  json j = to_json(p);
  EXPECT_EQ(j, (json{{"ordinal", 1},
                     {"index", 3},
                     {"uuid", "GPU-1"},
                     {"pci_bus_id", "00000000:3B:00.0"},
                     {"status", "timed_out"},
                     {"error", "no answer"},
                     {"free_bytes", 10},
                     {"total_bytes", 20},
                     {"ms", 1500.0}}));
}

TEST(DeviceJson, AGpuProcessAndItsStateLetter) {
  json j = to_json(gpu_process(7, 4096));
  EXPECT_EQ(j["nvml_pid"], 50007);
  EXPECT_EQ(j["pid"], 7);
  EXPECT_EQ(j["nspid"], json::array({50007, 7}));
  EXPECT_EQ(j["used_bytes"], 4096);
  EXPECT_EQ(j["in_job"], true);
  EXPECT_EQ(j["orphan"], true);
  EXPECT_EQ(j["state"], "S");

  GpuProcess unfound;  // not found in /proc: no state letter, not a NUL byte
  unfound.used_bytes = -1;
  json u = to_json(unfound);
  EXPECT_EQ(u["state"], "");
  EXPECT_EQ(u["used_bytes"], -1);
}

TEST(DeviceJson, ADeviceFileHolder) {
  DeviceHolder h;
  h.pid = 42;
  h.ppid = 1;
  h.comm = "python3";
  h.devices = {"/dev/nvidia0", "/dev/nvidiactl"};
  h.nspid = {42};
  h.uid = 1000;
  h.orphan = true;
  h.zombie = true;
  EXPECT_EQ(to_json(h), (json{{"pid", 42},
                              {"ppid", 1},
                              {"comm", "python3"},
                              {"devices", {"/dev/nvidia0", "/dev/nvidiactl"}},
                              {"nspid", {42}},
                              {"uid", 1000},
                              {"in_job", false},
                              {"orphan", true},
                              {"zombie", true}}));
}

TEST(DeviceJson, AnUnavailableTimelineIsOnlyWhy) {
  DeviceTimeline tl;
  tl.unavailable = "no NVIDIA driver";
  tl.gpus.push_back(GpuInfo{0, "GPU-0", "bus", "A100", 1000});
  EXPECT_EQ(to_json(tl), (json{{"unavailable", "no NVIDIA driver"}}));
}

TEST(DeviceJson, ATimelineKeepsOnlyEachGpusLastProcesses) {
  DeviceTimeline tl;
  tl.gpus = {GpuInfo{0, "GPU-0", "bus0", "A100", 1000}, GpuInfo{1, "GPU-1", "bus1", "A100", 1000}};
  tl.job_gpus = {1};
  tl.origin = msec(700);
  tl.baseline = {gpu_sample(0, 0, 10, {gpu_process(3, 10)}), gpu_sample(0, 1, 0)};
  tl.samples = {gpu_sample(msec(100), 0, 500, {gpu_process(8, 490)}),
                gpu_sample(msec(100), 1, 300, {gpu_process(9, 300)}),
                gpu_sample(msec(200), 0, 20, {gpu_process(3, 10)}), gpu_sample(msec(200), 1, 0)};
  tl.samples[3].error = "NVML_ERROR_GPU_IS_LOST";
  json j = to_json(tl);
  EXPECT_EQ(j["unavailable"], "");
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][1], (json{{"index", 1},
                                {"uuid", "GPU-1"},
                                {"pci_bus_id", "bus1"},
                                {"name", "A100"},
                                {"total_bytes", 1000}}));
  EXPECT_EQ(j["job_gpus"], json::array({1}));
  EXPECT_EQ(j["origin_ms"], 700.0);
  ASSERT_EQ(j["baseline"].size(), 2u);
  EXPECT_EQ(j["baseline"][0]["processes"][0]["pid"], 3);  // the baseline keeps its processes
  ASSERT_EQ(j["samples"].size(), 4u);
  EXPECT_EQ(j["samples"][0],
            (json{{"t_ms", 100.0}, {"index", 0}, {"used_bytes", 500}, {"free_bytes", 500}}));
  EXPECT_FALSE(j["samples"][0].contains("processes"));  // samples are compact
  EXPECT_FALSE(j["samples"][0].contains("error"));
  EXPECT_EQ(j["samples"][3]["error"], "NVML_ERROR_GPU_IS_LOST");
  // Each GPU's processes as of its last sample: pid 8 on GPU 0 is gone by then.
  ASSERT_EQ(j["last_processes"]["0"].size(), 1u);
  EXPECT_EQ(j["last_processes"]["0"][0]["pid"], 3);
  EXPECT_TRUE(j["last_processes"]["1"].empty());
}

TEST(DeviceJson, NoScanOrProbeAfterTheJobSaysSo) {
  DeviceTimeline tl;
  tl.holders_unavailable = "no /proc access";
  json j = to_json(tl);
  EXPECT_TRUE(j["holders_after"].is_null());
  EXPECT_EQ(j["holders_unavailable"], "no /proc access");
  EXPECT_TRUE(j["probe_after"].is_null());
  EXPECT_TRUE(j["last_processes"].empty());
}

TEST(DeviceJson, TheScanAndProbeAfterTheJob) {
  DeviceTimeline tl;
  DeviceHolder h;
  h.pid = 42;
  tl.holders_after = std::vector<DeviceHolder>{h};
  tl.holders_unavailable = "ignored when there is a scan";
  ProbeReport pr;
  pr.unavailable = "";
  GpuProbe p;
  p.ordinal = 0;
  p.status = ProbeStatus::Ok;
  pr.gpus = {p};
  tl.probe_after = pr;
  json j = to_json(tl);
  ASSERT_EQ(j["holders_after"].size(), 1u);
  EXPECT_EQ(j["holders_after"][0]["pid"], 42);
  EXPECT_FALSE(j.contains("holders_unavailable"));
  EXPECT_EQ(j["probe_after"]["unavailable"], "");
  ASSERT_EQ(j["probe_after"]["gpus"].size(), 1u);
  EXPECT_EQ(j["probe_after"]["gpus"][0]["status"], "ok");

  DeviceTimeline empty_scan;  // a scan that found nobody is not "no scan"
  empty_scan.holders_after = std::vector<DeviceHolder>{};
  json e = to_json(empty_scan);
  EXPECT_TRUE(e["holders_after"].is_array());
  EXPECT_TRUE(e["holders_after"].empty());
}

}  // namespace
}  // namespace aftermath
