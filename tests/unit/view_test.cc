// Unit tests for the read-only view of result.json (reports/view): accessors
// that degrade instead of throwing on absent or odd fields, the formatting
// the renderers share, verdict and status colours, process lanes in role
// order, where a scenario's record ends, timing order, and log links.
#include "reports/view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace aftermath::report {
namespace {

TEST(ViewAccessors, MemberIsNullForAnythingButAPresentKey) {
  json j = {{"a", 1}, {"n", nullptr}};
  EXPECT_EQ(member(j, "a"), 1);
  EXPECT_TRUE(member(j, "missing").is_null());
  EXPECT_TRUE(member(json::array({1, 2}), "a").is_null());
  EXPECT_TRUE(member(json("text"), "a").is_null());
  EXPECT_TRUE(member(json(), "a").is_null());
}

TEST(ViewAccessors, StrWritesNumbersAndBooleansAndFallsBackOnTheRest) {
  json j = {{"s", "text"},  {"i", 3},          {"d", 1.5}, {"b", true},
            {"n", nullptr}, {"o", {{"x", 1}}}, {"a", {1}}};
  EXPECT_EQ(str(j, "s"), "text");
  EXPECT_EQ(str(j, "i"), "3");
  EXPECT_EQ(str(j, "d"), "1.5");
  EXPECT_EQ(str(j, "b"), "true");
  EXPECT_EQ(str(j, "n", "?"), "?");
  EXPECT_EQ(str(j, "o", "?"), "?");
  EXPECT_EQ(str(j, "a", "?"), "?");
  EXPECT_EQ(str(j, "missing"), "");
  EXPECT_EQ(str(json::array(), "s", "fb"), "fb");
}

TEST(ViewAccessors, NumOnlyForFiniteNumbers) {
  json j = {{"i", 4}, {"d", 2.5}, {"s", "3"}, {"b", true}, {"n", nullptr}};
  j["inf"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(num(j, "i"), 4.0);
  EXPECT_EQ(num(j, "d"), 2.5);
  EXPECT_EQ(num(j, "s"), std::nullopt);  // a string is not read as a number
  EXPECT_EQ(num(j, "b"), std::nullopt);
  EXPECT_EQ(num(j, "n"), std::nullopt);
  EXPECT_EQ(num(j, "inf"), std::nullopt);
  EXPECT_EQ(num(j, "missing"), std::nullopt);
}

TEST(ViewAccessors, ItemsOfAnArrayOnly) {
  json j = {{"a", {1, 2, 3}}, {"o", {{"x", 1}}}, {"s", "abc"}};
  auto a = items(j, "a");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(*a[2], 3);
  EXPECT_EQ(a[0], &j["a"][0]);  // pointers into the document, not copies
  EXPECT_TRUE(items(j, "o").empty());
  EXPECT_TRUE(items(j, "s").empty());
  EXPECT_TRUE(items(j, "missing").empty());
}

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
  EXPECT_TRUE(verdict_ok("pass"));
  EXPECT_TRUE(verdict_ok("xfail"));
  for (const char* bad : {"fail", "xpass", "error", "skipped", "", "PASS", "brand_new"})
    EXPECT_FALSE(verdict_ok(bad)) << bad;
  EXPECT_TRUE(check_failed("fail"));
  EXPECT_TRUE(check_failed("error"));
  for (const char* ok : {"pass", "skipped", "", "brand_new"}) EXPECT_FALSE(check_failed(ok)) << ok;
}

TEST(ViewRoles, KnownRolesFirstThenNewOnesThenUnknown) {
  EXPECT_LT(role_rank("launcher"), role_rank("rank"));
  EXPECT_LT(role_rank("rank"), role_rank("worker"));
  EXPECT_LT(role_rank("worker"), role_rank("helper"));
  EXPECT_LT(role_rank("helper"), role_rank("brand_new"));
  EXPECT_LT(role_rank("brand_new"), role_rank("unknown"));
  EXPECT_EQ(role_rank(""), role_rank("unknown"));
}

TEST(ViewProcesses, GroupedByRoleThenStartThenPid) {
  json sc = {{"processes",
              {{{"pid", 30}, {"role", "worker"}, {"started_ms", 5}},
               {{"pid", 20}, {"role", "worker"}, {"started_ms", 5}},
               {{"pid", 40}, {"role", "worker"}, {"started_ms", 1}},
               {{"pid", 50}, {"role", "zeta"}},
               {{"pid", 51}, {"role", "alpha"}},
               {{"pid", 60}},
               {{"pid", 10}, {"role", "launcher"}, {"started_ms", 9}, {"top", true}}}}};
  auto ps = processes_by_role(sc);
  std::vector<long long> pids;
  for (const auto& p : ps) pids.push_back(p.pid);
  EXPECT_EQ(pids, (std::vector<long long>{10, 40, 20, 30, 51, 50, 60}));
  EXPECT_TRUE(ps[0].top);
  EXPECT_FALSE(ps[1].top);
  EXPECT_EQ(ps.back().role, "unknown");  // no role given
  EXPECT_EQ(ps[0].src, &sc["processes"][6]);
}

TEST(ViewProcesses, FieldsAndTheEndOfALife) {
  json sc = {{"processes",
              {{{"pid", 1},
                {"comm", "a"},
                {"cmdline", "a --x"},
                {"rank", 2},
                {"worker", -1},
                {"started_ms", 10},
                {"exited_ms", 50},
                {"zombie_since_ms", 40},
                {"gone_ms", 90},
                {"outcome", {{"text", "killed(SIGKILL)"}}},
                {"logs", {{"stdout", "logs/1.out"}, {"stderr", "logs/1.err"}}}},
               {{"pid", 2}, {"started_ms", 20}, {"zombie_since_ms", 60}},
               {{"pid", 3}, {"started_ms", 30}, {"gone_ms", 70}},
               {{"pid", 4}, {"started_ms", 40}},
               {{"pid", 5}, {"started_ms", 100}, {"exited_ms", 80}}}}};
  auto ps = processes_by_role(sc);
  ASSERT_EQ(ps.size(), 5u);
  const auto& a = ps[0];
  EXPECT_EQ(a.comm, "a");
  EXPECT_EQ(a.cmdline, "a --x");
  EXPECT_EQ(a.rank, 2);
  EXPECT_EQ(a.worker, std::nullopt);  // -1: not announced
  EXPECT_EQ(a.life_end_ms, 40.0);     // the earlier of exit and zombie
  EXPECT_EQ(a.gone_ms, 90.0);
  EXPECT_EQ(a.outcome, "killed(SIGKILL)");
  EXPECT_EQ(a.log_stdout, "logs/1.out");
  EXPECT_EQ(a.log_stderr, "logs/1.err");
  EXPECT_EQ(ps[1].life_end_ms, 60.0);          // zombie only
  EXPECT_EQ(ps[2].life_end_ms, 70.0);          // vanished from /proc
  EXPECT_EQ(ps[3].life_end_ms, std::nullopt);  // alive at the end
  EXPECT_EQ(ps[4].life_end_ms, 100.0);         // a clock glitch: never before its start
  EXPECT_EQ(ps[3].outcome, "");
}

TEST(ViewProcesses, OddFieldsDegradeInsteadOfThrowing) {
  json sc = {
      {"processes",
       {{{"pid", "x"}, {"role", ""}, {"started_ms", "soon"}, {"top", 1}, {"outcome", "text"}},
        "not an object",
        nullptr}}};
  std::vector<ProcessView> ps;
  ASSERT_NO_THROW(ps = processes_by_role(sc));
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[0].pid, 0);
  EXPECT_EQ(ps[0].role, "unknown");
  EXPECT_EQ(ps[0].start_ms, 0);
  EXPECT_FALSE(ps[0].top);  // only a boolean says top
  EXPECT_EQ(ps[0].outcome, "");
  EXPECT_TRUE(processes_by_role(json{{"processes", "none"}}).empty());
  EXPECT_TRUE(processes_by_role(json()).empty());
}

