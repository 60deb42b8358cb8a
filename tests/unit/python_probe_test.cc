#include "harness/observe/python_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using aftermath::testing::TempDir;

std::string write_exec(const std::string& path, const std::string& text) {
  {
    std::ofstream(path) << text;
  }
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(JobPython, AnInterpreterItselfOrTheOneOnAScriptsHashBang) {
  TempDir dir("aftermath-job-python");
  EXPECT_EQ(job_python({"/usr/bin/python3", "train.py"}), "/usr/bin/python3");
  EXPECT_EQ(job_python({"/venv/bin/python", "-m", "torch.distributed.run"}), "/venv/bin/python");
  EXPECT_EQ(job_python({"/opt/py/bin/python3.11"}), "/opt/py/bin/python3.11");
  // A venv's console script (torchrun, pytest) names its interpreter.
  std::string torchrun =
      write_exec(dir.path() + "/torchrun", "#!/venv/bin/python3.11\nimport sys\n");
  EXPECT_EQ(job_python({torchrun, "--standalone", "t.py"}), "/venv/bin/python3.11");
  std::string env_script = write_exec(dir.path() + "/tool", "#!/usr/bin/env -S python3 -u\n");
  auto found = job_python({env_script});
  ASSERT_TRUE(found);
  EXPECT_EQ(std::string(*found).substr(found->rfind('/') + 1), "python3");
  std::string shell = write_exec(dir.path() + "/run.sh", "#!/bin/sh\n");
  EXPECT_EQ(job_python({shell}), std::nullopt);
  EXPECT_EQ(job_python({"/bin/true"}), std::nullopt);
  EXPECT_EQ(job_python({}), std::nullopt);
}

// A stand-in interpreter: whatever it prints is what the probe reads.
TEST(ProbePython, ReadsTheMarkedAnswerAmidOtherOutput) {
  TempDir dir("aftermath-probe-python");
  std::string py =
      write_exec(dir.path() + "/python3",
                 "#!/bin/sh\n"
                 "echo 'UserWarning: something' >&2\n"
                 "echo 'aftermath-facts {\"python\": \"3.12.1\", \"torch\": \"2.11.0+cu130\", "
                 "\"cuda\": \"13.0\", \"loader_status_interval\": 7.5, \"monitor_interval\": 0.25, "
                 "\"new_session\": true}'\n");
  PythonFacts f = probe_python(py);
  EXPECT_EQ(f.source, "probe") << f.probe_error;
  EXPECT_EQ(f.python, "3.12.1");
  ASSERT_TRUE(f.torch);
  EXPECT_EQ(f.torch->minor, 11);
  EXPECT_EQ(f.torch_cuda, "13.0");
  EXPECT_EQ(f.loader_status_interval, 7500 * kMilli);
  EXPECT_EQ(f.torchrun_monitor_interval, 250 * kMilli);
  EXPECT_TRUE(f.torchrun_signals_sessions);
  EXPECT_EQ(f.shm_manager_linger, 2000 * kMilli);
}

TEST(ProbePython, WhatTheSourcesDoNotSayComesFromTheTable) {
  TempDir dir("aftermath-probe-table");
  std::string py = write_exec(
      dir.path() + "/python3",
      "#!/bin/sh\necho 'aftermath-facts {\"python\": \"3.11.2\", \"torch\": \"1.13.0a0\"}'\n");
  PythonFacts f = probe_python(py);
  ASSERT_TRUE(f.torch);
  EXPECT_EQ(f.torchrun_monitor_interval, 5 * kSecond);
  EXPECT_FALSE(f.torchrun_signals_sessions);
  std::string no_torch =
      write_exec(dir.path() + "/python",
                 "#!/bin/sh\necho 'aftermath-facts {\"python\": \"3.13.1\", \"torch_error\": "
                 "\"No module named '\"'\"'torch'\"'\"'\"}'\n");
  PythonFacts n = probe_python(no_torch);
  EXPECT_FALSE(n.torch);
  EXPECT_EQ(n.torch_error, "No module named 'torch'");
  EXPECT_EQ(n.label(), "no torch (python 3.13.1)");
}

TEST(ProbePython, AnInterpreterThatFailsGivesTheDefaultsAndWhy) {
  TempDir dir("aftermath-probe-bad");
  std::string bad =
      write_exec(dir.path() + "/python3", "#!/bin/sh\necho 'SyntaxError: nope' >&2\nexit 1\n");
  PythonFacts f = probe_python(bad);
  EXPECT_EQ(f.source, "default");
  EXPECT_NE(f.probe_error.find("SyntaxError: nope"), std::string::npos) << f.probe_error;
  EXPECT_EQ(f.torchrun_monitor_interval, 5 * kSecond);
  PythonFacts missing = probe_python(dir.path() + "/no-such-python");
  EXPECT_EQ(missing.source, "default");
  EXPECT_FALSE(missing.probe_error.empty());
}

#ifdef AFTERMATH_DEFAULT_PYTHON
// The project's venv, for real: its torch is 2.x, and what its sources say
// is read (torchrun's 0.1 s monitor interval since 2.4).
TEST(ProbePython, TheProjectsVenvIsPyTorch2) {
  PythonFacts f = probe_python(AFTERMATH_DEFAULT_PYTHON);
  ASSERT_TRUE(f.torch) << f.probe_error << f.torch_error;
  EXPECT_GE(f.torch->major, 2);
  EXPECT_EQ(f.torchrun_monitor_interval, 100 * kMilli);
  EXPECT_EQ(f.loader_status_interval, 5 * kSecond);
  EXPECT_TRUE(f.torchrun_signals_sessions);
}
#endif

}  // namespace
}  // namespace aftermath
