// Unit tests for harness/observe/probe: the runner with real child programs
// (a probe that hangs must be killed at its deadline; each GPU's child sees
// only its GPU; a probe that cannot start or says nothing is an error), the
// line parser, and the real aftermath-probe when it was built beside us.
#include "harness/observe/probe.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/core/types.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;

GpuInfo gpu(int index, std::string uuid) {
  GpuInfo g;
  g.index = index;
  g.uuid = std::move(uuid);
  g.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  g.name = "Fake GPU";
  return g;
}

// A probe written in shell: argv for /bin/sh -c SCRIPT.
ProbeCommand sh(const std::string& script, Nanos deadline = 10 * kSecond) {
  ProbeCommand c;
  c.argv = {"/bin/sh", "-c", script};
  c.deadline = deadline;
  return c;
}

TEST(ProbeParse, Lines) {
  auto ok = parse_probe_line(R"({"ordinal":0,"status":"ok","name":"H100","uuid":"GPU-1",)"
                             R"("pci_bus_id":"0000:3b:00.0","free":100,"total":200,"ms":3.5})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, ProbeStatus::Ok);
  EXPECT_EQ(ok->ordinal, 0);
  EXPECT_EQ(ok->uuid, "GPU-1");
  EXPECT_EQ(ok->free, 100);
  EXPECT_EQ(ok->total, 200);
  auto failed = parse_probe_line(R"({"ordinal":1,"status":"failed","stage":"cudaMalloc",)"
                                 R"("error":"cudaErrorMemoryAllocation: out of memory"})");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, ProbeStatus::Failed);
  EXPECT_EQ(failed->error, "cudaErrorMemoryAllocation: out of memory");
  auto un = parse_probe_line(R"({"status":"unavailable","reason":"no_driver","error":"x"})");
  ASSERT_TRUE(un);
  EXPECT_EQ(un->ordinal, -1);
  EXPECT_FALSE(parse_probe_line("warning: something"));
  EXPECT_FALSE(parse_probe_line(R"({"status":"maybe"})"));
  EXPECT_FALSE(parse_probe_line("[1,2]"));
}

TEST(ProbeRunner, AHangingProbeIsKilledAtItsDeadline) {
  ProbeCommand c;
  c.argv = {"/bin/sleep", "30"};
  c.deadline = 300 * kMilli;
  ProcessProbeRunner runner(c);
  Nanos t0 = monotonic_now();
  auto r = runner.run({gpu(0, "GPU-a"), gpu(1, "GPU-b")});
  Nanos took = monotonic_now() - t0;
  // Both children ran in parallel: one deadline, not two.
  EXPECT_GE(took, 300 * kMilli);
  EXPECT_LT(took, 3 * kSecond);
  ASSERT_EQ(r.gpus.size(), 2u);
  for (const auto& p : r.gpus) {
    EXPECT_EQ(p.status, ProbeStatus::TimedOut);
    EXPECT_NE(p.error.find("no answer within 300ms"), std::string::npos) << p.error;
    EXPECT_GE(p.elapsed, 300 * kMilli);
  }
  EXPECT_EQ(r.gpus[1].index, 1);
  EXPECT_EQ(r.gpus[1].uuid, "GPU-b");
  EXPECT_TRUE(r.unavailable.empty());
}

TEST(ProbeRunner, OneChildPerGpuSeesOnlyThatGpu) {
  // The fake probe reports what CUDA would see: its CUDA_VISIBLE_DEVICES.
  ProcessProbeRunner runner(
      sh(R"(printf '{"ordinal":0,"status":"ok","uuid":"%s","free":1,"total":2,"order":"%s"}\n' )"
         R"("$CUDA_VISIBLE_DEVICES" "$CUDA_DEVICE_ORDER")"));
  auto r = runner.run({gpu(0, "GPU-aaaa"), gpu(3, "GPU-dddd")});
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].index, 0);
  EXPECT_EQ(r.gpus[0].uuid, "GPU-aaaa");
  EXPECT_EQ(r.gpus[1].index, 3);
  EXPECT_EQ(r.gpus[1].uuid, "GPU-dddd");
  EXPECT_EQ(r.gpus[1].status, ProbeStatus::Ok);
}

