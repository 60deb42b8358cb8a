// Per-process logs and the job's reported environment:
// - the points clients (C++ header, Python module) move an announced
//   process's stdout/stderr to files of its own under AFTERMATH_LOG_DIR;
// - the runner finds them (find_process_logs) and merges their output
//   (merge_process_output);
// - result.json carries both, and the HTML, trace and summary show them.
#include "harness/supervise/process_logs.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/points/aftermath_points.h"
#include "harness/core/result.h"
#include "harness/core/timeline.h"
#include "harness/supervise/event_socket.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/summary.h"
#include "reports/trace.h"
#include "tests/support/children.h"
#include "tests/support/files.h"
#include "tests/support/python.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/report_fixture.h"

namespace aftermath {
namespace {

using aftermath::testing::slurp;

namespace ap = aftermath::points;
namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

using aftermath::testing::TempDir;

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Lines of text without the "aftermath: " markers, and the markers alone.
std::string without_markers(const std::string& text) {
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.rfind("aftermath: ", 0) != 0) out += line + "\n";
  return out;
}
std::vector<std::string> markers(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.rfind("aftermath: ", 0) == 0) out.push_back(line);
  return out;
}

using testing_children::readable_within;
using testing_children::reap_within;

// Runs `body` in a forked child whose fd 1 and 2 are `shared_out` and
// `shared_err` (the job's shared logs) and whose environment has exactly
// these AFTERMATH_* variables; returns the child's pid once it exited
// (0 when it could not start), and its exit status in *status.
pid_t run_child(const std::vector<std::pair<std::string, std::string>>& env,
                const std::string& shared_out, const std::string& shared_err,
                const std::function<int()>& body, int* status) {
  fflush(stdout);  // nothing of ours may be inherited in a stdio buffer
  fflush(stderr);
  pid_t pid = ::fork();
  if (pid == 0) {
    for (const char* v : {"AFTERMATH_EVENTS", "AFTERMATH_POINTS", "AFTERMATH_POINT_TIMEOUT_MS",
                          "AFTERMATH_LOG_DIR"})
      ::unsetenv(v);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    int o = ::open(shared_out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int e = ::open(shared_err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (o < 0 || e < 0) ::_exit(90);
    fflush(stdout);
    fflush(stderr);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::_exit(body());
  }
  if (pid < 0) return 0;
  *status = reap_within(pid, 10000);
  return pid;
}

bool exited_zero(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

// --- the C++ client -----------------------------------------------------------------------

TEST(ProcessLogsClient, AnnounceMovesStdoutAndStderrToTheProcesssOwnFiles) {
  TempDir dir;
  EventSocket sock;
  ASSERT_TRUE(sock.open());
  const std::string logs = dir / "logs";
  int status = -1;
  const std::string py = aftermath::testing::default_python();
  pid_t pid = run_child(
      {{"AFTERMATH_LOG_DIR", logs}, {"AFTERMATH_EVENTS", sock.address()}}, dir / "shared.out",
      dir / "shared.err",
      [] {
        printf("before announce\n");  // buffered: must still land in the shared log
        ap::announce("worker", 0, 3);
        printf("worker out 1\n");
        fprintf(stderr, "worker err 1\n");
        fflush(stdout);
        static const char raw[] = "worker out 2 (write)\n";
        if (::write(1, raw, sizeof raw - 1) < 0) return 3;
        // A process forked from an announced one announces again and gets
        // files of its own.
        pid_t g = ::fork();
        if (g == 0) {
          ap::announce("worker", 0, 4);
          printf("grandchild out\n");
          fprintf(stderr, "grandchild err\n");
          fflush(stdout);
          ::_exit(0);
        }
        int gs = g > 0 ? reap_within(g, 5000) : -1;
        printf("worker out 3 %d\n", static_cast<int>(g));
        fflush(stdout);
        return exited_zero(gs) ? 0 : 4;
      },
      &status);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(exited_zero(status)) << status;
  const std::string me = std::to_string(pid);
  const std::string base = logs + "/worker-r0-w3-" + me;

  // Find the grandchild's pid from the last line of the child's stdout file.
  std::string own_out = slurp(base + ".out");
  auto at = own_out.rfind("worker out 3 ");
  ASSERT_NE(at, std::string::npos) << own_out;
  const std::string grandchild = std::to_string(std::atoi(own_out.c_str() + at + 13));
  const std::string gbase = logs + "/worker-r0-w4-" + grandchild;

  EXPECT_THAT(
      files_in(logs),
      ElementsAre("worker-r0-w3-" + me + ".err", "worker-r0-w3-" + me + ".out",
                  "worker-r0-w4-" + grandchild + ".err", "worker-r0-w4-" + grandchild + ".out"));
  EXPECT_EQ(without_markers(own_out),
            "worker out 1\nworker out 2 (write)\nworker out 3 " + grandchild + "\n");
  EXPECT_EQ(slurp(base + ".err"), "worker err 1\n");
  EXPECT_EQ(slurp(gbase + ".out"), "grandchild out\n");
  EXPECT_EQ(slurp(gbase + ".err"), "grandchild err\n");
  // Each process's marker went to the stdout it had before: the shared log
  // for the child, the child's own file for the grandchild.
  EXPECT_EQ(slurp(dir / "shared.out"), "before announce\naftermath: pid " + me +
                                           " (worker 0/3) logs to " + base + ".out and .err\n");
  EXPECT_THAT(markers(own_out), ElementsAre("aftermath: pid " + grandchild +
                                            " (worker 0/4) logs to " + gbase + ".out and .err"));
  EXPECT_EQ(slurp(dir / "shared.err"), "");

  // The harness hears which files: an "aftermath.logs" event after the announce.
  std::vector<json> msgs;
  while (auto m = sock.receive()) msgs.push_back(json::parse(m->text));
  std::vector<json> log_events;
  for (const auto& m : msgs)
    if (m["t"] == "event" && m["name"] == "aftermath.logs") log_events.push_back(m["fields"]);
  EXPECT_THAT(log_events, ElementsAre(json{{"out", base + ".out"}, {"err", base + ".err"}},
                                      json{{"out", gbase + ".out"}, {"err", gbase + ".err"}}));
}

TEST(ProcessLogsClient, AnnouncingTwiceUnderTheSameNameKeepsTheFiles) {
  TempDir dir;
  int status = -1;
  const std::string py = aftermath::testing::default_python();
  pid_t pid = run_child(
      {{"AFTERMATH_LOG_DIR", dir / "logs"}}, dir / "shared.out", dir / "shared.err",
      [] {
        ap::announce("rank", 2);
        printf("one\n");
        fflush(stdout);
        ap::announce("rank", 2);
        printf("two\n");
        fflush(stdout);
        return 0;
      },
      &status);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(exited_zero(status));
  const std::string me = std::to_string(pid);
  EXPECT_THAT(files_in(dir / "logs"),
              ElementsAre("rank-r2-" + me + ".err", "rank-r2-" + me + ".out"));
  EXPECT_EQ(slurp(dir / "logs/rank-r2-" + me + ".out"), "one\ntwo\n");
  EXPECT_THAT(markers(slurp(dir / "shared.out")), ::testing::SizeIs(1));
}

// A helper that talks to its parent through its stdout (torch_shm_manager
// prints its socket path there) keeps that pipe: only regular files move.
TEST(ProcessLogsClient, APipeOnStdoutStaysWhereItIs) {
  TempDir dir;
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  int status = -1;
  const std::string py = aftermath::testing::default_python();
  pid_t pid = run_child(
      {{"AFTERMATH_LOG_DIR", dir / "logs"}}, dir / "shared.out", dir / "shared.err",
      [&] {
        ::close(pipefd[0]);
        ::dup2(pipefd[1], 1);  // stdout is the handshake pipe
        ap::announce("helper");
        printf("socket /tmp/handshake\n");
        fprintf(stderr, "helper err\n");
        fflush(stdout);
        return 0;
      },
      &status);
  ::close(pipefd[1]);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(exited_zero(status));
  // The parent reads exactly the handshake: no marker, nothing moved away.
  std::string got;
  char b[256];
  for (ssize_t n; readable_within(pipefd[0], 5000) && (n = ::read(pipefd[0], b, sizeof b)) > 0;)
    got.append(b, static_cast<size_t>(n));
  ::close(pipefd[0]);
  EXPECT_EQ(got, "socket /tmp/handshake\n");
  // stderr was the shared log file: it moved, with its marker left behind.
  const std::string me = std::to_string(pid);
  EXPECT_THAT(files_in(dir / "logs"), ElementsAre("helper-" + me + ".err"));
  EXPECT_EQ(slurp(dir / "logs/helper-" + me + ".err"), "helper err\n");
  EXPECT_EQ(slurp(dir / "shared.err"), "aftermath: pid " + me + " (helper) logs to " + dir.path() +
                                           "/logs/helper-" + me + ".err\n");
}

// Unset, or set empty (the opt-out): nothing moves, no folder appears.
class ProcessLogsOff : public ::testing::TestWithParam<bool> {};

TEST_P(ProcessLogsOff, NothingIsRedirected) {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> env;
  if (GetParam()) env.emplace_back("AFTERMATH_LOG_DIR", "");
  int status = -1;
  const std::string py = aftermath::testing::default_python();
  pid_t pid = run_child(
      env, dir / "shared.out", dir / "shared.err",
      [] {
        ap::announce("launcher");
        printf("out line\n");
        fprintf(stderr, "err line\n");
        fflush(stdout);
        return 0;
      },
      &status);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(exited_zero(status));
  EXPECT_EQ(slurp(dir / "shared.out"), "out line\n");
  EXPECT_EQ(slurp(dir / "shared.err"), "err line\n");
  EXPECT_THAT(files_in(dir.path()), ElementsAre("shared.err", "shared.out"));
}
INSTANTIATE_TEST_SUITE_P(UnsetOrEmpty, ProcessLogsOff, ::testing::Values(false, true));

// --- the Python client --------------------------------------------------------------------

TEST(ProcessLogsPython, AnnounceMovesStdoutAndStderrAndStreamsFollow) {
  if (::access(aftermath::testing::default_python().c_str(), X_OK) != 0)
    GTEST_SKIP() << aftermath::testing::default_python() << " is not installed";
  TempDir dir;
  EventSocket sock;
  ASSERT_TRUE(sock.open());
  const std::string logs = dir / "logs";
  // Written before announcing, unflushed: must reach the old stdout. After
  // the redirect, print() reaches the file even without a flush before
  // os._exit (line buffering). The forked child announces and gets its own.
  const std::string code = std::string("import os, sys; sys.path.insert(0, '") +
                           AFTERMATH_SOURCE_DIR +
                           "/fixtures/points'); import aftermath_points as ap\n"
                           "print('before announce')\n"
                           "ap.announce('rank', rank=1)\n"
                           "print('rank out 1'); print('rank err 1', file=sys.stderr)\n"
                           "pid = os.fork()\n"
                           "if pid == 0:\n"
                           "    ap.announce('worker', rank=1, worker=2)\n"
                           "    print('worker out'); print('worker err', file=sys.stderr)\n"
                           "    os._exit(0)\n"
                           "os.waitpid(pid, 0)\n"
                           "print('rank out 2 %d' % pid)\n"
                           "os._exit(0)\n";
  int status = -1;
  const std::string py = aftermath::testing::default_python();
  pid_t pid = run_child(
      {{"AFTERMATH_LOG_DIR", logs}, {"AFTERMATH_EVENTS", sock.address()}}, dir / "shared.out",
      dir / "shared.err",
      [&] {
        ::execl(py.c_str(), "python3", "-c", code.c_str(), static_cast<char*>(nullptr));
        return 127;
      },
      &status);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(exited_zero(status)) << status << "\n" << slurp(dir / "shared.err");
  const std::string me = std::to_string(pid);
  const std::string base = logs + "/rank-r1-" + me;
  std::string own_out = slurp(base + ".out");
  auto at = own_out.rfind("rank out 2 ");
  ASSERT_NE(at, std::string::npos) << own_out;
  const std::string child = std::to_string(std::atoi(own_out.c_str() + at + 11));
  const std::string cbase = logs + "/worker-r1-w2-" + child;

  EXPECT_THAT(files_in(logs),
              ElementsAre("rank-r1-" + me + ".err", "rank-r1-" + me + ".out",
                          "worker-r1-w2-" + child + ".err", "worker-r1-w2-" + child + ".out"));
  EXPECT_EQ(without_markers(own_out), "rank out 1\nrank out 2 " + child + "\n");
  EXPECT_EQ(slurp(base + ".err"), "rank err 1\n");
  EXPECT_EQ(slurp(cbase + ".out"), "worker out\n");
  EXPECT_EQ(slurp(cbase + ".err"), "worker err\n");
  EXPECT_EQ(slurp(dir / "shared.out"), "before announce\naftermath: pid " + me +
                                           " (rank 1) logs to " + base + ".out and .err\n");
  EXPECT_THAT(markers(own_out), ElementsAre("aftermath: pid " + child + " (worker 1/2) logs to " +
                                            cbase + ".out and .err"));
  EXPECT_EQ(slurp(dir / "shared.err"), "");
  std::vector<json> log_events;
  while (auto m = sock.receive()) {
    json j = json::parse(m->text);
    if (j["t"] == "event" && j["name"] == "aftermath.logs") log_events.push_back(j["fields"]);
  }
  EXPECT_THAT(log_events, ElementsAre(json{{"out", base + ".out"}, {"err", base + ".err"}},
                                      json{{"out", cbase + ".out"}, {"err", cbase + ".err"}}));
}

TEST(ProcessLogsPython, EmptyVariableIsTheOptOut) {
  if (::access(aftermath::testing::default_python().c_str(), X_OK) != 0)
    GTEST_SKIP() << aftermath::testing::default_python() << " is not installed";
  TempDir dir;
  const std::string code = std::string("import sys; sys.path.insert(0, '") + AFTERMATH_SOURCE_DIR +
                           "/fixtures/points'); import aftermath_points as ap\n"
                           "ap.announce('rank', rank=0)\n"
                           "print('out line'); print('err line', file=sys.stderr)\n";
  int status = -1;
  const std::string py = aftermath::testing::default_python();
  pid_t pid = run_child(
      {{"AFTERMATH_LOG_DIR", ""}}, dir / "shared.out", dir / "shared.err",
      [&] {
        ::execl(py.c_str(), "python3", "-c", code.c_str(), static_cast<char*>(nullptr));
        return 127;
      },
      &status);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(exited_zero(status));
  EXPECT_EQ(slurp(dir / "shared.out"), "out line\n");
  EXPECT_EQ(slurp(dir / "shared.err"), "err line\n");
  EXPECT_THAT(files_in(dir.path()), ElementsAre("shared.err", "shared.out"));
}

// --- the runner ---------------------------------------------------------------------------

ProcessHistory history(int pid) {
  ProcessHistory p;
  p.pid = pid;
  return p;
}

using testing::touch;

TEST(ProcessLogsRunner, FilesComeFromTheLogsEventsOfJobProcesses) {
  TempDir dir;
  fs::create_directories(dir / "logs");
  touch(dir / "logs/rank-r0-7.out");
  touch(dir / "logs/rank-r0-7.err");
  touch(dir / "logs/worker-r0-w1-8.out");  // its .err was never created
  touch(dir / "logs/helper-9.out");        // pid 9 is not part of the job
  Timeline tl;
  tl.facts.containment = JobContainment::PidNamespace;
  // Host pids from the kernel (1007, 1008); the names carry the job's own pids.
  tl.add(obs::event(
      1, 1007, "aftermath.logs",
      json{{"out", dir / "logs/rank-r0-7.out"}, {"err", dir / "logs/rank-r0-7.err"}}.dump()));
  tl.add(obs::event(
      2, 1008, "aftermath.logs",
      json{{"out", dir / "logs/worker-r0-w1-8.out"}, {"err", dir / "logs/worker-r0-w1-8.err"}}
          .dump()));
  tl.add(obs::event(3, 9, "aftermath.logs", json{{"out", dir / "logs/helper-9.out"}}.dump()));
  tl.add(obs::event(4, 1007, "step", json{{"out", "not a log"}}.dump()));
  auto logs = find_process_logs(tl, {history(1007), history(1008), history(1010)}, dir.path());
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[1007].stdout_path, "logs/rank-r0-7.out");
  EXPECT_EQ(logs[1007].stderr_path, "logs/rank-r0-7.err");
  EXPECT_EQ(logs[1008].stdout_path, "logs/worker-r0-w1-8.out");
  EXPECT_EQ(logs[1008].stderr_path, "");
}

TEST(ProcessLogsRunner, WithoutAPidNamespaceFileNamesCountToo) {
  TempDir dir;
  fs::create_directories(dir / "logs");
  touch(dir / "logs/rank-r0-4242.out");
  touch(dir / "logs/rank-r0-4242.err");
  touch(dir / "logs/rank-r0-4243.out");  // not a job process
  Timeline tl;
  tl.facts.containment = JobContainment::Subreaper;
  auto logs = find_process_logs(tl, {history(4242)}, dir.path());
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[4242].stdout_path, "logs/rank-r0-4242.out");
  EXPECT_EQ(logs[4242].stderr_path, "logs/rank-r0-4242.err");
  // In a PID namespace the same names say nothing about host pids.
  tl.facts.containment = JobContainment::PidNamespace;
  EXPECT_THAT(find_process_logs(tl, {history(4242)}, dir.path()), IsEmpty());
}

// The checks (job_exit's output_regex) and the stderr tail still read the
// whole job's output: the shared logs, then each process's own files,
// children first and the top process last.
TEST(ProcessLogsRunner, ChecksStillSeeEveryProcesssOutput) {
  TempDir dir;
  fs::create_directories(dir / "logs");
  std::ofstream(dir / "logs/launcher-2.err") << "rank 1 failed: exited(3)\n";
  std::ofstream(dir / "logs/rank-r1-3.err") << "rank 1: allocation failed\n";
  std::ofstream(dir / "logs/rank-r1-3.out") << std::string(kJobOutputBytes, 'x');
  Timeline tl;
  tl.facts.stderr_text = "launcher: starting";
  tl.facts.stdout_text = "shared out\n";
  ProcessHistory top = history(50), rank = history(51);
  top.is_top = true;
  rank.depth = 1;
  std::map<int, ScenarioResult::ProcessLogs> logs;
  logs[50] = {"", "logs/launcher-2.err"};
  logs[51] = {"logs/rank-r1-3.out", dir / "logs/rank-r1-3.err"};  // absolute works too
  merge_process_output(tl, {top, rank}, logs, dir.path());
  EXPECT_EQ(tl.facts.stderr_text,
            "launcher: starting\nrank 1: allocation failed\nrank 1 failed: exited(3)\n");
  // Bounded like the shared capture: the tail is kept.
  EXPECT_EQ(tl.facts.stdout_text.size(), kJobOutputBytes);
  EXPECT_EQ(tl.facts.stdout_text.back(), 'x');
}

// --- result.json and the renderers --------------------------------------------------------

RunResult run_with_logs(const std::string& out_dir) {
  RunResult run;
  run.tool_version = "test";
  ScenarioResult s;
  s.name = "logs-job";
  s.verdict = Verdict::Fail;
  s.verdict_reason = "planted";
  s.out_dir = out_dir;
  s.stdout_path = out_dir + "/stdout.log";
  s.stderr_path = out_dir + "/stderr.log";
  ProcessHistory launcher = history(100);
  launcher.role = Role::Launcher;
  launcher.comm = "launcher";
  ProcessHistory worker = history(101);
  worker.role = Role::Worker;
  worker.rank = 0;
  worker.worker = 3;
  worker.comm = "worker";
  s.processes = {launcher, worker};
  s.process_logs[101] = {"logs/worker-r0-w3-5.out", "logs/worker-r0-w3-5.err"};
  s.job_environment = {{"sharing_strategy", "file_system"}, {"start_method", "spawn"}};
  run.scenarios.push_back(s);
  return run;
}

const json& process_entry(const json& result, int pid) {
  for (const auto& p : result["scenarios"][0]["processes"])
    if (p["pid"] == pid) return p;
  throw std::runtime_error("no process " + std::to_string(pid));
}

TEST(ProcessLogsReports, ResultJsonCarriesLogsAndJobEnvironmentOnlyWhenThere) {
  json j = json::parse(write_json(run_with_logs("/r/out/logs-job")));
  EXPECT_EQ(process_entry(j, 101)["logs"],
            (json{{"stdout", "logs/worker-r0-w3-5.out"}, {"stderr", "logs/worker-r0-w3-5.err"}}));
  EXPECT_FALSE(process_entry(j, 100).contains("logs"));
  EXPECT_EQ(j["scenarios"][0]["job_environment"],
            (json{{"sharing_strategy", "file_system"}, {"start_method", "spawn"}}));
  RunResult bare = run_with_logs("/r/out/logs-job");
  bare.scenarios[0].process_logs.clear();
  bare.scenarios[0].job_environment.clear();
  json b = json::parse(write_json(bare));
  EXPECT_FALSE(process_entry(b, 101).contains("logs"));
  EXPECT_FALSE(b["scenarios"][0].contains("job_environment"));
}

TEST(ProcessLogsReports, HtmlLinksEachProcessLogFromItsLaneAndTheLogsTable) {
  json j = json::parse(write_json(run_with_logs("/r/out/logs-job")));
  std::string html = render_html(testing_reports::typed(j), "/r/out");
  // The worker's lane carries both links, relative to the report's folder.
  auto lane = html.find("<g class=\"lane\" data-pid=\"101\"");
  ASSERT_NE(lane, std::string::npos);
  std::string lane_html = html.substr(lane, html.find("</g></g>", lane) - lane);
  EXPECT_THAT(lane_html, HasSubstr("<a class=\"lane-log\" data-stream=\"out\" "
                                   "href=\"logs-job/logs/worker-r0-w3-5.out\">"));
  EXPECT_THAT(lane_html, HasSubstr("<a class=\"lane-log\" data-stream=\"err\" "
                                   "href=\"logs-job/logs/worker-r0-w3-5.err\">"));
  // The launcher has none.
  auto launcher = html.find("<g class=\"lane\" data-pid=\"100\"");
  ASSERT_NE(launcher, std::string::npos);
  EXPECT_THAT(html.substr(launcher, html.find("</g></g>", launcher) - launcher),
              Not(HasSubstr("lane-log")));
  // The logs section lists it.
  auto table = html.find("<table class=\"proc-logs\">");
  ASSERT_NE(table, std::string::npos);
  std::string t = html.substr(table, html.find("</table>", table) - table);
  EXPECT_THAT(t, HasSubstr("Per-process logs (1 process)"));
  EXPECT_THAT(t, HasSubstr("<tr data-pid=\"101\"><td>worker</td>"));
  EXPECT_THAT(
      t, HasSubstr("<a href=\"logs-job/logs/worker-r0-w3-5.out\">logs/worker-r0-w3-5.out</a>"));
  EXPECT_THAT(
      t, HasSubstr("<a href=\"logs-job/logs/worker-r0-w3-5.err\">logs/worker-r0-w3-5.err</a>"));
  // The job's environment: in the environment block and the scenario's facts.
  EXPECT_THAT(
      html,
      HasSubstr("<tr class=\"job-env\"><th>job sharing_strategy</th><td>file_system</td></tr>"));
  EXPECT_THAT(html,
              HasSubstr("<tr class=\"job-env\"><th>job start_method</th><td>spawn</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<th>job environment</th><td><code>sharing_strategy=file_system; "
                              "start_method=spawn</code></td>"));
}

TEST(ProcessLogsReports, AnOldResultWithoutThemRendersAsBefore) {
  json j = testing_reports::load_fixture();
  std::string html = render_html(testing_reports::typed(j), "/nowhere");
  EXPECT_THAT(html, HasSubstr("<g class=\"lane\""));  // it does draw lanes
  EXPECT_THAT(html, Not(HasSubstr("<table class=\"proc-logs\"")));
  EXPECT_THAT(html, Not(HasSubstr("<a class=\"lane-log\"")));
  EXPECT_THAT(html, Not(HasSubstr("<tr class=\"job-env\"")));
  EXPECT_THAT(html, Not(HasSubstr("<th>job environment</th>")));
  EXPECT_THAT(render_summary_md(testing_reports::typed(j)), Not(HasSubstr("job environment")));
}

TEST(ProcessLogsReports, TraceNamesTheLogsAndSummaryShowsTheJobEnvironment) {
  json j = json::parse(write_json(run_with_logs("/r/out/logs-job")));
  json trace = render_trace(testing_reports::typed(j));
  json want = {{"stdout", "/r/out/logs-job/logs/worker-r0-w3-5.out"},
               {"stderr", "/r/out/logs-job/logs/worker-r0-w3-5.err"}};
  int named = 0, sliced = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["tid"] != 101) continue;
    if (e["ph"] == "M" && e["name"] == "thread_name") named += e["args"]["logs"] == want;
    if (e["ph"] == "X" && e["cat"] == "process") sliced += e["args"]["logs"] == want;
  }
  EXPECT_EQ(named, 1);
  EXPECT_EQ(sliced, 1);
  EXPECT_THAT(render_summary_md(testing_reports::typed(j)),
              HasSubstr("- job environment: sharing_strategy=file_system; start_method=spawn\n"));
}

}  // namespace
}  // namespace aftermath
