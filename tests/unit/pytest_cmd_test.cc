// Unit tests for `aftermath pytest` (harness/cli/pytest_cmd): the job's
// command, its default name and its PYTHONPATH.
#include "harness/cli/pytest_cmd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace aftermath {
namespace {

using ::testing::ElementsAre;

TEST(PytestCommand, RunsPytestWithThePluginAndTheArgumentsUntouched) {
  EXPECT_THAT(pytest_command("/usr/bin/python3", {"tests/", "-n", "2", "-k", "not slow"}),
              ElementsAre("/usr/bin/python3", "-m", "pytest", "-p", "aftermath_pytest", "tests/",
                          "-n", "2", "-k", "not slow"));
}

TEST(PytestCommand, NamesTheRunAfterWhatItTests) {
  const std::string suite = std::string(AFTERMATH_SOURCE_DIR) + "/tests/pytest_leaks";
  EXPECT_EQ(pytest_run_name({suite, "-n", "2"}), "pytest-pytest_leaks");
  EXPECT_EQ(pytest_run_name({"-n", "2", "-k", "not slow", suite + "/"}), "pytest-pytest_leaks");
  EXPECT_EQ(pytest_run_name({suite + "/test_leaks.py::test_clean"}), "pytest-test_leaks.py");
  EXPECT_EQ(pytest_run_name({"-q"}), "pytest");
  EXPECT_EQ(pytest_run_name({"no/such/folder"}), "pytest");
}

TEST(PytestCommand, PutsThePluginFirstOnPythonpath) {
  EXPECT_EQ(pytest_pythonpath("/b/python", nullptr), "/b/python");
  EXPECT_EQ(pytest_pythonpath("/b/python", ""), "/b/python");
  EXPECT_EQ(pytest_pythonpath("/b/python", "/src:/lib"), "/b/python:/src:/lib");
}

}  // namespace
}  // namespace aftermath
