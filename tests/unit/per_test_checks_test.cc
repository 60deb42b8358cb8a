// Unit tests for the per-test judgement of a pytest suite
// (harness/check/per_test_checks): which test left a process, an orphan, a zombie
// or a /dev/shm entry behind, on hand-made timelines. Each leak is planted in
// one test, and the tests beside it must stay clean.
#include "harness/check/per_test_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/run_fixtures.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace testing_run;

constexpr Nanos kSessionEnd = msec(4000);  // the pytest process (the top) exits

// A pytest boundary, as the supervisor records one.
void boundary(Timeline& tl, Nanos t, int pid, bool start, const std::string& nodeid,
              const std::string& worker = "", const std::string& outcome = "passed") {
  json f{{"nodeid", nodeid}, {"worker", worker}, {"outcome", start ? "" : outcome}};
  tl.add(obs::event(t, pid, start ? "pytest.test_start" : "pytest.test_end", f.dump()));
}

// The session: pytest is the top (pid 100); test_a runs [100, 300] ms,
// test_b [400, 600], test_c [700, 800]; test_a starts a child of its own and
// waits for it.
Timeline session() {
  Timeline tl = skeleton(kSessionEnd);
  boundary(tl, msec(100), kTop, true, "t.py::test_a");
  life(tl, 201, kTop, msec(150), msec(250), msec(251), "python3", Role::Unknown);
  boundary(tl, msec(300), kTop, false, "t.py::test_a");
  boundary(tl, msec(400), kTop, true, "t.py::test_b");
  boundary(tl, msec(600), kTop, false, "t.py::test_b");
  boundary(tl, msec(700), kTop, true, "t.py::test_c");
  boundary(tl, msec(800), kTop, false, "t.py::test_c");
  return tl;
}

std::vector<TestResult> judge(const Timeline& raw, const Scenario& sc = make_scenario()) {
  Timeline tl = sorted(raw);
  auto procs = build_histories(tl);
  return judge_tests(make_check_input(sc, tl, procs));
}

const TestResult& test_named(const std::vector<TestResult>& ts, const std::string& nodeid) {
  for (const auto& t : ts)
    if (t.nodeid == nodeid) return t;
  throw std::runtime_error("no test " + nodeid);
}

std::vector<std::string> leaking(const std::vector<TestResult>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts)
    if (!t.leaks.empty()) out.push_back(t.nodeid);
  return out;
}

TEST(TestsClean, ACleanSessionPassesWithEveryTestAndItsProcesses) {
  auto ts = judge(session());
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts[0].nodeid, "t.py::test_a");
  EXPECT_EQ(ts[0].pid, kTop);
  EXPECT_EQ(ts[0].started, msec(100));
  EXPECT_EQ(ts[0].ended, msec(300));
  EXPECT_EQ(ts[0].outcome, TestOutcome::Passed);
  EXPECT_THAT(ts[0].processes, ElementsAre(201));
  EXPECT_THAT(ts[1].processes, IsEmpty());
  EXPECT_THAT(leaking(ts), IsEmpty());
  auto r = check(kTestsClean, make_scenario(), session());
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.reason, "3 test(s), none left anything behind");
}

// A subprocess SIGKILLed in test_b while its DataLoader worker lives on for
// 2.9 s: an orphan of test_b, and only of test_b.
TEST(TestsClean, AnOrphanIsTheTestsWhoseProcessLeftIt) {
  Timeline tl = session();
  life(tl, 202, kTop, msec(450), msec(550), msec(551), "python3", Role::Unknown);
  life(tl, 203, 202, msec(470), msec(3500), msec(3501), "python3", Role::Worker);
  tl.add(obs::proc_parent(msec(560), 203, kInit));
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_b"));
  const TestResult& b = test_named(ts, "t.py::test_b");
  EXPECT_THAT(b.processes, ElementsAre(202, 203));
  ASSERT_EQ(b.leaks.size(), 1u);
  EXPECT_EQ(b.leaks[0].kind, LeakKind::Orphan);
  EXPECT_EQ(b.leaks[0].pid, 203);
  EXPECT_THAT(b.leaks[0].what, HasSubstr("outlived its parent by 2.95s"));
  auto r = check(kTestsClean, make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.reason, "1 of 3 test(s) left something behind: t.py::test_b (1 orphan)");
  EXPECT_EQ(r.measured["leaking"][0]["nodeid"], "t.py::test_b");
  EXPECT_EQ(r.measured["leaking"][0]["leaks"][0]["pid"], 203);
}

