// Tests for report.html (reports/html.h), rendered from a real result.json.
// The page must be self-contained, draw one lane per job process, show what
// result.json says (verdicts, outcomes, orphan and zombie spans, signals,
// phases, curves), and escape every piece of text it did not write itself.
#include "reports/html.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "reports/escape.h"
#include "reports/view.h"
#include "tests/unit/report_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_reports::count;
using testing_reports::load_fixture;
using testing_reports::scenario;

// The page for a result.json document, read as `aftermath report` reads it.
std::string html_of(const json& doc, const std::string& report_dir = "") {
  return render_html(testing_reports::typed(doc), report_dir);
}

// The folder the fixture's run wrote into: the parent of a scenario's folder.
std::string run_dir(const json& result) {
  return std::filesystem::path(result["scenarios"][0]["out_dir"].get<std::string>())
      .parent_path()
      .string();
}

// The HTML of the index-th scenario section.
std::string section(const std::string& html, size_t index) {
  size_t pos = 0;
  for (size_t i = 0; i <= index; ++i) {
    pos = html.find("<section class=\"scenario\"", i == 0 ? 0 : pos + 1);
    if (pos == std::string::npos) return "";
  }
  size_t end = html.find("</section>", pos);
  return html.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

size_t index_of(const json& result, const std::string& name) {
  for (size_t i = 0; i < result["scenarios"].size(); ++i) {
    if (result["scenarios"][i]["name"] == name) return i;
  }
  ADD_FAILURE() << "no scenario " << name;
  return 0;
}

TEST(Html, IsOneSelfContainedDocument) {
  json result = load_fixture();
  std::string html = html_of(result, run_dir(result));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("</html>"));
  EXPECT_THAT(html, HasSubstr("<meta charset=\"utf-8\">"));
  // Nothing fetched from anywhere: no URL schemes, no protocol-relative
  // sources, no stylesheets or imports, no CSS urls other than local ids.
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("src=\"//")));
  EXPECT_THAT(html, Not(HasSubstr("src='//")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_EQ(count(html, "url("), count(html, "url(#"));
  EXPECT_EQ(count(html, " src="), 0u);
  // Exactly the page's own two scripts: the error hook and the main script.
  EXPECT_EQ(count(html, "<script>"), 2u);
  EXPECT_EQ(count(html, "</script>"), 2u);
}

TEST(Html, OneLanePerProcessInEachScenario) {
  json result = load_fixture();
  std::string html = html_of(result, run_dir(result));
  size_t total = 0;
  for (size_t i = 0; i < result["scenarios"].size(); ++i) {
    const json& sc = result["scenarios"][i];
    std::string sec = section(html, i);
    ASSERT_FALSE(sec.empty()) << i;
    EXPECT_EQ(count(sec, "class=\"lane\""), sc["processes"].size()) << sc["name"];
    for (const auto& p : sc["processes"]) {
      std::string pid = std::to_string(p["pid"].get<long long>());
      EXPECT_EQ(count(sec, "class=\"lane\" data-pid=\"" + pid + "\""), 1u) << pid;
    }
    total += sc["processes"].size();
  }
  EXPECT_GE(total, 10u);  // the fixture is not trivially small
  EXPECT_EQ(count(html, "class=\"lane\""), total);
}

TEST(Html, LanesAreGroupedByRole) {
  json result = load_fixture();
  // Make the roles varied so the order is meaningful.
  json& sc = scenario(result, "clean-job");
  std::vector<std::string> roles = {"helper", "worker", "rank", "unknown", "launcher"};
  for (size_t i = 0; i < sc["processes"].size(); ++i) sc["processes"][i]["role"] = roles[i % 5];
  std::string sec = section(html_of(result), index_of(result, "clean-job"));
  std::vector<size_t> at;
  for (const char* role : {"launcher", "rank", "worker", "helper", "unknown"}) {
    size_t pos = sec.find(std::string("data-role=\"") + role + "\"");
    ASSERT_NE(pos, std::string::npos) << role;
    at.push_back(pos);
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  EXPECT_THAT(sec, HasSubstr(">launcher \u00b7 1 process</text>"));
}

TEST(Html, AMultiNodeRunHasALaneGroupPerNodeAndANodesTable) {
  json result = load_fixture();
  json& sc = scenario(result, "clean-job");
  ASSERT_GE(sc["processes"].size(), 2u);
  // The processes alternate between two nodes, all of them ranks.
  for (size_t i = 0; i < sc["processes"].size(); ++i) {
    sc["processes"][i]["role"] = "rank";
    sc["processes"][i]["node"] = static_cast<int>(i % 2);
  }
  sc["nodes"] = json::array();
  for (int n = 0; n < 2; ++n)
    sc["nodes"].push_back({{"index", n},
                           {"host", "node" + std::to_string(n)},
                           {"address", "10.0.0." + std::to_string(10 + n)},
                           {"agent", n == 0 ? "done" : "lost"},
                           {"lost_ms", n == 0 ? json(nullptr) : json(2500.0)},
                           {"clock", {{"offset_ms", 0.01}, {"uncertainty_ms", 0.025}}},
                           {"started_ms", 1000.0},
                           {"processes", 2},
                           {"verdict", n == 0 ? "pass" : "error"},
                           {"verdict_reason", n == 0 ? "" : "its agent was lost"}});
  std::string sec = section(html_of(result), index_of(result, "clean-job"));
  size_t n0 = sec.find(">node0 \u00b7 rank \u00b7 ");
  size_t n1 = sec.find(">node1 \u00b7 rank \u00b7 ");
  ASSERT_NE(n0, std::string::npos) << sec;
  ASSERT_NE(n1, std::string::npos);
  EXPECT_LT(n0, n1);
  // Every lane of node 0 comes before node 1's group.
  EXPECT_EQ(count(sec.substr(n0, n1 - n0), "class=\"lane\""), (sc["processes"].size() + 1) / 2);
  EXPECT_THAT(sec, HasSubstr("<h3>Nodes</h3>"));
  EXPECT_THAT(sec, HasSubstr("<td>lost at 2.50 s</td>"));
  EXPECT_THAT(sec, HasSubstr("its agent was lost"));
}

TEST(Html, VerdictBannersAndOverview) {
  json result = load_fixture();
  std::string html = html_of(result, run_dir(result));
  ASSERT_THAT(html, HasSubstr("<section id=\"overview\">"));
  // The overview comes first and links to every section.
  EXPECT_LT(html.find("id=\"overview\""), html.find("<section class=\"scenario\""));
  for (size_t i = 0; i < result["scenarios"].size(); ++i) {
    const json& sc = result["scenarios"][i];
    std::string id = "s" + std::to_string(i) + "-" + sc["name"].get<std::string>();
    EXPECT_THAT(html, HasSubstr("<a href=\"#" + id + "\">")) << id;
    EXPECT_THAT(html, HasSubstr("<section class=\"scenario\" id=\"" + id + "\">")) << id;
    std::string verdict = sc["verdict"];
    bool good = verdict == "pass" || verdict == "xfail";
    EXPECT_THAT(section(html, i),
                HasSubstr(std::string("<div class=\"banner ") + (good ? "ok" : "bad") +
                          "\"><span class=\"verdict\">" + verdict + "</span>"))
        << sc["name"];
  }
  EXPECT_EQ(count(html, "<div class=\"banner bad\">"), 1u);  // orphan-unexpected
}

TEST(Html, SingleScenarioOpensOnItsSection) {
  json result = load_fixture();
  json one = result;
  one["scenarios"] = json::array({scenario(result, "hang")});
  std::string html = html_of(one);
  EXPECT_THAT(html, Not(HasSubstr("id=\"overview\"")));
  EXPECT_EQ(count(html, "<section class=\"scenario\""), 1u);
  EXPECT_THAT(html, HasSubstr("<title>aftermath report: hang</title>"));
}

TEST(Html, ChecksTimingsReproAndEnvironment) {
  json result = load_fixture();
  std::string html = html_of(result, run_dir(result));
  size_t i = index_of(result, "orphan-unexpected");
  const json& sc = result["scenarios"][i];
  std::string sec = section(html, i);
  for (const auto& c : sc["checks"]) {
    EXPECT_THAT(sec, HasSubstr("<code>" + c["name"].get<std::string>() + "</code>"));
  }
  EXPECT_EQ(count(sec, "<tr class=\"check st-fail\">"), 2u);  // all_exited, no_orphans
  // Failed checks show their measured values open.
  EXPECT_EQ(count(sec, "<details open><summary>measured</summary>"), 2u);
  for (const auto& [key, value] : sc["timings_ms"].items()) {
    EXPECT_THAT(sec, HasSubstr("<code>" + key + "</code>")) << key;
  }
  EXPECT_THAT(sec, HasSubstr("not reached"));  // to_all_exited_ms is null
  EXPECT_THAT(sec, HasSubstr(html_escape(sc["repro"].get<std::string>())));
  for (const auto& [key, value] : result["environment"].items()) {
    EXPECT_THAT(html, HasSubstr("<tr><th>" + key + "</th>")) << key;
  }
}

TEST(Html, TimelineShowsExitsOrphansZombiesSignalsPhasesAndCurves) {
  json result = load_fixture();
  std::string html = html_of(result, run_dir(result));

  std::string orphan = section(html, index_of(result, "orphan-outlives-parent"));
  EXPECT_EQ(count(orphan, "<rect class=\"orphan\" data-t0="), 2u);
  EXPECT_EQ(count(orphan, ">killed(SIGTERM)</text>"), 2u);
  EXPECT_EQ(count(orphan, ">exited(0)</text>"), 1u);
  EXPECT_EQ(count(orphan, "<g class=\"sig sig-term\" data-t="), 2u);
  for (const char* phase : {"launch", "running", "job_exited", "settle", "teardown", "done"}) {
    EXPECT_THAT(orphan, HasSubstr(std::string(">") + phase + "</text>")) << phase;
  }
  EXPECT_THAT(orphan, HasSubstr("<path class=\"curve procs\""));
  EXPECT_THAT(orphan, HasSubstr("<path class=\"curve shm\""));

  // The unreaped child: a zombie span from its exit until the parent's exit.
  json fixture = load_fixture();
  const json& zp = scenario(fixture, "zombie-unreaped")["processes"][1];
  std::string zombie = section(html, index_of(result, "zombie-unreaped"));
  EXPECT_THAT(zombie, HasSubstr("<rect class=\"zombie\" data-t0=\"" +
                                report::format_number(zp["zombie_since_ms"].get<double>(), 3) +
                                "\" data-t1=\"" +
                                report::format_number(zp["gone_ms"].get<double>(), 3) + "\""));

  std::string hang = section(html, index_of(result, "hang"));
  EXPECT_EQ(count(hang, "<g class=\"sig sig-kill\" data-t="), 3u);
  EXPECT_EQ(count(hang, ">killed(SIGKILL)</text>"), 3u);
  EXPECT_THAT(hang, HasSubstr(">deadline</text>"));

  // The leaked segments are marked on the /dev/shm curve.
  std::string shm = section(html, index_of(result, "shm-leak"));
  EXPECT_EQ(count(shm, "<g class=\"shm-mark shm_add\" data-t="), 2u);
  EXPECT_THAT(shm, HasSubstr("max 2.0 MiB"));
}

TEST(Html, AliveProcessRunsToTheEnd) {
  json result = load_fixture();
  json& p = scenario(result, "hang")["processes"][0];
  p["exited_ms"] = nullptr;
  p["gone_ms"] = nullptr;
  p["zombie_since_ms"] = nullptr;
  std::string html = html_of(result);
  std::string sec = section(html, index_of(result, "hang"));
  EXPECT_EQ(count(sec, "<rect class=\"life alive\" data-t0="), 1u);
  EXPECT_THAT(sec, HasSubstr(">alive at end</text>"));
}

// A pytest suite's tests: a band per test on the lane of the process that
// ran it (red for one that left something), and a table, leaking tests first.
TEST(Html, PytestTestsAreMarkedOnTheirProcessLaneAndListed) {
  json result = load_fixture();
  json& sc = scenario(result, "hang");
  json pid = sc["processes"][0]["pid"];
  sc["tests"] = json::array(
      {json{{"nodeid", "t.py::test_clean"},
            {"worker", ""},
            {"pid", pid},
            {"start_ms", 10.0},
            {"end_ms", 20.0},
            {"outcome", "passed"},
            {"processes", json::array()},
            {"leaks", json::array()}},
       json{{"nodeid", "t.py::test_<leaky>"},
            {"worker", "gw1"},
            {"pid", pid},
            {"start_ms", 30.0},
            {"end_ms", 40.0},
            {"outcome", "passed"},
            {"processes", json::array({77})},
            {"leaks",
             json::array({json{
                 {"kind", "zombie"}, {"pid", 77}, {"what", "unknown 77 (true) a zombie"}}})}}});
  std::string sec = section(html_of(result), index_of(result, "hang"));
  EXPECT_EQ(count(sec, "<rect class=\"test-span\" data-t0="), 1u);
  EXPECT_EQ(count(sec, "<rect class=\"test-span test-leak\" data-t0="), 1u);
  EXPECT_EQ(count(sec, "<g class=\"test-mark\""), 4u);
  EXPECT_THAT(sec, HasSubstr("t.py::test_&lt;leaky&gt; 30.0 ms \u2192 40.0 ms, passed\nleft "
                             "zombie: unknown 77 (true) a zombie"));
  EXPECT_THAT(sec, HasSubstr("<h3>Tests (2, 1 left something behind)</h3>"));
  size_t leaky = sec.find("<code>t.py::test_&lt;leaky&gt;</code>"),
         clean = sec.find("<code>t.py::test_clean</code>");
  ASSERT_NE(leaky, std::string::npos);
  EXPECT_LT(leaky, clean);
  EXPECT_THAT(sec, HasSubstr("zombie: unknown 77 (true) a zombie"));
  // Without tests: neither.
  std::string other = section(html_of(load_fixture()), index_of(result, "hang"));
  EXPECT_THAT(other, Not(HasSubstr("test-span")));
  EXPECT_THAT(other, Not(HasSubstr("<h3>Tests")));
}

TEST(Html, EscapesEverythingItDidNotWrite) {
  json result = load_fixture();
  json& sc = scenario(result, "orphan-unexpected");
  sc["processes"][1]["cmdline"] = "tc <script>alert(\"x\")</script> & \x01 \x1b[31mred";
  sc["processes"][1]["comm"] = "<img src=x>";
  sc["top"]["stderr_tail"] = "</pre><img src=x onerror=alert(1)>\x7f\n";
  sc["checks"][0]["reason"] = "a < b && c > d";
  sc["checks"][0]["measured"]["note"] = "</details><script>bad()</script>";
  sc["verdict_reason"] = "it's \"quoted\"";
  sc["repro"] = "aftermath run 'x<y>'";
  result["environment"]["<key>"] = "<value>";
  std::string html = html_of(result);

  EXPECT_EQ(count(html, "<script>"), 2u);
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<key>")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp;"));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x&gt;"));
  EXPECT_THAT(html, HasSubstr("a &lt; b &amp;&amp; c &gt; d"));
  EXPECT_THAT(html, HasSubstr("it&#39;s &quot;quoted&quot;"));
  // Control bytes show as control pictures instead of vanishing or
  // corrupting the page: SOH, ESC, DEL.
  EXPECT_THAT(html, HasSubstr("\u2401"));
  EXPECT_THAT(html, HasSubstr("\u241B[31mred"));
  EXPECT_THAT(html, HasSubstr("\u2421"));
  for (char c = 1; c < 0x20; ++c) {
    if (c == '\t' || c == '\n' || c == '\r') continue;
    EXPECT_EQ(html.find(c), std::string::npos) << static_cast<int>(c);
  }
}

