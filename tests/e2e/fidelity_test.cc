// End-to-end: the job sees its own /proc. A program that finds a process of
// its own by scanning /proc (or with psutil) and kills it by the pid found
// there must end the same way under the harness as it does without it, in
// either containment mode. The program is uninstrumented Python
// (tests/data/python/kill_child_found_in_proc.py): it knows nothing of the
// harness.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#include <regex>

#include "e2e_util.h"
#include "harness/supervise/reaper_protocol.h"

using namespace std::chrono_literals;
using e2e::TempDir;
using nlohmann::json;

namespace {

namespace reaper = aftermath::reaper;

const std::string kPython = e2e::python();

std::string program() { return e2e::src("tests/data/python/kill_child_found_in_proc.py"); }

// Why the program cannot run here with this finder ("" when it can).
std::string unavailable(const std::string& find) {
  if (::access(kPython.c_str(), X_OK) != 0) return kPython + " is not installed";
  if (find != "psutil") return "";
  TempDir d;
  e2e::Child c = e2e::spawn({kPython, "-c", "import psutil"}, d / "o", d / "e");
  int status = e2e::wait_for(c, 30s);
  return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ""
                                                                      : "no psutil for " + kPython;
}

// The program's report line, "self=S getpid=G found=F outcome=O".
struct Report {
  std::string self, getpid, found, outcome;
};
Report parse(const std::string& out) {
  std::smatch m;
  static const std::regex re(R"(self=(\S+) getpid=(\S+) found=(\S+) outcome=(\S+))");
  if (!std::regex_search(out, m, re)) return {};
  return {m[1], m[2], m[3], m[4]};
}

// The program without the harness: its exit code (-1: no exit) and report.
std::pair<int, Report> run_plain(const std::string& find) {
  TempDir d;
  e2e::Child c = e2e::spawn({kPython, program(), "--find", find}, d / "o", d / "e");
  int status = e2e::wait_for(c, 60s);
  int code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return {code, parse(e2e::slurp(d / "o"))};
}

// `aftermath run --out DIR/out ARGS -- python3 PROGRAM --find FIND`.
std::vector<std::string> run_args(const TempDir& d, const std::string& find,
                                  std::vector<std::string> args) {
  std::vector<std::string> a{"run", "--out", d / "out"};
  a.insert(a.end(), args.begin(), args.end());
  for (const std::string& s :
       {std::string("--"), std::string(kPython), program(), std::string("--find"), find})
    a.push_back(s);
  return a;
}

// Runs `aftermath ARGS` with CAP_SYS_ADMIN out of its bounding set (so it
// gets a PID namespace only by way of a user namespace, as an unprivileged
// user does), and, with `mask_proc`, in a mount namespace where a file of
// /proc is covered by /dev/null (as container runtimes mask /proc/timer_list
// and others). Returns the wait status of aftermath (-1: it did not end in
// time), or -2 if the child could not set that up.
int run_restricted(const TempDir& d, const std::vector<std::string>& args, bool mask_proc) {
  std::vector<std::string> argv{e2e::bin("aftermath")};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> av;
  for (auto& a : argv) av.push_back(a.data());
  av.push_back(nullptr);
  std::string out = d / "stdout.txt", err = d / "stderr.txt";
  pid_t pid = ::fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    // Child: system calls only, then exec.
    if (mask_proc && (::unshare(CLONE_NEWNS) != 0 ||
                      ::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
                      ::mount("/dev/null", "/proc/timer_list", nullptr, MS_BIND, nullptr) != 0))
      _exit(120);
    if (::prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0) _exit(121);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) _exit(122);
    ::execv(av[0], av.data());
    _exit(127);
  }
  e2e::Child c{pid, static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))};
  int status = e2e::wait_for(c, 60s);
  if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) >= 120 && WEXITSTATUS(status) <= 122)
    return -2;
  return status;
}