// test_a keeps a DataLoader iterator in a global: its worker, alive at
// test_a's end, ends only with the session (its pytest process says so at
// 850 ms), 600 ms after test_a, within the 1 s grace: still test_a's leak,
// and only test_a's, though test_b and test_c ran meanwhile.
TEST(TestsClean, AProcessThatLivesAsLongAsTheSessionIsItsTestsLeak) {
  Timeline tl = session();
  tl.add(obs::event(msec(850), kTop, "pytest.session_end", json{{"nodeid", ""}}.dump()));
  life(tl, 205, kTop, msec(200), msec(900), msec(901), "python3", Role::Worker);
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_a"));
  const TestResult& a = test_named(ts, "t.py::test_a");
  ASSERT_EQ(a.leaks.size(), 1u);
  EXPECT_EQ(a.leaks[0].kind, LeakKind::Process);
  EXPECT_EQ(a.leaks[0].pid, 205);
  EXPECT_THAT(a.leaks[0].what,
              HasSubstr("still running when the session ended, 550ms after the test's end"));
  EXPECT_THAT(ts.size(), 3u);
  // Gone before the session ended (at 700 ms, within the grace): no leak.
  Timeline early = session();
  early.add(obs::event(msec(850), kTop, "pytest.session_end", json{{"nodeid", ""}}.dump()));
  life(early, 205, kTop, msec(200), msec(700), msec(701), "python3", Role::Worker);
  EXPECT_THAT(leaking(judge(early)), IsEmpty());
  // A worker of test_c's subprocess, which was SIGKILLed during test_c: it
  // dies on its own 60 ms after the test (within the grace), just after the
  // session ended. Its parent was gone: not held by pytest, no leak.
  Timeline killed = session();
  killed.add(obs::event(msec(810), kTop, "pytest.session_end", json{{"nodeid", ""}}.dump()));
  life(killed, 206, kTop, msec(710), msec(750), msec(751), "python3", Role::Unknown);
  life(killed, 207, 206, msec(720), msec(860), msec(861), "python3", Role::Worker);
  EXPECT_THAT(leaking(judge(killed)), IsEmpty());
}

// The same worker gone 500 ms after its parent: within the 1 s grace.
TEST(TestsClean, AnOrphanWithinItsGraceIsNoLeak) {
  Timeline tl = session();
  life(tl, 202, kTop, msec(450), msec(550), msec(551), "python3", Role::Unknown);
  life(tl, 203, 202, msec(470), msec(1050), msec(1051), "python3", Role::Worker);
  EXPECT_THAT(leaking(judge(tl)), IsEmpty());
}

// test_c's child exits at once and is never waited for: a zombie until the
// session ends.
TEST(TestsClean, AZombieIsTheTestsThatStartedIt) {
  Timeline tl = session();
  life(tl, 204, kTop, msec(720), msec(730), kSessionEnd + msec(1), "true", Role::Unknown);
  tl.add(obs::proc_state(msec(740), 204, 'Z'));
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_c"));
  const TestResult& c = test_named(ts, "t.py::test_c");
  ASSERT_EQ(c.leaks.size(), 1u);
  EXPECT_EQ(c.leaks[0].kind, LeakKind::Zombie);
  EXPECT_EQ(c.leaks[0].pid, 204);
}

// A child that exits 5 ms after its test's end and is never reaped: still
// the test's zombie.
TEST(TestsClean, AZombieJustAfterTheEndIsTheTests) {
  Timeline tl = session();
  life(tl, 204, kTop, msec(720), msec(805), kSessionEnd + msec(1), "true", Role::Unknown);
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_c"));
  EXPECT_EQ(test_named(ts, "t.py::test_c").leaks[0].kind, LeakKind::Zombie);
  EXPECT_THAT(test_named(ts, "t.py::test_c").leaks[0].what,
              HasSubstr("a zombie just after the test's end"));
}

// A zombie reaped 200 ms after the test's end: within the grace.
TEST(TestsClean, AZombieReapedWithinTheGraceIsNoLeak) {
  Timeline tl = session();
  life(tl, 204, kTop, msec(720), msec(730), msec(1000), "true", Role::Unknown);
  tl.add(obs::proc_state(msec(740), 204, 'Z'));
  EXPECT_THAT(leaking(judge(tl)), IsEmpty());
}

// A server test_a starts and never stops: still running when the run ends.
TEST(TestsClean, AProcessStillRunningAfterTheGraceIsALeak) {
  Timeline tl = session();
  life(tl, 205, kTop, msec(200), std::nullopt, std::nullopt, "server", Role::Unknown);
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_a"));
  EXPECT_EQ(test_named(ts, "t.py::test_a").leaks[0].kind, LeakKind::Process);
  EXPECT_THAT(test_named(ts, "t.py::test_a").leaks[0].what, HasSubstr("when the run ended"));

  // Exiting 500 ms after the test's end is within the 1 s grace.
  Timeline quick = session();
  life(quick, 205, kTop, msec(200), msec(800), msec(801), "server", Role::Unknown);
  EXPECT_THAT(leaking(judge(quick)), IsEmpty());
}