TEST(Html, LogLinksAreRelativeInsideTheReportFolder) {
  json result = load_fixture();
  std::string dir = run_dir(result);
  std::string html = html_of(result, dir);
  EXPECT_THAT(html, HasSubstr("<a href=\"clean-job/stdout.log\">"));
  EXPECT_THAT(html, HasSubstr("<a href=\"orphan-unexpected/stderr.log\">"));
  EXPECT_THAT(html, Not(HasSubstr("href=\"file://")));

  // Rendered for another folder (or for none), links are absolute.
  std::string elsewhere = html_of(result, "/somewhere/else");
  EXPECT_THAT(elsewhere, HasSubstr("<a href=\"file://" + dir + "/clean-job/stdout.log\">"));
  EXPECT_THAT(html_of(result), HasSubstr("<a href=\"file://" + dir + "/hang/stderr.log\">"));

  // Characters that would change what a URL means are percent-encoded.
  scenario(result, "hang")["stderr_path"] = dir + "/a b#c?d%/stderr.log";
  EXPECT_THAT(html_of(result, dir), HasSubstr("<a href=\"a%20b%23c%3Fd%25/stderr.log\">"));
}

TEST(Html, UrlsInTextStayText) {
  json result = load_fixture();
  scenario(result, "hang")["description"] = "see https://example.com/x?a=1&b=2";
  std::string html = html_of(result);
  EXPECT_THAT(html, HasSubstr("see https://example.com/x?a=1&amp;b=2"));
  EXPECT_THAT(html, Not(HasSubstr("href=\"https")));
  EXPECT_THAT(html, Not(HasSubstr("src=\"https")));
}

