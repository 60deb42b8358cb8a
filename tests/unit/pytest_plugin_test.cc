// Tests for the pytest plugin (fixtures/points/aftermath_pytest.py), run by a
// real pytest under the project's python against the event socket: each test's
// start and end, answered one by one, with its node id and outcome; nothing
// at all without AFTERMATH_EVENTS; no file descriptor left between tests; the
// same output either way; a harness that never answers costs a bounded wait.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "harness/supervise/event_socket.h"
#include "tests/support/children.h"
#include "tests/support/files.h"
#include "tests/support/python.h"
#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using nlohmann::json;
using Env = std::vector<std::pair<std::string, std::string>>;

constexpr const char* kSuite = R"(import os
import pytest

fds = {}

def test_a():
    fds["a"] = sorted(os.listdir("/proc/self/fd"))

def test_b():
    # The plugin's exchanges between the two tests left no descriptor open.
    assert sorted(os.listdir("/proc/self/fd")) == fds["a"]

def test_fails():
    assert False

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
)";

class PytestPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(aftermath::testing::default_python().c_str(), X_OK) != 0)
      GTEST_SKIP() << aftermath::testing::default_python() << " is not installed";
    if (testing_children::reap_within(start({"-c", "import pytest"}, {}, dir_ / "probe.out"),
                                      60000) != 0)
      GTEST_SKIP() << "pytest is not installed for " << aftermath::testing::default_python()
                   << " (scripts/deps.sh)";
    std::ofstream(dir_ / "test_suite.py") << kSuite;
    ASSERT_TRUE(sock_.open());
  }

  // The project's python ARGS with only `env` of ours (no AFTERMATH_* of
  // the test's own environment), stdout and stderr to `out`.
  pid_t start(const std::vector<std::string>& args, const Env& env, const std::string& out) {
    std::vector<std::string> argv{aftermath::testing::default_python()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv = testing_children::exec_argv(argv);
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      for (const char* v : {"AFTERMATH_EVENTS", "AFTERMATH_POINTS", "AFTERMATH_POINT_TIMEOUT_MS",
                            "AFTERMATH_LOG_DIR", "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS"})
        ::unsetenv(v);
      ::setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    return pid;
  }

  // pytest on the suite with the plugin, run from the suite's folder.
  pid_t run_pytest(const Env& env, const std::string& out) {
    std::string code = std::string("import os, sys; sys.path.insert(0, '") + AFTERMATH_SOURCE_DIR +
                       "/fixtures/points'); os.chdir('" + dir_.path() +
                       "'); import pytest; sys.exit(pytest.main(['-q', '-p', 'aftermath_pytest', "
                       "'-p', 'no:cacheprovider', 'test_suite.py']))";
    return start({"-c", code}, env, out);
  }

  // pytest's output with its timing ("in 0.03s") taken out.
  std::string output(const std::string& file) const {
    return std::regex_replace(testing::slurp(file), std::regex(R"( in [0-9.]+s)"), " in *s");
  }

  testing::TempDir dir_{"aftermath-pytest-plugin"};
  EventSocket sock_;
};

TEST_F(PytestPlugin, ReportsEachTestsStartAndEndAndWaitsForTheAnswer) {
  testing_children::OwnedChild py(
      run_pytest({{"AFTERMATH_EVENTS", sock_.address()}}, dir_ / "with.out"));
  struct Want {
    const char* name;
    const char* test;
    const char* outcome;
  };
  const std::vector<Want> want = {
      {"pytest.test_start", "test_a", ""},       {"pytest.test_end", "test_a", "passed"},
      {"pytest.test_start", "test_b", ""},       {"pytest.test_end", "test_b", "passed"},
      {"pytest.test_start", "test_fails", ""},   {"pytest.test_end", "test_fails", "failed"},
      {"pytest.test_start", "test_skipped", ""}, {"pytest.test_end", "test_skipped", "skipped"},
      {"pytest.session_end", nullptr, ""},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(testing_children::readable_within(sock_.fd(), 30000)) << "message " << i;
    auto m = sock_.receive();
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->pid, py.pid());
    json j = json::parse(m->text);
    EXPECT_EQ(j["t"], "test");
    EXPECT_EQ(j["name"], want[i].name) << m->text;
    EXPECT_EQ(j["fields"]["nodeid"],
              want[i].test ? std::string("test_suite.py::") + want[i].test : "")
        << m->text;
    EXPECT_EQ(j["fields"]["worker"], "");
    EXPECT_EQ(j["fields"]["outcome"], want[i].outcome) << m->text;
    if (i == 0) {
      // Unanswered, the test does not start: nothing more comes meanwhile.
      EXPECT_FALSE(testing_children::readable_within(sock_.fd(), 300));
    }
    ASSERT_TRUE(sock_.reply(*m, "ok"));
  }
  int status = py.reap_within(30000);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1)
      << status << testing::slurp(dir_ / "with.out");
  EXPECT_FALSE(sock_.receive().has_value());

  // The same suite without the harness: nothing sent, and the very same output.
  testing_children::OwnedChild plain(run_pytest({}, dir_ / "without.out"));
  status = plain.reap_within(30000);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_FALSE(sock_.receive().has_value());
  EXPECT_EQ(output(dir_ / "with.out"), output(dir_ / "without.out"));
  EXPECT_NE(output(dir_ / "without.out").find("1 failed, 2 passed, 1 skipped"), std::string::npos)
      << output(dir_ / "without.out");
}

// A harness that never answers: each boundary waits AFTERMATH_POINT_TIMEOUT_MS
// at most, and the suite still runs to its end.
TEST_F(PytestPlugin, AHarnessThatNeverAnswersCostsABoundedWait) {
  testing_children::OwnedChild py(
      run_pytest({{"AFTERMATH_EVENTS", sock_.address()}, {"AFTERMATH_POINT_TIMEOUT_MS", "100"}},
                 dir_ / "out"));
  int status = py.reap_within(60000);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1)
      << status << testing::slurp(dir_ / "out");
  int messages = 0;
  while (sock_.receive()) ++messages;
  EXPECT_EQ(messages, 9);  // 4 tests × start and end, and the session's end
}

}  // namespace
}  // namespace aftermath