// test_b's subprocess still holds 512 MiB on GPU 1 after the test (NVML's
// samples): the test's device leak, beside the process itself; memory it
// held during the test, or the pytest process's own, is no leak.
TEST(TestsClean, DeviceMemoryHeldAfterTheTestIsItsLeak) {
  Timeline tl = session();
  life(tl, 209, kTop, msec(450), msec(2500), msec(2501), "python3", Role::Unknown);
  auto sample = [](Nanos t, int gpu, std::vector<GpuProcess> procs) {
    GpuSample s;
    s.t = t;
    s.index = gpu;
    s.processes = std::move(procs);
    return s;
  };
  GpuProcess held{};
  held.pid = 209;
  held.used_bytes = 512LL << 20;
  GpuProcess pytest_own{};
  pytest_own.pid = kTop;
  pytest_own.used_bytes = 64LL << 20;
  tl.device.samples = {sample(msec(500), 0, {held, pytest_own}),
                       sample(msec(2000), 1, {held, pytest_own})};
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_b"));
  const auto& leaks = test_named(ts, "t.py::test_b").leaks;
  ASSERT_EQ(leaks.size(), 2u);
  EXPECT_EQ(leaks[0].kind, LeakKind::Process);
  EXPECT_EQ(leaks[1].kind, LeakKind::Device);
  EXPECT_EQ(leaks[1].pid, 209);
  EXPECT_EQ(leaks[1].name, "GPU 1");
  EXPECT_EQ(leaks[1].bytes, 512LL << 20);
  EXPECT_THAT(leaks[1].what,
              HasSubstr("unknown 209 (python3) held 512 MiB on GPU 1 after the test's end"));
}

// Started between tests (collection, a session fixture): nobody's.
TEST(TestsClean, AProcessStartedBetweenTestsBelongsToNone) {
  Timeline tl = session();
  life(tl, 206, kTop, msec(350), std::nullopt, std::nullopt, "server", Role::Unknown);
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), IsEmpty());
  for (const auto& t : ts) EXPECT_THAT(t.processes, ::testing::Not(::testing::Contains(206)));
}

// test_b writes /dev/shm/torch_<its pid>_..._0 and never unlinks it.
TEST(TestsClean, AShmSegmentNamedByThePytestProcessIsTheRunningTests) {
  Timeline tl = session();
  tl.add(obs::shm_add(msec(500), "torch_100_a1b2_0", 65536));
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_b"));
  const TestLeak& l = test_named(ts, "t.py::test_b").leaks[0];
  EXPECT_EQ(l.kind, LeakKind::Shm);
  EXPECT_EQ(l.name, "torch_100_a1b2_0");
  EXPECT_EQ(l.bytes, 65536);
  EXPECT_THAT(l.what, HasSubstr("left behind"));
}

// Named by a test's subprocess (its pid inside the job's namespace), seen
// only after that process exited and the test ended: still that test's.
TEST(TestsClean, AShmSegmentNamedByATestsSubprocessIsThatTests) {
  Timeline tl = session();
  tl.add(obs::proc_start(msec(420), 207, kTop, "python3", "python3 x.py", Role::Unknown, 1, 0, 'S',
                         /*job_pid=*/7));
  tl.add(obs::proc_exit(msec(480), 207, Outcome::killed(9)));
  tl.add(obs::proc_gone(msec(481), 207));
  tl.add(obs::shm_add(msec(900), "torch_7_ffff_3", 4096));
  auto ts = judge(tl);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_b"));
}

// Removed 300 ms after the test's end (a torch_shm_manager's 2 s is a helper
// thing, the entry itself gets the general grace): no leak; removed 2 s
// after, a leak.
TEST(TestsClean, AShmSegmentRemovedWithinTheGraceIsNoLeak) {
  Timeline tl = session();
  tl.add(obs::shm_add(msec(500), "torch_100_a1b2_0", 4096));
  tl.add(obs::shm_remove(msec(900), "torch_100_a1b2_0"));
  EXPECT_THAT(leaking(judge(tl)), IsEmpty());
  Timeline late = session();
  late.add(obs::shm_add(msec(500), "torch_100_a1b2_0", 4096));
  late.add(obs::shm_remove(msec(2600), "torch_100_a1b2_0"));
  auto ts = judge(late);
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_b"));
  EXPECT_THAT(test_named(ts, "t.py::test_b").leaks[0].what,
              HasSubstr("(4.0 KiB) removed only 2s after the test's end"));
}