TEST(Html, AnEmptyRunAndASparseOneRender) {
  // What is not a result never reaches the page: it is refused when read.
  EXPECT_FALSE(read_result(json::object()));
  EXPECT_FALSE(read_result(json{{"schema_version", 1}, {"scenarios", 3}}));
  EXPECT_THAT(render_html(RunResult{}), HasSubstr("This run has no scenarios."));
  // A run that broke half way: few fields, processes without times.
  json sparse = {{"schema_version", 1},
                 {"scenarios",
                  {{{"name", "broken"},
                    {"verdict", "error"},
                    {"timings_ms", {{"job_ms", nullptr}}},
                    {"timeline",
                     {{{"kind", "signal"}, {"t_ms", 5}, {"pid", 99}, {"signo", 15}},
                      {{"kind", "phase"}, {"t_ms", 7}, {"name", "teardown"}}}},
                    {"processes", {{{"pid", 42}}, {{"pid", 43}, {"started_ms", -5}}}}}}}};
  std::string html;
  ASSERT_NO_THROW(html = html_of(sparse));
  EXPECT_EQ(count(html, "class=\"lane\""), 2u);
  EXPECT_THAT(html, HasSubstr("data-pid=\"42\""));
  EXPECT_THAT(html, HasSubstr("<div class=\"banner bad\"><span class=\"verdict\">error"));
  EXPECT_THAT(html, HasSubstr("not reached"));
  // A signal to a pid outside the job still shows.
  EXPECT_THAT(html, HasSubstr("signals to other pids"));
  EXPECT_THAT(html, HasSubstr("SIGTERM sent to 99"));
}