struct Case {
  const char* contain;
  const char* find;
};
std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  return std::string(i.param.contain) + "_" + i.param.find;
}

class ProcView : public ::testing::TestWithParam<Case> {};

// The same program, the same outcome: with and without the harness, the
// child found in /proc is killed by the pid found there, and /proc/self is
// the pid os.getpid() gives. (Without a procfs of the job's own PID
// namespace the kill fails with ESRCH and the program exits 3: see
// WithTheHostsProcTheKillFails.)
TEST_P(ProcView, AChildFoundInProcIsKilledByThatPid) {
  const std::string contain = GetParam().contain, find = GetParam().find;
  if (auto why = unavailable(find); !why.empty()) GTEST_SKIP() << why;
  auto [plain_code, plain] = run_plain(find);
  ASSERT_EQ(plain_code, 0) << "without the harness: " << plain.outcome;
  EXPECT_EQ(plain.outcome, "killed");

  TempDir d;
  auto r = e2e::aftermath(d, run_args(d, find, {"--contain", contain}));
  ASSERT_FALSE(r.result.is_null()) << r.out << r.err;
  const json& sc = r.result["scenarios"][0];
  std::string mode = sc["containment"]["mode"];
  if (contain == "pidns") {
    EXPECT_TRUE(mode == "pid-namespace" || mode == "user+pid-namespace") << mode;
    EXPECT_EQ(sc["containment"]["note"], "");
  } else {
    EXPECT_EQ(mode, "subreaper");
  }
  Report in = parse(e2e::job_output(sc, "stdout"));
  EXPECT_EQ(sc["top"]["outcome"]["text"], "exited(" + std::to_string(plain_code) + ")")
      << in.outcome << "\n"
      << e2e::job_output(sc, "stderr");
  EXPECT_EQ(in.outcome, plain.outcome);
  EXPECT_EQ(in.self, in.getpid) << "/proc/self and os.getpid() disagree inside the job";
  EXPECT_NE(in.found, "None");
  EXPECT_EQ(r.exit_code, 0) << sc["verdict_reason"];
  if (contain == "pidns" && mode == "pid-namespace") {
    // Pid 1 is the reaper, the program 2: the job's own numbers.
    EXPECT_EQ(in.getpid, "2");
    // The report still names host pids.
    EXPECT_NE(sc["top"]["pid"], 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Containment, ProcView,
                         ::testing::Values(Case{"pidns", "proc"}, Case{"pidns", "psutil"},
                                           Case{"subreaper", "proc"}, Case{"subreaper", "psutil"}),
                         case_name);

// /dev/shm stays the host's, and the job still sees its own /proc.
TEST(ProcViewShm, WithTheHostsShmTheJobStillSeesItsOwnProc) {
  if (auto why = unavailable("proc"); !why.empty()) GTEST_SKIP() << why;
  TempDir d;
  auto r = e2e::aftermath(d, run_args(d, "proc", {"--contain", "pidns", "--shm", "host"}));
  ASSERT_FALSE(r.result.is_null()) << r.out << r.err;
  const json& sc = r.result["scenarios"][0];
  EXPECT_EQ(sc["containment"]["shm"], "host");
  EXPECT_EQ(sc["containment"]["note"], "");
  Report in = parse(e2e::job_output(sc, "stdout"));
  EXPECT_EQ(in.outcome, "killed");
  EXPECT_EQ(in.self, in.getpid);
  EXPECT_EQ(sc["top"]["outcome"]["text"], "exited(0)");
}

// The unprivileged path: a PID namespace inside a user namespace, where pid
// 1 mounts the procfs as the user namespace's root.
TEST(ProcViewUserNamespace, TheJobSeesItsOwnProc) {
  if (auto why = unavailable("proc"); !why.empty()) GTEST_SKIP() << why;
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to drop CAP_SYS_ADMIN";
  TempDir d;
  int status = run_restricted(d, run_args(d, "proc", {}), false);
  ASSERT_NE(status, -2) << "cannot drop CAP_SYS_ADMIN here";
  auto rj = e2e::slurp(d / "out/result.json");
  ASSERT_FALSE(rj.empty()) << e2e::slurp(d / "stderr.txt");
  const json sc = json::parse(rj)["scenarios"][0];
  if (sc["containment"]["mode"] != "user+pid-namespace")
    GTEST_SKIP() << "no user namespace here: " << sc["containment"].dump();
  EXPECT_EQ(sc["containment"]["note"], "");
  Report in = parse(e2e::job_output(sc, "stdout"));
  EXPECT_EQ(in.outcome, "killed");
  EXPECT_EQ(in.self, in.getpid);
  EXPECT_EQ(sc["top"]["outcome"]["text"], "exited(0)");
}

// Where the kernel refuses the job a procfs (a user namespace whose /proc
// has a file masked, as in most containers), the job runs as before, sees
// the host's /proc, and the report says so. The program then fails as it
// does in any PID namespace without its own /proc: found by its host pid,
// the child cannot be killed by it (ESRCH), exit 3.
TEST(ProcViewUserNamespace, AMaskedProcIsReportedAndTheJobSeesTheHosts) {
  if (auto why = unavailable("proc"); !why.empty()) GTEST_SKIP() << why;
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to mask /proc and drop CAP_SYS_ADMIN";
  if (::access("/proc/timer_list", F_OK) != 0) GTEST_SKIP() << "no /proc/timer_list to mask";
  TempDir d;
  int status = run_restricted(d, run_args(d, "proc", {}), true);
  if (status == -2) GTEST_SKIP() << "cannot mask /proc/timer_list or drop CAP_SYS_ADMIN here";
  auto rj = e2e::slurp(d / "out/result.json");
  ASSERT_FALSE(rj.empty()) << e2e::slurp(d / "stderr.txt");
  const json sc = json::parse(rj)["scenarios"][0];
  if (sc["containment"]["mode"] != "user+pid-namespace")
    GTEST_SKIP() << "no user namespace here: " << sc["containment"].dump();
  EXPECT_EQ(
      sc["containment"]["note"],
      "the job sees the host's /proc (mount of a procfs for its PID namespace refused: EPERM)");
  Report in = parse(e2e::job_output(sc, "stdout"));
  EXPECT_EQ(in.outcome, "ProcessLookupError");
  EXPECT_NE(in.self, in.getpid);
  EXPECT_EQ(sc["top"]["outcome"]["text"], "exited(3)");
}

// The reaper alone, as the supervisor runs it: its records and the top's
// wait status. `extra` goes before "--".
struct ReaperRun {
  std::vector<reaper::Record> records;
  int top_status = -1;  // -1: no TopExited record
  std::string out;      // the job's stdout
};
ReaperRun run_reaper(const TempDir& d, const std::vector<std::string>& extra) {
  int ev[2], life[2];
  if (::pipe2(ev, O_CLOEXEC) != 0 || ::pipe2(life, O_CLOEXEC) != 0) return {};
  // The reaper's ends at fixed numbers above anything this test holds.
  int ev_w = ::fcntl(ev[1], F_DUPFD, 100), life_r = ::fcntl(life[0], F_DUPFD, 100);
  ::close(ev[1]);
  ::close(life[0]);
  std::vector<std::string> argv{
      e2e::bin("aftermath-reaper"), "--events", std::to_string(ev_w), "--lifeline",
      std::to_string(life_r),       "--stdout", d / "job.out"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (const std::string& s : {std::string("--"), std::string(kPython), program()})
    argv.push_back(s);
  e2e::Child c = e2e::spawn(argv, d / "reaper.out", d / "reaper.err");
  ::close(ev_w);
  ::close(life_r);
  ReaperRun r;
  std::string buf;
  auto end = std::chrono::steady_clock::now() + 60s;
  while (r.top_status < 0 && std::chrono::steady_clock::now() < end) {
    pollfd p{ev[0], POLLIN, 0};
    if (::poll(&p, 1, 100) != 1) continue;
    char chunk[512];
    ssize_t n = ::read(ev[0], chunk, sizeof chunk);
    if (n <= 0) break;
    buf.append(chunk, size_t(n));
    while (buf.size() >= sizeof(reaper::Record)) {
      reaper::Record rec;
      std::memcpy(&rec, buf.data(), sizeof rec);
      buf.erase(0, sizeof rec);
      r.records.push_back(rec);
      if (rec.type == reaper::Msg::TopExited) r.top_status = rec.a;
    }
  }
  ::close(life[1]);  // the end: the reaper exits, its namespace with it
  e2e::wait_for(c, 10s);
  ::close(ev[0]);
  r.out = e2e::slurp(d / "job.out");
  return r;
}

const reaper::Record* find(const ReaperRun& r, reaper::Msg type) {
  for (const auto& rec : r.records)
    if (rec.type == type) return &rec;
  return nullptr;
}

// The negative control: the same reaper told to leave /proc alone (--proc
// host) gives the job the host's /proc inside its PID namespace, and the
// program fails the way it did before the job got a procfs of its own. With
// the procfs (the default), it succeeds; ProcView says which it was.
TEST(ReaperProcView, WithTheHostsProcTheKillFails) {
  if (auto why = unavailable("proc"); !why.empty()) GTEST_SKIP() << why;
  TempDir own_dir, host_dir;
  auto own = run_reaper(own_dir, {"--contain", "pidns"});
  if (!find(own, reaper::Msg::Mode))
    GTEST_SKIP() << "no PID namespace here: " << e2e::slurp(own_dir / "reaper.err");
  auto host = run_reaper(host_dir, {"--contain", "pidns", "--proc", "host"});

  const reaper::Record* pv = find(own, reaper::Msg::ProcView);
  ASSERT_NE(pv, nullptr);
  EXPECT_EQ(pv->pid, 1) << "errno " << pv->a << ", step " << pv->b;
  ASSERT_TRUE(WIFEXITED(own.top_status)) << own.top_status;
  EXPECT_EQ(WEXITSTATUS(own.top_status), 0) << own.out;
  Report in = parse(own.out);
  EXPECT_EQ(in.self, in.getpid);
  // The reaper still reports host pids: the top's differs from its own view.
  const reaper::Record* top = find(own, reaper::Msg::TopStarted);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(std::to_string(top->a), in.getpid);
  EXPECT_NE(top->pid, top->a);
  const reaper::Record* init = find(own, reaper::Msg::InitPid);
  ASSERT_NE(init, nullptr);
  EXPECT_NE(init->pid, 1);

  pv = find(host, reaper::Msg::ProcView);
  ASSERT_NE(pv, nullptr);
  EXPECT_EQ(pv->pid, 0);
  EXPECT_EQ(pv->b, int(reaper::ProcViewStep::NotAsked));
  ASSERT_TRUE(WIFEXITED(host.top_status)) << host.top_status;
  EXPECT_EQ(WEXITSTATUS(host.top_status), 3) << host.out;
  in = parse(host.out);
  EXPECT_EQ(in.outcome, "ProcessLookupError");
  EXPECT_NE(in.self, in.getpid);
}

TEST(ReaperProcView, ABadProcOptionIsRejected) {
  TempDir d;
  e2e::Child c = e2e::spawn({e2e::bin("aftermath-reaper"), "--events", "1", "--lifeline", "0",
                             "--proc", "mine", "--", "/bin/true"},
                            d / "o", d / "e");
  int status = e2e::wait_for(c, 10s);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
  EXPECT_NE(e2e::slurp(d / "e").find("--proc takes own or host, not mine"), std::string::npos)
      << e2e::slurp(d / "e");
}

}  // namespace