TEST(ProbeRunner, WithoutNvmlOneChildProbesEverything) {
  ProcessProbeRunner runner(sh(R"(echo '{"ordinal":0,"status":"ok"}'; echo 'noise'; )"
                               R"(echo '{"ordinal":1,"status":"failed",)"
                               R"("error":"cudaErrorDevicesUnavailable: busy"}'; exit 1)"));
  auto r = runner.run({});
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].index, -1);
  EXPECT_EQ(r.gpus[1].ordinal, 1);
  EXPECT_EQ(r.gpus[1].status, ProbeStatus::Failed);
  EXPECT_NE(r.gpus[1].error.find("busy"), std::string::npos);
}

TEST(ProbeRunner, EveryGpuUnavailableBecomesOneReason) {
  ProcessProbeRunner runner(sh(R"(echo '{"status":"unavailable","reason":"no_driver",)"
                               R"("error":"no usable NVIDIA driver"}'; exit 3)"));
  auto r = runner.run({gpu(0, "GPU-a"), gpu(1, "GPU-b")});
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_EQ(r.unavailable, "no usable NVIDIA driver");
}

TEST(ProbeRunner, SilentProbeIsAnErrorWithItsStderr) {
  ProcessProbeRunner runner(sh("echo 'libcudart exploded' >&2; exit 7"));
  auto r = runner.run({gpu(0, "GPU-a")});
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].status, ProbeStatus::Error);
  EXPECT_NE(r.gpus[0].error.find("exited(7)"), std::string::npos) << r.gpus[0].error;
  EXPECT_NE(r.gpus[0].error.find("libcudart exploded"), std::string::npos) << r.gpus[0].error;
}

TEST(ProbeRunner, AProbeThatAnswersThenHangsIsStillTimedOut) {
  // It got its byte, then wedged tearing its context down: not healthy.
  ProcessProbeRunner runner(
      sh(R"(echo '{"ordinal":0,"status":"ok"}'; exec sleep 30)", 300 * kMilli));
  auto r = runner.run({gpu(0, "GPU-a")});
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].status, ProbeStatus::TimedOut);
  EXPECT_NE(r.gpus[0].error.find("answered ok, then hung"), std::string::npos) << r.gpus[0].error;
}

TEST(ProbeRunner, MissingProgramIsAnError) {
  ProbeCommand c;
  c.argv = {"/nonexistent/aftermath-probe"};
  auto r = ProcessProbeRunner(c).run({gpu(0, "GPU-a")});
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].status, ProbeStatus::Error);
  EXPECT_NE(r.gpus[0].error.find("No such file"), std::string::npos) << r.gpus[0].error;
}

// This process's children (zombies included), from /proc/self/task/*/children.
std::string children() {
  std::string all;
  for (const auto& t : fs::directory_iterator("/proc/self/task")) {
    std::ifstream f(t.path() / "children");
    std::string s;
    std::getline(f, s);
    all += s;
  }
  return all;
}

TEST(ProbeRunner, LeavesNoChildBehind) {
  std::string before = children();
  ProbeCommand c;
  c.argv = {"/bin/sleep", "30"};
  c.deadline = 100 * kMilli;
  ProcessProbeRunner(c).run({gpu(0, "GPU-a"), gpu(1, "GPU-b")});
  // Killed and reaped: not even a zombie is left.
  EXPECT_EQ(children(), before);
}

// The real probe, built by harness/observe/device.cmake into the same bin/.
TEST(ProbeReal, ReportsOneLinePerGpuOrWhyNot) {
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  std::string probe = (self.parent_path() / "aftermath-probe").string();
  if (ec || !fs::exists(probe)) GTEST_SKIP() << "aftermath-probe is not built beside the tests";
  ProbeCommand c;
  c.argv = {probe};
  c.deadline = 60 * kSecond;
  auto r = ProcessProbeRunner(c).run({});
  if (!r.unavailable.empty()) {
    // No driver here: it must say so, not fail or hang.
    EXPECT_TRUE(r.unavailable.find("no CUDA runtime") != std::string::npos ||
                r.unavailable.find("driver") != std::string::npos ||
                r.unavailable.find("no CUDA device") != std::string::npos)
        << r.unavailable;
    return;
  }
  ASSERT_FALSE(r.gpus.empty());
  for (const auto& g : r.gpus) {
    EXPECT_EQ(g.status, ProbeStatus::Ok) << g.error;
    EXPECT_GT(g.total, 0);
    EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u) << g.uuid;
  }
}

}  // namespace
}  // namespace aftermath