TEST(Html, DeviceMemoryCurvePerGpuWhenTheRunHasOne) {
  json result = load_fixture();
  json& sc = result["scenarios"][0];
  // No GPU in the run: no device curve.
  sc["device"] = {{"unavailable", "no NVIDIA driver"}};
  std::string without = html_of(result);
  EXPECT_EQ(without.find("curve gpu"), std::string::npos);
  // Two GPUs sampled: one curve each, on the same time axis, with its peak.
  sc["device"] = {{"unavailable", ""},
                  {"samples",
                   {{{"t_ms", 0}, {"index", 0}, {"used_bytes", 1 << 20}},
                    {{"t_ms", 0}, {"index", 1}, {"used_bytes", 0}},
                    {{"t_ms", 200}, {"index", 0}, {"used_bytes", 3ll << 30}},
                    {{"t_ms", 200}, {"index", 1}, {"used_bytes", 512 << 20}}}}};
  std::string with = html_of(result);
  EXPECT_NE(with.find("GPU 0 memory used"), std::string::npos);
  EXPECT_NE(with.find("GPU 1 memory used"), std::string::npos);
  size_t n = 0;
  for (size_t at = with.find("curve gpu"); at != std::string::npos;
       at = with.find("curve gpu", at + 1))
    ++n;
  EXPECT_EQ(n, 2u);
  EXPECT_NE(with.find("max 3.0 GiB"), std::string::npos);
  EXPECT_NE(with.find("max 512.0 MiB"), std::string::npos);
}

