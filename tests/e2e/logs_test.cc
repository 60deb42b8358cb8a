// End-to-end: per-process logs and the job's reported environment. The real
// CLI runs tc_logs (a launcher, 2 ranks, 2 workers each, all announcing and
// printing lines of their own); result.json must name each process's log
// files, each holding exactly that process's lines; report.html links them;
// `aftermath report` renders them again from result.json alone.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "e2e_util.h"

using e2e::TempDir;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The text without the "aftermath: ..." lines (where a child's output went).
std::string without_markers(const std::string& text) {
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.rfind("aftermath: ", 0) != 0) out += line + "\n";
  return out;
}

// What tc_logs's process with this identity prints on one stream.
std::string lines_of(const std::string& role, int rank, int worker, const std::string& stream) {
  std::string who = role + " " + std::to_string(rank) + "/" + std::to_string(worker) + " " + stream;
  std::string out = who + " 1\n" + who + " 2\n";
  if (role == "launcher" && stream == "out") out += "done\n";
  return out;
}

class ProcessLogs : public ::testing::TestWithParam<const char*> {
 protected:
  TempDir dir;
  std::string out() const { return dir / "out"; }
  e2e::Run run_logs(std::vector<std::string> extra = {}) {
    std::vector<std::string> a{
        "run",     "--out", out(),       "--contain", GetParam(), "--", e2e::bin("tc_logs"),
        "--ranks", "2",     "--workers", "2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return e2e::aftermath(dir, a);
  }
};

TEST_P(ProcessLogs, EachAnnouncedProcessHasItsOwnLogsInResultJsonAndTheReport) {
  auto r = run_logs();
  ASSERT_FALSE(r.result.is_null()) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const json& sc = r.result["scenarios"][0];
  const std::string scen_dir = sc["out_dir"];

  // Every one of the 7 processes announced; each has both files, each file
  // holding exactly its lines (plus, for a parent, where its children's went).
  std::multiset<std::string> seen;
  std::set<std::string> paths;
  for (const auto& p : sc["processes"]) {
    ASSERT_TRUE(p.contains("logs")) << p.dump();
    std::string role = p["role"];
    int rank = p["rank"], worker = p["worker"];
    seen.insert(role + " " + std::to_string(rank) + "/" + std::to_string(worker));
    const std::string so = p["logs"]["stdout"], se = p["logs"]["stderr"];
    EXPECT_EQ(so.rfind("logs/" + role + "-", 0), 0u) << so;  // relative to the scenario's folder
    EXPECT_EQ(e2e::slurp(scen_dir + "/" + se), lines_of(role, rank, worker, "err")) << se;
    std::string own = e2e::slurp(scen_dir + "/" + so);
    EXPECT_EQ(without_markers(own), lines_of(role, rank, worker, "out")) << so;
    paths.insert(so);
    paths.insert(se);
    // The file is named with the pid the job saw; result.json gives it as
    // job_pid wherever that is not the host's pid the reports show.
    const int host = p["pid"];
    const bool own_ns = sc["containment"]["mode"] != "subreaper";
    ASSERT_EQ(p["job_pid"].is_number(), own_ns) << p.dump();
    const int named = own_ns ? p["job_pid"].get<int>() : host;
    if (own_ns) {
      EXPECT_NE(named, host);
    }
    EXPECT_NE(so.find("-" + std::to_string(named) + ".out"), std::string::npos)
        << so << " " << p.dump();
  }
  EXPECT_EQ(seen,
            (std::multiset<std::string>{"launcher -1/-1", "rank 0/-1", "rank 1/-1", "worker 0/0",
                                        "worker 0/1", "worker 1/0", "worker 1/1"}));
  EXPECT_EQ(paths.size(), 14u);
  // The job's shared stdout keeps what came before the launcher announced and
  // says where the rest went.
  std::string shared = e2e::slurp(scen_dir + "/stdout.log");
  EXPECT_EQ(shared.rfind("launcher: starting\naftermath: pid ", 0), 0u) << shared;
  EXPECT_NE(shared.find("(launcher) logs to " + scen_dir + "/logs/launcher-"), std::string::npos)
      << shared;
  EXPECT_EQ(without_markers(shared), "launcher: starting\n");

  // What the job reported about itself.
  EXPECT_EQ(sc["job_environment"],
            (json{{"sharing_strategy", "file_system"}, {"start_method", "fork"}}));

  // report.html links every file from its lane, relative to the report.
  std::string html = e2e::slurp(out() + "/report.html");
  const std::string rel = fs::path(scen_dir).lexically_relative(out()).string();
  for (const auto& p : sc["processes"]) {
    std::string lane = "<g class=\"lane\" data-pid=\"" + std::to_string(p["pid"].get<int>()) + "\"";
    auto at = html.find(lane);
    ASSERT_NE(at, std::string::npos) << lane;
    std::string lane_html = html.substr(at, html.find("</g></g>", at) - at);
    EXPECT_NE(lane_html.find("href=\"" + rel + "/" + p["logs"]["stdout"].get<std::string>() + "\""),
              std::string::npos)
        << lane_html;
    EXPECT_NE(lane_html.find("href=\"" + rel + "/" + p["logs"]["stderr"].get<std::string>() + "\""),
              std::string::npos);
  }
  EXPECT_NE(html.find("Per-process logs (7 processes)"), std::string::npos);
  // Both pids where the two differ, in the logs table and in the lane's title.
  for (const auto& p : sc["processes"]) {
    if (!p["job_pid"].is_number()) continue;
    std::string both = std::to_string(p["pid"].get<int>()) + " (" +
                       std::to_string(p["job_pid"].get<int>()) + " in the job)";
    EXPECT_NE(html.find("<td class=\"num\">" + both + "</td>"), std::string::npos) << both;
    EXPECT_NE(html.find("<title>" + p["role"].get<std::string>() + " " + both), std::string::npos)
        << both;
  }
  EXPECT_NE(html.find("<th>job sharing_strategy</th><td>file_system</td>"), std::string::npos);

  // `aftermath report` renders the same from result.json alone.
  std::string again = dir / "again";
  e2e::Child c =
      e2e::spawn({e2e::bin("aftermath"), "report", out() + "/result.json", "--out", again},
                 dir / "report.out", dir / "report.err");
  int status = e2e::wait_for(c, std::chrono::seconds(30));
  ASSERT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << e2e::slurp(dir / "report.err");
  // junit.xml too, byte for byte the one the run wrote.
  EXPECT_EQ(e2e::slurp(again + "/junit.xml"), e2e::slurp(out() + "/junit.xml"));
  std::string html2 = e2e::slurp(again + "/report.html");
  EXPECT_NE(html2.find("Per-process logs (7 processes)"), std::string::npos);
  const json& first = sc["processes"][0];
  std::string abs_out = scen_dir + "/" + first["logs"]["stdout"].get<std::string>();
  // Outside the new report's folder: linked by absolute path.
  EXPECT_NE(html2.find("href=\"file://" + abs_out + "\""), std::string::npos);
  EXPECT_NE(html2.find("<th>job start_method</th><td>fork</td>"), std::string::npos);
  json trace = json::parse(e2e::slurp(again + "/trace.json"));
  int named = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"].contains("logs")) ++named;
  EXPECT_EQ(named, 7);
}

TEST_P(ProcessLogs, AScenarioRunAgainInTheSameFolderListsOnlyItsOwnLogs) {
  auto first = run_logs({"--no-config"});
  ASSERT_FALSE(first.result.is_null()) << first.err;
  auto second = run_logs({"--no-config"});
  ASSERT_FALSE(second.result.is_null()) << second.err;
  const json& sc = second.result["scenarios"][0];
  EXPECT_FALSE(sc.contains("job_environment"));  // nothing reported, nothing invented
  std::set<std::string> listed;
  for (const auto& p : sc["processes"]) {
    listed.insert(p["logs"]["stdout"].get<std::string>());
    listed.insert(p["logs"]["stderr"].get<std::string>());
  }
  std::set<std::string> on_disk;
  for (const auto& e : fs::directory_iterator(sc["out_dir"].get<std::string>() + "/logs"))
    on_disk.insert("logs/" + e.path().filename().string());
  EXPECT_EQ(listed, on_disk);
}

// job_exit's output_regex still sees what every process printed, in the
// order children, then the top process.
TEST_P(ProcessLogs, OutputChecksStillSeeEveryProcesssLines) {
  std::string yaml = dir / "logs-job.yaml";
  std::ofstream(yaml) << "name: logs-job\n"
                         "description: Processes that announce and print lines of their own.\n"
                         "job:\n"
                         "  command: "
                      << e2e::bin("tc_logs")
                      << "\n"
                         "  args: [--ranks, \"2\", --workers, \"2\"]\n"
                         "checks:\n"
                         "  job_exit: {code: 0, output_regex: \"worker 1/1 err "
                         "2[\\\\s\\\\S]*launcher -1/-1 err 2\"}\n";
  auto r = e2e::aftermath(dir, {"run", "--out", out(), "--contain", GetParam(), yaml});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  auto c = e2e::check(r, "job_exit");
  EXPECT_EQ(c["status"], "pass") << c.dump();
  EXPECT_EQ(c["measured"]["output_matched"], true);
  EXPECT_TRUE(r.result["scenarios"][0]["processes"][0].contains("logs"));
}

INSTANTIATE_TEST_SUITE_P(Containment, ProcessLogs, ::testing::Values("auto", "subreaper"));

TEST(ProcessLogsOptOut, AnEmptyVariableKeepsEverythingInTheSharedLogs) {
  TempDir dir;
  ::setenv("AFTERMATH_LOG_DIR", "", 1);  // inherited by the CLI, then by the job
  auto r = e2e::aftermath(dir, {"run", "--out", dir / "out", "--", e2e::bin("tc_logs"), "--ranks",
                                "1", "--workers", "1"});
  ::unsetenv("AFTERMATH_LOG_DIR");
  ASSERT_FALSE(r.result.is_null()) << r.err;
  const json& sc = r.result["scenarios"][0];
  for (const auto& p : sc["processes"]) EXPECT_FALSE(p.contains("logs")) << p.dump();
  std::string scen_dir = sc["out_dir"];
  EXPECT_FALSE(fs::exists(scen_dir + "/logs"));
  std::string shared = e2e::slurp(scen_dir + "/stdout.log");
  EXPECT_NE(shared.find("worker 0/0 out 1\n"), std::string::npos) << shared;
  EXPECT_EQ(shared.find("aftermath: pid"), std::string::npos) << shared;
}

}  // namespace
