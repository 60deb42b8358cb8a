// End-to-end: a real pytest suite (tests/pytest_leaks/) run by `aftermath
// pytest`, one clean test and five that each plant a leak (workers kept alive
// by a global iterator until the session ends, orphaned DataLoader workers, a
// /dev/shm segment, a zombie, a daemon's grandchild). aftermath must name
// exactly the five leaking tests, each with what it left, in result.json,
// junit.xml, the terminal and the HTML report, alone and under pytest-xdist.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "e2e_util.h"

using namespace std::chrono_literals;
using e2e::TempDir;
using nlohmann::json;

namespace {

// Why pytest (with pytest-xdist) cannot run under `py` here, or "".
std::string pytest_unavailable(const std::string& py) {
  static std::map<std::string, std::string> cache;
  if (auto it = cache.find(py); it != cache.end()) return it->second;
  std::string why = [&] {
    if (!e2e::torch_unavailable(py).empty()) return e2e::torch_unavailable(py);
    TempDir d;
    e2e::Child c = e2e::spawn({py, "-c", "import pytest, xdist"}, d / "out", d / "err");
    if (c.pid <= 0) return "cannot start " + py;
    int status = e2e::wait_for(c, 60s);
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return "pytest or pytest-xdist is not installed for " + py +
             " (scripts/deps.sh): " + e2e::slurp(d / "err").substr(0, 300);
    return std::string();
  }();
  return cache[py] = why;
}

// The suite under each PyTorch this machine has (pytest from the venv, and
// Debian's python3-pytest beside python3-torch).
class PytestSuite : public ::testing::TestWithParam<e2e::TorchPython> {
 protected:
  void SetUp() override {
    if (!pytest_unavailable(py()).empty()) GTEST_SKIP() << pytest_unavailable(py());
    // The daemon pattern's attribution comes from the kernel's fork events.
    if (::geteuid() != 0) GTEST_SKIP() << "needs the kernel's process events: run as root";
  }
  static const std::string& py() { return GetParam().path; }
  TempDir dir;
  e2e::Run run(std::vector<std::string> pytest_args) {
    std::vector<std::string> a{"pytest",
                               "--out",
                               dir / "out",
                               "--python",
                               py(),
                               "--",
                               e2e::src("tests/pytest_leaks"),
                               "-q",
                               "-p",
                               "no:cacheprovider"};
    a.insert(a.end(), pytest_args.begin(), pytest_args.end());
    // Nothing written into the source tree (no __pycache__ beside the suite).
    return e2e::aftermath(dir, a, 150s, {"PYTHONDONTWRITEBYTECODE=1"});
  }
  static const json& scenario(const e2e::Run& r) { return r.result.at("scenarios").at(0); }
  static std::string short_name(const json& t) {
    std::string id = t.at("nodeid");
    return id.substr(id.rfind("::") + 2);
  }
  // Every test's leaks, by the test's function name.
  static std::map<std::string, std::multiset<std::string>> leaks(const e2e::Run& r) {
    std::map<std::string, std::multiset<std::string>> out;
    for (const auto& t : scenario(r).at("tests")) {
      auto& kinds = out[short_name(t)];
      for (const auto& l : t.at("leaks")) kinds.insert(l.at("kind").get<std::string>());
    }
    return out;
  }
  void expect_exactly_the_leaking_tests(const e2e::Run& r) {
    ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
    const json& sc = scenario(r);
    ASSERT_EQ(sc.at("tests").size(), 6u) << sc.at("tests").dump(1);
    for (const auto& t : sc.at("tests")) EXPECT_EQ(t.at("outcome"), "passed") << t.dump();
    auto l = leaks(r);
    EXPECT_TRUE(l["test_clean"].empty()) << sc.at("tests").dump(1);
    // The iterator kept in a global: both its workers, alive until the
    // session ended, though other tests ran after it.
    EXPECT_EQ(l["test_keeps_loader_iterator"], (std::multiset<std::string>{"process", "process"}))
        << sc.at("tests").dump(1);
    EXPECT_FALSE(l["test_orphans_loader_workers"].empty());
    for (const auto& k : l["test_orphans_loader_workers"])
      EXPECT_EQ(k, "orphan") << sc.at("tests").dump(1);
    EXPECT_EQ(l["test_leaks_shm_segment"], std::multiset<std::string>{"shm"});
    EXPECT_EQ(l["test_leaves_zombie"], std::multiset<std::string>{"zombie"});
    // The daemon pattern's grandchild, re-parented before any sample: its
    // test's by the kernel's fork events (as root, where they may be heard).
    EXPECT_EQ(l["test_daemon_grandchild"], std::multiset<std::string>{"orphan"})
        << sc.at("tests").dump(1);
    // The clean test's own child, where a sample saw it, is its and no leak.
    for (const auto& t : sc.at("tests")) {
      if (short_name(t) == "test_clean") {
        EXPECT_LE(t.at("processes").size(), 1u) << t.dump();
      }
    }

    const json c = e2e::check(r, "tests_clean");
    EXPECT_EQ(c.at("status"), "fail");
    std::string reason = c.at("reason");
    EXPECT_NE(reason.find("5 of 6 test(s) left something behind"), std::string::npos) << reason;
    EXPECT_EQ(reason.find("test_clean"), std::string::npos) << reason;
    EXPECT_EQ(sc.at("verdict"), "fail");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(e2e::check_status(r, "job_exit"), "pass");  // pytest itself saw nothing wrong
    // The repro line runs the same job: the plugin's folder on PYTHONPATH.
    std::string repro = sc.at("repro");
    EXPECT_EQ(repro.rfind("PYTHONPATH=", 0), 0u) << repro;
    EXPECT_NE(repro.find(" run --seed "), std::string::npos) << repro;
    EXPECT_NE(repro.find(" -m pytest -p aftermath_pytest "), std::string::npos) << repro;

    // The terminal: one line per leaking test, none for the clean one.
    for (const char* line :
         {R"(test \S+::test_keeps_loader_iterator( \[gw\d\])? left process: )",
          R"(test \S+::test_orphans_loader_workers( \[gw\d\])? left orphan: )",
          R"(test \S+::test_leaks_shm_segment( \[gw\d\])? left shm: /dev/shm/torch_)",
          R"(test \S+::test_leaves_zombie( \[gw\d\])? left zombie: )"})
      EXPECT_TRUE(std::regex_search(r.out, std::regex(line))) << line << "\n" << r.out;
    EXPECT_EQ(r.out.find("test_clean"), std::string::npos) << r.out;

    // JUnit: one testcase per test, the leaking ones failed.
    std::string junit = e2e::slurp(dir / "out/junit.xml");
    EXPECT_NE(junit.find("tests=\"6\" failures=\"5\""), std::string::npos) << junit;
    EXPECT_NE(junit.find("test_leaks\" name=\"test_clean\" time="), std::string::npos) << junit;
    EXPECT_NE(junit.find("name=\"test_leaves_zombie\""), std::string::npos);
    // HTML: the boundaries on the timeline, the table of tests.
    std::string html = e2e::slurp(dir / "out/report.html");
    EXPECT_NE(html.find("test-span test-leak"), std::string::npos);
    EXPECT_NE(html.find("<h3>Tests (6, 5 left something behind)</h3>"), std::string::npos);
  }
};

TEST_P(PytestSuite, NamesExactlyTheLeakingTests) {
  auto r = run({});
  expect_exactly_the_leaking_tests(r);
  if (r.result.is_null()) return;
  for (const auto& t : scenario(r).at("tests")) {
    EXPECT_EQ(t.at("worker"), "");
    EXPECT_EQ(t.at("pid"), scenario(r).at("top").at("pid"));  // pytest itself ran them
  }
}

TEST_P(PytestSuite, NamesExactlyTheLeakingTestsUnderXdist) {
  auto r = run({"-n", "2"});
  expect_exactly_the_leaking_tests(r);
  if (r.result.is_null()) return;
  // Each test ran in a worker (gw0, gw1), never in the controller, and one
  // worker is one process.
  std::map<std::string, std::set<long long>> pids;
  for (const auto& t : scenario(r).at("tests")) {
    std::string w = t.at("worker");
    EXPECT_EQ(w.rfind("gw", 0), 0u) << t.dump();
    EXPECT_NE(t.at("pid"), scenario(r).at("top").at("pid"));
    pids[w].insert(t.at("pid").get<long long>());
  }
  for (const auto& [w, p] : pids) EXPECT_EQ(p.size(), 1u) << w;
}

// Bad input names the option; nothing is launched.
TEST(PytestCommand, RefusesAMissingDoubleDashAndScenarioFiles) {
  TempDir dir;
  auto none = e2e::aftermath(dir, {"pytest", "--out", dir / "out"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("give pytest's arguments after --"), std::string::npos) << none.err;
  auto files = e2e::aftermath(dir, {"pytest", "--out", dir / "out", "x.yaml", "--", "tests"});
  EXPECT_EQ(files.exit_code, 2);
  EXPECT_NE(files.err.find("takes no scenario files ('x.yaml')"), std::string::npos) << files.err;
  // An interpreter without pytest, or none at all.
  auto nopytest = e2e::aftermath(
      dir, {"pytest", "--out", dir / "out", "--python", "/bin/false", "--", "tests"});
  EXPECT_EQ(nopytest.exit_code, 2);
  EXPECT_NE(nopytest.err.find("--python /bin/false cannot import pytest"), std::string::npos)
      << nopytest.err;
  auto missing = e2e::aftermath(
      dir, {"pytest", "--out", dir / "out", "--python", dir / "no-python", "--", "tests"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--python '" + dir / "no-python" + "': not found or not executable"),
            std::string::npos)
      << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out/result.json"));
}

INSTANTIATE_TEST_SUITE_P(Versions, PytestSuite, ::testing::ValuesIn(e2e::torch_pythons()),
                         e2e::torch_python_name);

}  // namespace