// ---------------------------------------------------------------------------
// The hang diagnosis and the stopped / uninterruptible states.

size_t scenario_index(const json& result, const std::string& name) {
  for (size_t i = 0; i < result["scenarios"].size(); ++i)
    if (result["scenarios"][i]["name"] == name) return i;
  ADD_FAILURE() << "no scenario " << name;
  return 0;
}

std::string scenario_html(const std::string& html, size_t index) {
  size_t pos = 0;
  for (size_t i = 0; i <= index; ++i) {
    pos = html.find("<section class=\"scenario\"", i == 0 ? 0 : pos + 1);
    if (pos == std::string::npos) return "";
  }
  return html.substr(pos, html.find("</section>", pos) - pos);
}

// The fixture's hang, diagnosed the way a hung DDP job is: rank 0 stopped
// inside torch, rank 1 waiting in a collective, a process without Python.
json hung_ddp() {
  json result = load_fixture();
  json& d = scenario(result, "hang")["hang_diagnosis"];
  d["took_ms"] = 830;
  d["note"] = "1 process(es) without user stacks";
  json& p0 = d["processes"][0];
  p0["role"] = "rank";
  p0["rank"] = 0;
  p0["state"] = "T";
  p0["wchan"] = "do_signal_stop";
  p0["waiting_in"] = "allreduce #7";
  p0["python_stacks"] =
      "Thread 0x7f (most recent call first):\n  File \"/w/train.py\", line 42, in step\n";
  p0["python_note"] = "";
  p0["took_ms"] = 812;
  p0["python_frames"] = {
      {{"file", "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"},
       {"line", 1234},
       {"function", "all_reduce"},
       {"code", "work = group.allreduce([tensor], opts)"}},
      {{"file", "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py"},
       {"line", 47},
       {"function", "wrapper"},
       {"code", "return func(*args, **kwargs)"}},
      {{"file", "/usr/lib/python3.11/contextlib.py"},
       {"line", 81},
       {"function", "inner"},
       {"code", ""}},
      {{"file", "/w/train.py"}, {"line", 42}, {"function", "step"}, {"code", "dist.all_reduce(t)"}},
      {{"file", "/w/train.py"}, {"line", 60}, {"function", "<module>"}, {"code", "step()"}}};
  json& p1 = d["processes"][1];
  p1["role"] = "rank";
  p1["rank"] = 1;
  p1["state"] = "D";
  p1["python_frames"] = json::array();
  p1["python_stacks"] = "";
  p1["python_note"] = "py-bt: gdb has no Python support";
  return result;
}