TEST(ViewScenario, FilesAreJoinedToTheOutDirUnlessAbsolute) {
  json sc = {{"out_dir", "/runs/a"}};
  EXPECT_EQ(scenario_file(sc, "logs/x.out"), "/runs/a/logs/x.out");
  EXPECT_EQ(scenario_file(sc, "/abs/x.out"), "/abs/x.out");
  EXPECT_EQ(scenario_file(sc, ""), "");
  EXPECT_EQ(scenario_file(json{{"out_dir", "/runs/b/"}}, "x"), "/runs/b/x");
  EXPECT_EQ(scenario_file(json::object(), "x"), "x");
}

TEST(ViewScenario, TheEndIsTheLatestTimeOfAnyKind) {
  EXPECT_EQ(scenario_end_ms(json::object()), 1.0);  // never zero: scales divide by it
  EXPECT_EQ(scenario_end_ms(json{{"timings_ms", {{"total_ms", 500}}}}), 500.0);
  json sc = {{"timings_ms", {{"total_ms", 500}}}, {"timeline", {{{"t_ms", 100}}, {{"t_ms", 700}}}}};
  EXPECT_EQ(scenario_end_ms(sc), 700.0);
  sc["processes"] = {{{"started_ms", 1}, {"zombie_since_ms", 800}}};
  EXPECT_EQ(scenario_end_ms(sc), 800.0);
  sc["faults"] = {{{"sent_ms", 850}, {"effect_ms", 900}}};
  EXPECT_EQ(scenario_end_ms(sc), 900.0);
  sc["timeline"].push_back({{"t_ms", "late"}});  // not a number: ignored
  EXPECT_EQ(scenario_end_ms(sc), 900.0);
}

TEST(ViewTimings, DocumentedKeysFirstThenTheRestAlphabetically) {
  json t = {{"zeta_ms", 1}, {"total_ms", 2}, {"alpha_ms", 3}, {"job_ms", 4}, {"teardown_ms", 5}};
  EXPECT_EQ(timing_keys(t),
            (std::vector<std::string>{"job_ms", "teardown_ms", "total_ms", "alpha_ms", "zeta_ms"}));
  EXPECT_TRUE(timing_keys(json::array()).empty());
  EXPECT_TRUE(timing_keys(json()).empty());
}

TEST(ViewChecks, FailedChecksInOrder) {
  json sc = {{"checks",
              {{{"name", "a"}, {"status", "pass"}},
               {{"name", "b"}, {"status", "error"}},
               {{"status", "fail"}},
               {{"name", "d"}, {"status", "fail"}},
               {{"name", "e"}, {"status", "skipped"}}}}};
  EXPECT_EQ(failed_checks(sc), (std::vector<std::string>{"b", "?", "d"}));
  EXPECT_TRUE(failed_checks(json::object()).empty());
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
