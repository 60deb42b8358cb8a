// requires: against this machine, with planted device nodes and planted
// interpreters so every answer is exercised both ways.
#include "harness/observe/requirements_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/scenario/scenario.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using aftermath::testing::TempDir;

using testing::touch;

// An executable shell script.
void script(const std::string& p, const std::string& body) {
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  ::chmod(p.c_str(), 0755);
}

Scenario job(std::vector<std::string> argv, std::vector<std::string> reqs) {
  Scenario s;
  s.name = "t";
  s.job.argv = std::move(argv);
  s.requires_ = std::move(reqs);
  return s;
}

// The reason a probe gives, nullopt when the requirement is met.
std::optional<std::string> why_not(const Status& met) {
  if (met) return std::nullopt;
  return met.error().what;
}

TEST(Requirements, GpuNeedsNvidiactlAndADeviceNode) {
  TempDir dev;
  RequirementEnv env{dev.path(), "/usr/bin/python3"};
  Scenario s = job({"/bin/true"}, {"gpu"});
  auto none = why_not(probe_requirement("gpu", s.job.argv, env));
  ASSERT_TRUE(none);
  EXPECT_THAT(*none, HasSubstr("nvidiactl absent"));
  touch(dev / "nvidiactl");
  touch(dev / "nvidia-uvm");  // not a GPU node
  auto ctl_only = why_not(probe_requirement("gpu", s.job.argv, env));
  ASSERT_TRUE(ctl_only);
  EXPECT_THAT(*ctl_only, HasSubstr("nvidia<N>"));
  touch(dev / "nvidia0");
  EXPECT_EQ(why_not(probe_requirement("gpu", s.job.argv, env)), std::nullopt);
  // Two NCCL ranks need two devices: one GPU is a reason, two meet it.
  auto one = why_not(probe_requirement("2-gpus", s.job.argv, env));
  ASSERT_TRUE(one);
  EXPECT_THAT(*one, HasSubstr("needs 2 GPUs, this machine has 1"));
  touch(dev / "nvidia1");
  EXPECT_EQ(why_not(probe_requirement("2-gpus", s.job.argv, env)), std::nullopt);
  // cuda and nccl need a GPU first: without one, that is the reason given.
  TempDir empty;
  RequirementEnv none_env{empty.path(), "/usr/bin/python3"};
  auto cuda = why_not(probe_requirement("cuda", s.job.argv, none_env));
  ASSERT_TRUE(cuda);
  EXPECT_THAT(*cuda, HasSubstr("nvidiactl absent"));
  auto nccl = why_not(probe_requirement("nccl", s.job.argv, none_env));
  ASSERT_TRUE(nccl);
  EXPECT_THAT(*nccl, HasSubstr("nvidiactl absent"));
}

TEST(Requirements, RootFollowsTheEffectiveUser) {
  Scenario s = job({"/bin/true"}, {"root"});
  EXPECT_EQ(why_not(probe_requirement("root", s.job.argv)).has_value(), ::geteuid() != 0);
}

TEST(Requirements, PythonTorchAsksTheJobsOwnInterpreter) {
  TempDir d;
  // A "python" whose import fails says why, on its last line.
  std::string bad = d / "python-without-torch";
  script(bad,
         "echo 'Traceback (most recent call last):' >&2\n"
         "echo \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1");
  Scenario s = job({bad, "job.py"}, {"python-torch"});
  auto why = why_not(probe_requirement("python-torch", s.job.argv));
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("No module named 'torch'"));
  EXPECT_THAT(*why, HasSubstr(bad));
  // One that imports it (exit 0) meets it.
  std::string good = d / "python-with-torch";
  script(good, "exit 0");
  EXPECT_EQ(why_not(probe_requirement("python-torch", std::vector<std::string>{good})),
            std::nullopt);
  // A job that is not Python is judged by the configured interpreter.
  RequirementEnv env{"/dev", bad};
  auto via_env =
      why_not(probe_requirement("python-torch", std::vector<std::string>{"/bin/true"}, env));
  ASSERT_TRUE(via_env);
  EXPECT_THAT(*via_env, HasSubstr(bad));
}

TEST(Requirements, FirstUnmetIsNamed) {
  TempDir d;
  std::string bad = d / "python-broken";
  script(bad, "exit 3");
  Scenario s = job({bad}, {"python-torch"});
  Status met = requirements_met(s.requires_, s.job.argv);
  ASSERT_FALSE(met);
  EXPECT_EQ(met.error().what.rfind("python-torch: ", 0), 0u) << met.error().what;
  EXPECT_TRUE(requirements_met({}, {"/bin/true"}));
}

TEST(Requirements, PidNamespaceProbeAgreesWithTheKernel) {
  // Whatever the answer, it must be an answer, and stable (cached).
  Scenario s = job({"/bin/true"}, {"pidns"});
  auto a = why_not(probe_requirement("pidns", s.job.argv));
  auto b = why_not(probe_requirement("pidns", s.job.argv));
  EXPECT_EQ(a, b);
  if (::geteuid() == 0) {
    EXPECT_EQ(a, std::nullopt) << *a;
  }
}

TEST(Requirements, MemoryCgroupFollowsWhereFaultCgroupsCanGo) {
  // Named by AFTERMATH_CGROUP (not cached: the environment decides).
  TempDir d;
  Scenario s = job({"/bin/true"}, {"memory-cgroup"});
  ::setenv("AFTERMATH_CGROUP", (d / "absent").c_str(), 1);
  auto missing = why_not(probe_requirement("memory-cgroup", s.job.argv));
  d.write("cg/cgroup.controllers", "cpu memory\n");
  ::setenv("AFTERMATH_CGROUP", (d / "cg").c_str(), 1);
  auto planted = why_not(probe_requirement("memory-cgroup", s.job.argv));
  ::unsetenv("AFTERMATH_CGROUP");
  ASSERT_TRUE(missing);
  EXPECT_EQ(*missing, "AFTERMATH_CGROUP=" + (d / "absent") + " is not a directory");
  EXPECT_EQ(planted, std::nullopt) << *planted;
}

}  // namespace
}  // namespace aftermath