TEST(HtmlHang, SectionOnlyWhereThereIsADiagnosisNearTheTop) {
  json result = load_fixture();
  std::string html = html_of(result);
  // The fixture's only hang; every other scenario has an empty diagnosis.
  EXPECT_EQ(count(html, "<div class=\"hang\""), 1u);
  size_t i = scenario_index(result, "hang");
  std::string sec = scenario_html(html, i);
  size_t at = sec.find("<div class=\"hang\" id=\"hang-s" + std::to_string(i) +
                       "-hang\"><h3>Hang diagnosis</h3>");
  ASSERT_NE(at, std::string::npos);
  // After the verdict banner, before the facts, the timeline and the checks.
  EXPECT_LT(sec.find("<div class=\"banner"), at);
  EXPECT_LT(at, sec.find("<table class=\"facts\">"));
  EXPECT_LT(at, sec.find("<h3>Timeline</h3>"));
  EXPECT_EQ(count(sec, "<tbody class=\"hang-proc\" data-pid="), 3u);
  // A diagnosis from before python_* existed: no Python, and it says so.
  EXPECT_THAT(sec, HasSubstr("Python stacks (py-bt, every thread): none taken"));
  EXPECT_THAT(sec, HasSubstr("S sleeping"));
  EXPECT_THAT(sec, HasSubstr("<code>hrtimer_nanosleep</code>"));
}