// A name with no pid: the test running when it appeared, if only one was.
TEST(TestsClean, AShmEntryWithoutAPidGoesToTheOnlyRunningTest) {
  Timeline tl = session();
  tl.add(obs::shm_add(msec(750), "psm_1234", 4096));
  EXPECT_THAT(leaking(judge(tl)), ElementsAre("t.py::test_c"));
}

// pytest-xdist: two workers (110 as gw0, 120 as gw1) run tests at the same
// time; each worker's child belongs to its own worker's test.
TEST(TestsClean, XdistWorkersKeepTheirTestsApart) {
  Timeline tl = skeleton(kSessionEnd);
  life(tl, 110, kTop, msec(10), msec(3900), msec(3901), "python3", Role::Unknown);
  life(tl, 120, kTop, msec(11), msec(3900), msec(3901), "python3", Role::Unknown);
  boundary(tl, msec(100), 110, true, "t.py::test_a", "gw0");
  boundary(tl, msec(110), 120, true, "t.py::test_b", "gw1");
  life(tl, 301, 120, msec(150), std::nullopt, std::nullopt, "server", Role::Unknown);
  life(tl, 302, 110, msec(160), msec(170), msec(171), "python3", Role::Unknown);
  boundary(tl, msec(300), 110, false, "t.py::test_a", "gw0");
  boundary(tl, msec(310), 120, false, "t.py::test_b", "gw1");
  boundary(tl, msec(400), 110, true, "t.py::test_c", "gw0");
  tl.add(obs::shm_add(msec(450), "psm_x", 4096));  // no pid, one test running: test_c's
  boundary(tl, msec(500), 110, false, "t.py::test_c", "gw0");
  auto ts = judge(tl);
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_EQ(test_named(ts, "t.py::test_b").worker, "gw1");
  EXPECT_EQ(test_named(ts, "t.py::test_b").pid, 120);
  EXPECT_THAT(test_named(ts, "t.py::test_a").processes, ElementsAre(302));
  EXPECT_THAT(test_named(ts, "t.py::test_b").processes, ElementsAre(301));
  EXPECT_THAT(leaking(ts), ElementsAre("t.py::test_b", "t.py::test_c"));
  // The workers themselves are the suite's, never a test's leak.
  for (const auto& t : ts)
    for (const auto& l : t.leaks) EXPECT_NE(l.pid, 110);
}

TEST(TestsClean, ATestTheRunEndedDuringIsListedNotJudged) {
  Timeline tl = skeleton(std::nullopt);
  boundary(tl, msec(100), kTop, true, "t.py::test_hangs");
  life(tl, 208, kTop, msec(200), std::nullopt, std::nullopt, "server", Role::Unknown);
  auto ts = judge(tl);
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_FALSE(ts[0].ended);
  EXPECT_THAT(ts[0].leaks, IsEmpty());
  auto r = check(kTestsClean, make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_EQ(r.measured["unfinished"], json::array({"t.py::test_hangs"}));
  EXPECT_THAT(r.reason, HasSubstr("1 test(s) still running when the run ended"));
}

// run_checks judges tests_clean only for a job that reported tests: other
// runs' results do not carry it at all.
TEST(TestsClean, RunChecksLeavesItOutWithoutTests) {
  Scenario sc = make_scenario();
  Timeline plain = sorted(clean_run());
  for (const auto& r : run_checks(sc, plain, build_histories(plain)))
    EXPECT_NE(r.name, kTestsClean);
  EXPECT_FALSE(saw_tests(plain));
  Timeline tl = sorted(session());
  EXPECT_TRUE(saw_tests(tl));
  bool judged = false;
  for (const auto& r : run_checks(sc, tl, build_histories(tl))) judged |= r.name == kTestsClean;
  EXPECT_TRUE(judged);
}

// A boundary the job garbled (no node id, not JSON) is ignored, never thrown on.
TEST(TestsClean, MalformedBoundariesAreIgnored) {
  Timeline tl = session();
  tl.add(obs::event(msec(900), kTop, "pytest.test_start", "not json"));
  tl.add(obs::event(msec(910), kTop, "pytest.test_start", R"({"worker":"gw0"})"));
  tl.add(obs::event(msec(920), kTop, "pytest.test_end", R"({"nodeid":"never.py::started"})"));
  EXPECT_EQ(judge(tl).size(), 3u);
}

}  // namespace
}  // namespace aftermath
