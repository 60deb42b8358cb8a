// Unit tests for what the renderers share (reports/view): the formatting,
// verdict and status colours, the typed run's process lanes in role order,
// where a scenario's record ends, timing order, and log links.
#include "reports/view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aftermath::report {
namespace {

TEST(ViewFormat, MillisecondsBelowASecondSecondsAbove) {
  EXPECT_EQ(format_ms(std::nullopt), "-");
  EXPECT_EQ(format_ms(0.0), "0.0 ms");
  EXPECT_EQ(format_ms(1.84), "1.8 ms");
  EXPECT_EQ(format_ms(999.9), "999.9 ms");
  EXPECT_EQ(format_ms(1000.0), "1.00 s");
  EXPECT_EQ(format_ms(1500.0), "1.50 s");
  EXPECT_EQ(format_ms(-2500.0), "-2.50 s");
}

TEST(ViewFormat, BytesInBinaryUnits) {
  EXPECT_EQ(format_bytes(0.0), "0 B");
  EXPECT_EQ(format_bytes(1023.0), "1023 B");
  EXPECT_EQ(format_bytes(65536.0), "64.0 KiB");
  EXPECT_EQ(format_bytes(2.0 * 1024 * 1024), "2.0 MiB");
  EXPECT_EQ(format_bytes(3.0 * 1024 * 1024 * 1024 * 1024 * 1024), "3072.0 TiB");
  EXPECT_EQ(format_bytes(-2048.0), "-2.0 KiB");
}

TEST(ViewFormat, NumbersWithoutTrailingZeros) {
  EXPECT_EQ(format_number(1.5), "1.5");
  EXPECT_EQ(format_number(3.0), "3");
  EXPECT_EQ(format_number(0.1234), "0.123");
  EXPECT_EQ(format_number(0.1234, 1), "0.1");
  EXPECT_EQ(format_number(2.0, 0), "2");
  EXPECT_EQ(format_number(100.0), "100");  // zeros before the point stay
  EXPECT_EQ(format_number(-0.0001), "0");  // no "-0"
}

TEST(ViewVerdicts, OnlyPassAndXfailAreGood) {
  EXPECT_TRUE(verdict_ok(Verdict::Pass));
  EXPECT_TRUE(verdict_ok(Verdict::XFail));
  for (Verdict bad : {Verdict::Fail, Verdict::XPass, Verdict::Error, Verdict::Skipped})
    EXPECT_FALSE(verdict_ok(bad)) << to_string(bad);
  EXPECT_TRUE(check_failed(CheckStatus::Fail));
  EXPECT_TRUE(check_failed(CheckStatus::Error));
  EXPECT_FALSE(check_failed(CheckStatus::Pass));
  EXPECT_FALSE(check_failed(CheckStatus::Skipped));
}

TEST(ViewRoles, KnownRolesFirstThenNewOnesThenUnknown) {
  EXPECT_LT(role_rank("launcher"), role_rank("rank"));
  EXPECT_LT(role_rank("rank"), role_rank("worker"));
  EXPECT_LT(role_rank("worker"), role_rank("helper"));
  EXPECT_LT(role_rank("helper"), role_rank("brand_new"));
  EXPECT_LT(role_rank("brand_new"), role_rank("unknown"));
  EXPECT_EQ(role_rank(""), role_rank("unknown"));
}

constexpr Nanos kMs = 1'000'000;

ProcessHistory process(int pid, Role role, Nanos started_ms = 0) {
  ProcessHistory p;
  p.pid = pid;
  p.role = role;
  p.started = started_ms * kMs;
  return p;
}

TEST(ViewProcesses, GroupedByRoleThenStartThenPid) {
  ScenarioResult sc;
  sc.processes = {process(30, Role::Worker, 5), process(20, Role::Worker, 5),
                  process(40, Role::Worker, 1), process(50, Role::Helper),
                  process(60, Role::Unknown),   process(10, Role::Launcher, 9),
                  process(11, Role::Rank, 3)};
  sc.processes[5].is_top = true;
  auto ps = processes_by_role(sc);
  std::vector<long long> pids;
  for (const auto& p : ps) pids.push_back(p.pid);
  EXPECT_EQ(pids, (std::vector<long long>{10, 11, 40, 20, 30, 50, 60}));
  EXPECT_TRUE(ps[0].top);
  EXPECT_FALSE(ps[1].top);
  EXPECT_EQ(ps.back().role, "unknown");
  EXPECT_EQ(ps[0].history, &sc.processes[5]);
}

TEST(ViewProcesses, ANodesProcessesComeTogether) {
  ScenarioResult sc;
  sc.processes = {process(7, Role::Rank), process(5, Role::Launcher), process(6, Role::Rank)};
  sc.processes[0].node = 1;
  sc.processes[1].node = 0;
  sc.processes[2].node = 0;
  auto ps = processes_by_role(sc);
  EXPECT_EQ(ps[0].pid, 5);
  EXPECT_EQ(ps[1].pid, 6);
  EXPECT_EQ(ps[2].pid, 7);
  EXPECT_EQ(ps[2].node, 1);
}

TEST(ViewProcesses, FieldsAndTheEndOfALife) {
  ScenarioResult sc;
  ProcessHistory a = process(1, Role::Rank, 10);
  a.job_pid = 6;
  a.first_ppid = 4;
  a.last_ppid = 1;
  a.comm = "a";
  a.cmdline = "a --x";
  a.rank = 2;
  a.exited_at = 50 * kMs;
  a.zombie_since = 40 * kMs;
  a.gone_at = 90 * kMs;
  a.outcome = Outcome::killed(9);
  ProcessHistory zombie = process(2, Role::Rank, 20);
  zombie.zombie_since = 60 * kMs;
  ProcessHistory vanished = process(3, Role::Rank, 30);
  vanished.gone_at = 70 * kMs;
  ProcessHistory glitch = process(5, Role::Rank, 100);
  glitch.exited_at = 80 * kMs;
  sc.processes = {a, zombie, vanished, process(4, Role::Rank, 40), glitch};
  sc.process_logs[1] = {"logs/1.out", "logs/1.err"};
  auto ps = processes_by_role(sc);
  ASSERT_EQ(ps.size(), 5u);
  const auto& v = ps[0];
  EXPECT_EQ(v.comm, "a");
  EXPECT_EQ(v.cmdline, "a --x");
  EXPECT_EQ(v.rank, 2);
  EXPECT_EQ(v.worker, std::nullopt);  // -1: not announced
  EXPECT_EQ(v.ppid, 4);
  EXPECT_EQ(v.last_ppid, 1);
  EXPECT_EQ(pid_text(v), "1 (6 in the job)");
  EXPECT_EQ(v.life_end_ms, 40.0);  // the earlier of exit and zombie
  EXPECT_EQ(v.gone_ms, 90.0);
  EXPECT_EQ(v.outcome, "killed(SIGKILL)");
  EXPECT_EQ(v.log_stdout, "logs/1.out");
  EXPECT_EQ(v.log_stderr, "logs/1.err");
  EXPECT_EQ(ps[1].life_end_ms, 60.0);          // zombie only
  EXPECT_EQ(ps[2].life_end_ms, 70.0);          // vanished from /proc
  EXPECT_EQ(ps[3].life_end_ms, std::nullopt);  // alive at the end
  EXPECT_EQ(ps[4].life_end_ms, 100.0);         // a clock glitch: never before its start
  EXPECT_EQ(ps[3].outcome, "");
  EXPECT_EQ(pid_text(ps[3]), "4");
}

TEST(ViewScenario, FilesAreJoinedToTheOutDirUnlessAbsolute) {
  ScenarioResult sc;
  sc.out_dir = "/runs/a";
  EXPECT_EQ(scenario_file(sc, "logs/x.out"), "/runs/a/logs/x.out");
  EXPECT_EQ(scenario_file(sc, "/abs/x.out"), "/abs/x.out");
  EXPECT_EQ(scenario_file(sc, ""), "");
  sc.out_dir = "/runs/b/";
  EXPECT_EQ(scenario_file(sc, "x"), "/runs/b/x");
  EXPECT_EQ(scenario_file(ScenarioResult{}, "x"), "x");
}

TEST(ViewScenario, TheEndIsTheLatestTimeOfAnyKind) {
  ScenarioResult sc;
  EXPECT_EQ(scenario_end_ms(sc), 1.0);  // never zero: scales divide by it
  sc.timings_ms["total_ms"] = 500;
  sc.timings_ms["job_ms"] = std::nullopt;
  EXPECT_EQ(scenario_end_ms(sc), 500.0);
  sc.timeline.observations = {obs::note(100 * kMs, "a"), obs::note(700 * kMs, "b")};
  EXPECT_EQ(scenario_end_ms(sc), 700.0);
  ProcessHistory p = process(1, Role::Rank, 1);
  p.zombie_since = 800 * kMs;
  sc.processes = {p};
  EXPECT_EQ(scenario_end_ms(sc), 800.0);
  FaultRecord f;
  f.sent = 850 * kMs;
  f.effect = 900 * kMs;
  sc.timeline.facts.faults = {f};
  EXPECT_EQ(scenario_end_ms(sc), 900.0);
}

TEST(ViewTimings, DocumentedKeysFirstThenTheRestAlphabetically) {
  std::map<std::string, std::optional<double>> t = {
      {"zeta_ms", 1}, {"total_ms", 2}, {"alpha_ms", 3}, {"job_ms", 4}, {"teardown_ms", 5}};
  EXPECT_EQ(timing_keys(t),
            (std::vector<std::string>{"job_ms", "teardown_ms", "total_ms", "alpha_ms", "zeta_ms"}));
  EXPECT_TRUE(timing_keys(std::map<std::string, std::optional<double>>{}).empty());
}

TEST(ViewChecks, FailedChecksInOrder) {
  ScenarioResult sc;
  for (auto [name, status] : {std::pair{"a", CheckStatus::Pass},
                              {"b", CheckStatus::Error},
                              {"c", CheckStatus::Fail},
                              {"e", CheckStatus::Skipped}}) {
    CheckResult c;
    c.name = name;
    c.status = status;
    sc.checks.push_back(c);
  }
  EXPECT_EQ(failed_checks(sc), (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(failed_checks(ScenarioResult{}).empty());
}

TEST(ViewLinks, RelativeInsideTheReportFolderElseFileUrl) {
  EXPECT_EQ(log_href("/runs/r1/sc/logs/x.out", "/runs/r1"), "sc/logs/x.out");
  EXPECT_EQ(log_href("/runs/r1/../r1/x.out", "/runs/r1/"), "x.out");  // normalised first
  EXPECT_EQ(log_href("/elsewhere/x.out", "/runs/r1"), "file:///elsewhere/x.out");
  EXPECT_EQ(log_href("/runs/r10/x.out", "/runs/r1"),
            "file:///runs/r10/x.out");  // not a prefix match
  EXPECT_EQ(log_href("/a/x.out", ""), "file:///a/x.out");
  EXPECT_EQ(log_href("rel/x.out", "/runs/r1"), "rel/x.out");
}

TEST(ViewLinks, CharactersThatWouldChangeTheLinkArePercentEncoded) {
  EXPECT_EQ(log_href("/runs/a b#c?d%e/x.out", "/runs/a b#c?d%e"), "x.out");
  EXPECT_EQ(log_href("/runs/a b#c?d%e/x.out", "/other"), "file:///runs/a%20b%23c%3Fd%25e/x.out");
  EXPECT_EQ(log_href("sub dir/x.out", ""), "sub%20dir/x.out");
}

}  // namespace
}  // namespace aftermath::report