TEST(HtmlHang, RowsSpellStatesAndShowTheInnermostFramesAndTheUsersOwn) {
  json result = hung_ddp();
  std::string sec = scenario_html(html_of(result), scenario_index(result, "hang"));
  EXPECT_THAT(sec,
              HasSubstr("3 live processes when the hang was declared; diagnosed in 830.0 ms."));
  EXPECT_THAT(sec, HasSubstr("<span class=\"hang-note\">1 process(es) without user stacks</span>"));
  const std::string row0 = "<tbody class=\"hang-proc\" data-pid=\"819\"><tr><td>rank 0</td>";
  ASSERT_THAT(sec, HasSubstr(row0));
  std::string r0 = sec.substr(sec.find(row0), sec.find("data-pid=\"820\"") - sec.find(row0));
  EXPECT_THAT(r0, HasSubstr("<td class=\"state\" data-state=\"T\"><svg class=\"swatch\""));
  EXPECT_THAT(r0, HasSubstr("<rect class=\"stopped\""));
  EXPECT_THAT(r0, HasSubstr("T stopped</td>"));
  EXPECT_THAT(r0, HasSubstr("<code>do_signal_stop</code>"));
  EXPECT_THAT(r0, HasSubstr("<b>allreduce #7</b>"));
  // The three innermost frames, then the user's own (the fourth).
  EXPECT_THAT(
      r0, HasSubstr("<li class=\"frame\" title=\"/usr/lib/python3/dist-packages/torch/distributed/"
                    "distributed_c10d.py\"><code>torch/distributed/distributed_c10d.py:1234 in "
                    "all_reduce \u2014 work = group.allreduce([tensor], opts)</code></li>"));
  EXPECT_THAT(r0, HasSubstr("<code>contextlib.py:81 in inner</code>"));
  EXPECT_THAT(r0,
              HasSubstr("<li class=\"frame user\" title=\"/w/train.py\"><code>train.py:42 in step "
                        "\u2014 dist.all_reduce(t)</code></li>"));
  EXPECT_EQ(count(r0, "<li class=\"frame"), 4u);
  EXPECT_THAT(r0, Not(HasSubstr("train.py:60")));
  // Expandable to the full stacks: Python open, C folded when there is Python.
  EXPECT_THAT(
      r0, HasSubstr("<tr class=\"hang-more\"><td colspan=\"6\"><details><summary>Stacks of rank 0 "
                    "(pid 819): Python, C, kernel</summary>"));
  EXPECT_THAT(
      r0, HasSubstr("<details class=\"stack\" open><summary>Python stacks (py-bt, every thread) "
                    "(2 lines)</summary><pre>Thread 0x7f (most recent call first):\n  File "
                    "&quot;/w/train.py&quot;, line 42, in step\n</pre></details>"));
  EXPECT_THAT(r0, HasSubstr("<details class=\"stack\"><summary>C stacks (gdb, every thread)"));
  EXPECT_THAT(
      r0, HasSubstr("<details class=\"stack\"><summary>Kernel stack (/proc/PID/stack) (5 lines)"));
  EXPECT_THAT(r0, HasSubstr("Diagnosed in 812.0 ms."));

  // No Python stack: why not, in the row and in its stacks; the C stacks open.
  std::string r1 = sec.substr(sec.find("data-pid=\"820\""));
  EXPECT_THAT(r1, HasSubstr("<rect class=\"uninterruptible\""));
  EXPECT_THAT(r1, HasSubstr("D uninterruptible (disk/driver)</td>"));
  EXPECT_THAT(r1, HasSubstr("<td class=\"where\"><span class=\"muted\">py-bt: gdb has no Python "
                            "support</span></td>"));
  EXPECT_THAT(r1,
              HasSubstr("Python stacks (py-bt, every thread): py-bt: gdb has no Python support"));
  EXPECT_THAT(r1, HasSubstr("<details class=\"stack\" open><summary>C stacks"));
}

TEST(HtmlHang, EscapesEveryStackAndNote) {
  json result = hung_ddp();
  json& d = scenario(result, "hang")["hang_diagnosis"];
  d["note"] = "<img src=x onerror=alert(1)>";
  d["processes"][0]["python_stacks"] = "</pre></details><script>bad()</script>\x1b[0m";
  d["processes"][0]["user_stacks"] = "#0 operator<< <T>(a&b)";
  d["processes"][0]["python_frames"][0]["code"] = "x = '<b>' & \"y\"";
  d["processes"][0]["wchan"] = "<w>";
  d["processes"][1]["python_note"] = "</td></tr></table>";
  std::string html = html_of(result);
  EXPECT_EQ(count(html, "<script>"), 2u);
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<w>")));
  EXPECT_THAT(html,
              HasSubstr("&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;bad()&lt;/script&gt;\u241B[0m"));
  EXPECT_THAT(html, HasSubstr("#0 operator&lt;&lt; &lt;T&gt;(a&amp;b)"));
  EXPECT_THAT(html, HasSubstr("x = &#39;&lt;b&gt;&#39; &amp; &quot;y&quot;"));
  EXPECT_THAT(html, HasSubstr("&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;"));
}

TEST(HtmlHang, StoppedAndUninterruptibleLanesHaveTheirOwnColourAndLegend) {
  json result = load_fixture();
  json& sc = scenario(result, "hang");
  // The launcher was stopped from 100 ms to 900 ms, then in D until 1.2 s.
  sc["timeline"].push_back({{"t_ms", 100}, {"kind", "proc_state"}, {"pid", 819}, {"state", "T"}});
  sc["timeline"].push_back({{"t_ms", 900}, {"kind", "proc_state"}, {"pid", 819}, {"state", "D"}});
  sc["timeline"].push_back({{"t_ms", 1200}, {"kind", "proc_state"}, {"pid", 819}, {"state", "S"}});
  std::string sec = scenario_html(html_of(result), scenario_index(result, "hang"));
  size_t lane = sec.find("<g class=\"lane\" data-pid=\"819\"");
  ASSERT_NE(lane, std::string::npos);
  std::string l = sec.substr(lane, sec.find("<g class=\"lane\"", lane + 1) - lane);
  EXPECT_EQ(count(l, "<rect class=\"stopped\" data-t0=\"100\" data-t1=\"900\""), 1u);
  EXPECT_EQ(count(l, "<rect class=\"uninterruptible\" data-t0=\"900\" data-t1=\"1200\""), 1u);
  EXPECT_EQ(count(sec, "<rect class=\"stopped\" data-t0="), 1u);  // only that lane
  // The legend names both, with the same classes the lanes use.
  size_t legend = sec.find("<div class=\"legend\">");
  ASSERT_NE(legend, std::string::npos);
  std::string lg = sec.substr(legend, sec.find("</div>", legend) - legend);
  EXPECT_THAT(
      lg,
      HasSubstr(
          "<rect class=\"stopped\" x=\"1\" y=\"2\" width=\"20\" height=\"8\"/></svg>stopped (T)"));
  EXPECT_THAT(
      lg,
      HasSubstr("<rect class=\"uninterruptible\" x=\"1\" y=\"2\" width=\"20\" height=\"8\"/></svg>"
                "uninterruptible (D)"));
  // And the stylesheet gives them colours of their own.
  std::string html = html_of(result);
  EXPECT_THAT(html, HasSubstr(".stopped { fill: #"));
  EXPECT_THAT(html, HasSubstr(".uninterruptible { fill: #"));
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

// The three device checks skipped for one reason (no GPU here): the reason is
// said once, the others point at it.
TEST(Html, ASkipReasonSharedByChecksIsSaidOnce) {
  nlohmann::json result = testing_reports::load_fixture();
  auto& sc = result["scenarios"][0];
  const std::string why = "no GPU to check: no NVIDIA driver: cannot load libnvidia-ml.so.1";
  for (const char* name : {"device_memory_released", "no_device_holders", "device_alloc_probe"})
    sc["checks"].push_back({{"name", name},
                            {"status", "skipped"},
                            {"reason", why},
                            {"measured", nlohmann::json::object()}});
  std::string html = html_of(result, "/tmp/run");
  EXPECT_EQ(testing_reports::count(html, why), 1u);
  EXPECT_EQ(testing_reports::count(html, "as device_memory_released: skipped for the same reason"),
            2u);
}

}  // namespace
}  // namespace aftermath
