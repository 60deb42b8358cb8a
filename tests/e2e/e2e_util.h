// Helpers for end-to-end tests: run the real CLI as a child with a deadline,
// read its reports, and make sure nothing a test started outlives it.
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

extern char** environ;

namespace e2e {

inline std::string bin(const std::string& name) {
  return std::string(AFTERMATH_BIN_DIR) + "/" + name;
}
inline std::string src(const std::string& rel) {
  return std::string(AFTERMATH_SOURCE_DIR) + "/" + rel;
}

using aftermath::testing::alive;
using aftermath::testing::slurp;

// The names in `dir`, sorted, one a line ("" for an empty folder): what a
// test that expects it empty shows when it is not.
inline std::string listing(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += n + "\n";
  return out;
}

// PyTorch 2.x's compile cache folder, torchinductor_<user>: importing
// torch._dynamo makes it (its cache path is set up at import), and torch's
// log formatter imports torch._dynamo for any record that carries an
// exception. torchrun's agent logs one when it is refused by its store at
// start or loses the store in its exit barrier, which depends on timing.
// PyTorch keeps the folder by design; the harness lists it among the other
// new entries, reported and not judged.
inline bool is_compile_cache(const std::string& name) {
  return name.rfind("torchinductor_", 0) == 0;
}

// The names in `dir` that a test expecting it empty counts as left behind:
// all but PyTorch's compile cache, sorted, one a line.
inline std::string residue_listing(const std::string& dir) {
  std::string out;
  std::istringstream names(listing(dir));
  for (std::string name; std::getline(names, name);)
    if (!is_compile_cache(name)) out += name + "\n";
  return out;
}

// A temporary folder, removed with everything in it.
class TempDir : public aftermath::testing::TempDir {
 public:
  TempDir() : aftermath::testing::TempDir("aftermath-e2e") {}
};

struct Child {
  pid_t pid = -1;
  int pidfd = -1;
};

// Starts argv with stdout/stderr to files, in this process's environment with
// `env` ("NAME=value") on top.
inline Child spawn(const std::vector<std::string>& argv, const std::string& out,
                   const std::string& err, const std::vector<std::string>& env = {}) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_list;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    bool replaced = false;
    for (const auto& x : env)
      replaced |= kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    if (!replaced) env_list.push_back(kv);
  }
  env_list.insert(env_list.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_list) envp.push_back(e.data());
  envp.push_back(nullptr);
  Child c;
  if (posix_spawn(&c.pid, args[0], &fa, nullptr, args.data(), envp.data()) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  if (c.pid > 0) c.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, c.pid, 0));
  return c;
}

// Waits for the child with a deadline; on timeout SIGKILLs it (by pidfd) and
// returns -1. Otherwise the wait status.
inline int wait_for(Child& c, std::chrono::milliseconds deadline) {
  pollfd p{c.pidfd, POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(deadline.count()));
  int status = 0;
  if (r != 1) {
    ::syscall(SYS_pidfd_send_signal, c.pidfd, SIGKILL, nullptr, 0);
    ::waitpid(c.pid, &status, 0);
    ::close(c.pidfd);
    return -1;
  }
  ::waitpid(c.pid, &status, 0);
  ::close(c.pidfd);
  return status;
}

struct Run {
  int exit_code = -1;  // -1: did not finish in time / killed
  std::string out, err;
  nlohmann::json result;  // result.json, if written
};

// A loopback TCP port for a job's store, held for as long as this lives:
// bound with SO_REUSEADDR and never listening. A bind to port 0 elsewhere
// (another test's port, a fixture's, the launcher's) is not given it
// meanwhile, as it would be once a probe closed it; the job's own store,
// which binds with SO_REUSEADDR too, can still listen on it. (Probed and
// closed, a port went to two jobs run side by side: "Address already in use".)
struct HeldPort {
  HeldPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ >= 0 && ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 &&
        ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
  }
  ~HeldPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  std::string str() const { return std::to_string(port); }
  int port = 0;

 private:
  int fd_ = -1;
};

// The most a harness run that judges a whole scenario may take in a test: a
// guard against a hang, above the scenarios' 60-90 s deadlines with their
// diagnosis and teardown, and under ctest's TIMEOUT of 300 s.
inline constexpr std::chrono::seconds kRunLimit{280};

// Runs argv, a program that writes its reports to DIR/out (`aftermath ...
// --out DIR/out`, or one started by salloc), waits at most `deadline`, and
// reads its output and result.json; `env` ("NAME=value") on top of this
// process's environment. Unless `env` sets TMPDIR, the job gets DIR/tmp as
// its TMPDIR: tests run side by side, and a job's temp-dir residue (pymp-*,
// torch-shm-dir-*) must be judged in the run that made it, not in a
// neighbour's run that started before it.
inline Run run_with_reports(const TempDir& dir, const std::vector<std::string>& argv,
                            std::chrono::milliseconds deadline, std::vector<std::string> env) {
  bool has_tmpdir = false;
  for (const auto& e : env) has_tmpdir = has_tmpdir || e.rfind("TMPDIR=", 0) == 0;
  if (!has_tmpdir) {
    std::filesystem::create_directories(dir / "tmp");
    env.push_back("TMPDIR=" + dir / "tmp");
  }
  Child c = spawn(argv, dir / "stdout.txt", dir / "stderr.txt", env);
  Run r;
  int status = wait_for(c, deadline);
  if (status >= 0 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = slurp(dir / "stdout.txt");
  r.err = slurp(dir / "stderr.txt");
  std::string rj = slurp(dir / "out/result.json");
  if (!rj.empty()) r.result = nlohmann::json::parse(rj);
  return r;
}

// Runs `aftermath ARGS...` (with --out DIR/out among them), as run_with_reports.
inline Run aftermath(const TempDir& dir, std::vector<std::string> args,
                     std::chrono::milliseconds deadline = std::chrono::seconds(60),
                     std::vector<std::string> env = {}) {
  std::vector<std::string> argv{bin("aftermath")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_with_reports(dir, argv, deadline, std::move(env));
}

// A scenario's whole output on one stream ("stdout" / "stderr"): its shared
// log, then each announced process's own file (processes[].logs), the top
// process's last; the "aftermath: pid N ... logs to ..." lines left out.
inline std::string job_output(const nlohmann::json& sc, const std::string& stream) {
  std::string text = slurp(sc[stream + "_path"].get<std::string>()), top;
  const std::string dir = sc.value("out_dir", std::string());
  for (const auto& p : sc["processes"]) {
    if (!p.contains("logs") || !p["logs"].contains(stream)) continue;
    std::string path = p["logs"][stream];
    if (path.empty() || path[0] != '/') path = dir + "/" + path;
    (p.value("top", false) ? top : text) += slurp(path);
  }
  std::string out, line;
  std::istringstream in(text + top);
  while (std::getline(in, line))
    if (line.rfind("aftermath: pid ", 0) != 0) out += line + "\n";
  return out;
}

// When a process in a report ended: its exit, else when it was seen gone
// (null while neither).
inline const nlohmann::json& end_of(const nlohmann::json& p) {
  return p["exited_ms"].is_null() ? p["gone_ms"] : p["exited_ms"];
}

// Whether process `p` was alive at `t_ms` (started before it) and ended
// after it: outlived a fault sent then, whatever the order in which its
// parent's end and its own were recorded.
inline bool outlived(const nlohmann::json& p, double t_ms) {
  const nlohmann::json& end = end_of(p);
  return p["started_ms"].is_number() && p["started_ms"].get<double>() < t_ms && end.is_number() &&
         end.get<double>() > t_ms;
}

// The processes of a scenario (of one role, or all) that had not ended
// before the harness's teardown began, "pid (role)" each: they went by
// themselves, or the teardown ended them. A state, not a time: a loaded
// machine delays both alike. "no teardown phase" when the timeline has none.
inline std::vector<std::string> ended_after_teardown(const nlohmann::json& sc,
                                                     const std::string& role = "") {
  double teardown = -1;
  for (const auto& e : sc["timeline"])
    if (e["kind"] == "phase" && e["name"] == "teardown") teardown = e["t_ms"].get<double>();
  if (teardown < 0) return {"no teardown phase"};
  std::vector<std::string> late;
  for (const auto& p : sc["processes"]) {
    if (!role.empty() && p["role"] != role) continue;
    const nlohmann::json& end = end_of(p);
    if (end.is_null() || end.get<double>() >= teardown)
      late.push_back(p["pid"].dump() + " (" + p["role"].get<std::string>() + ")");
  }
  return late;
}

// The status of one check of a scenario, the first by default ("" if absent).
inline std::string check_status(const Run& r, const std::string& name, size_t scenario = 0) {
  for (const auto& c : r.result["scenarios"][scenario]["checks"])
    if (c["name"] == name) return c["status"];
  return "";
}
inline nlohmann::json check(const Run& r, const std::string& name, size_t scenario = 0) {
  for (const auto& c : r.result["scenarios"][scenario]["checks"])
    if (c["name"] == name) return c;
  return nullptr;
}

// Where testcases report their pids (--pidfile PATH, tc::record_pid): a
// datagram socket bound at PATH for as long as this lives. Each message comes
// with its sender's pid as the kernel gives it to us, which is the host pid
// even for a process in the job's own PID namespace, and stays so after the
// sender is gone. read_pids(PATH) collects them.
class PidSink {
 public:
  explicit PidSink(std::string path) : path_(std::move(path)) {
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int on = 1;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (fd < 0 || path_.size() >= sizeof a.sun_path) return;
    std::memcpy(a.sun_path, path_.c_str(), path_.size());
    if (::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      return;
    }
    sinks()[path_] = {fd, {}};
  }
  ~PidSink() {
    auto it = sinks().find(path_);
    if (it == sinks().end()) return;
    ::close(it->second.fd);
    ::unlink(path_.c_str());
    sinks().erase(it);
  }
  PidSink(const PidSink&) = delete;
  PidSink& operator=(const PidSink&) = delete;

  // The pids received so far at `path` (nullptr if no sink is bound there).
  static const std::vector<int>* received(const std::string& path) {
    auto it = sinks().find(path);
    if (it == sinks().end()) return nullptr;
    for (;;) {
      char role[64];
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
      iovec iov{role, sizeof role};
      msghdr m{};
      m.msg_iov = &iov;
      m.msg_iovlen = 1;
      m.msg_control = control;
      m.msg_controllen = sizeof control;
      if (::recvmsg(it->second.fd, &m, 0) < 0) break;
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS) continue;
        ucred cred;
        std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
        it->second.pids.push_back(cred.pid);
      }
    }
    return &it->second.pids;
  }

 private:
  struct State {
    int fd = -1;
    std::vector<int> pids;
  };
  static std::map<std::string, State>& sinks() {
    static std::map<std::string, State> m;
    return m;
  }
  std::string path_;
};

// Pids a testcase reported with --pidfile PATH: through the PidSink bound at
// PATH (host pids), else from the file's "role pid" lines (pids as the
// processes saw themselves: inside the job's PID namespace, not the test's).
inline std::vector<int> read_pids(const std::string& path) {
  if (const auto* got = PidSink::received(path)) return *got;
  std::vector<int> out;
  std::ifstream f(path);
  std::string role;
  int pid;
  while (f >> role >> pid) out.push_back(pid);
  return out;
}

// Waits (bounded polling) until none of `pids` is alive; true if so.
inline bool all_gone_within(const std::vector<int>& pids, std::chrono::milliseconds bound) {
  auto end = std::chrono::steady_clock::now() + bound;
  for (;;) {
    bool any = false;
    for (int p : pids) any = any || alive(p);
    if (!any) return true;
    if (std::chrono::steady_clock::now() > end) return false;
    ::poll(nullptr, 0, 10);
  }
}

// Polls (bounded) until `path` holds at least `lines` lines.
inline bool wait_lines(const std::string& path, size_t lines, std::chrono::milliseconds bound) {
  auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    if (read_pids(path).size() >= lines) return true;
    ::poll(nullptr, 0, 10);
  }
  return false;
}

// Reaps every child of this process (orphans re-parented to it as a
// subreaper) until none is left; false if some remain after `bound`.
inline bool reap_orphans(std::chrono::milliseconds bound) {
  auto end = std::chrono::steady_clock::now() + bound;
  for (;;) {
    int status;
    pid_t p = ::waitpid(-1, &status, WNOHANG);
    if (p < 0 && errno == ECHILD) return true;
    if (p > 0) continue;
    if (std::chrono::steady_clock::now() > end) return false;
    ::poll(nullptr, 0, 10);
  }
}

// Last resort for a failed test: SIGKILL leftovers by pidfd, so a failing
// test still leaves nothing behind.
inline void kill_leftovers(const std::vector<int>& pids) {
  for (int p : pids) {
    if (!alive(p)) continue;
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, p, 0));
    // Only our own testcases: a pid reused by anything else is left alone.
    if (slurp("/proc/" + std::to_string(p) + "/cmdline").find("/tc_") == std::string::npos) {
      if (fd >= 0) ::close(fd);
      continue;
    }
    if (fd >= 0) {
      ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
      ::close(fd);
    }
  }
}

// The interpreter Python jobs run on by default: the project's venv with
// its pinned PyTorch 2.x (scripts/venv.sh), as the CLI's default.
inline std::string python() {
#ifdef AFTERMATH_DEFAULT_PYTHON
  return AFTERMATH_DEFAULT_PYTHON;
#else
  return "/usr/bin/python3";
#endif
}

// The PyTorch installations a version matrix runs on: the project's venv
// (the default) and Debian's python3-torch behind /usr/bin/python3 (1.13 on
// Debian 12, 2.6 on Debian 13). Fixed names (test-name suffixes), no probing
// at registration: a missing one skips its tests with torch_unavailable().
struct TorchPython {
  std::string name;  // "venv" | "debian"
  std::string path;
};
inline std::vector<TorchPython> torch_pythons() {
  return {{"venv", python()}, {"debian", "/usr/bin/python3"}};
}
inline std::string torch_python_name(const ::testing::TestParamInfo<TorchPython>& info) {
  return info.param.name;
}

// Why `py` cannot run PyTorch here ("" when it can): its `import torch`, once
// per interpreter and test binary, with a deadline.
inline std::string torch_unavailable(const std::string& py = python()) {
  static std::map<std::string, std::string> cache;
  if (auto it = cache.find(py); it != cache.end()) return it->second;
  std::string why = [&] {
    if (::access(py.c_str(), X_OK) != 0) return py + " is not installed";
    TempDir d;
    Child c = spawn({py, "-c", "import torch"}, d / "out", d / "err");
    if (c.pid <= 0) return "cannot start " + py;
    int status = wait_for(c, std::chrono::seconds(60));
    if (status < 0) return py + " -c 'import torch' did not finish in 60 s";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return py + " cannot import torch: " + slurp(d / "err").substr(0, 300);
    return std::string();
  }();
  return cache[py] = why;
}

// The major and minor PyTorch version a run's scenario ran on (its
// result.json "python" block), {0, 0} when none is known.
inline std::pair<int, int> torch_of(const nlohmann::json& scenario) {
  if (!scenario.contains("python") || !scenario["python"]["torch"].is_string()) return {0, 0};
  std::string v = scenario["python"]["torch"];
  int major = 0, minor = 0;
  std::sscanf(v.c_str(), "%d.%d", &major, &minor);
  return {major, minor};
}
inline bool torch_at_least(const nlohmann::json& scenario, int major, int minor) {
  return torch_of(scenario) >= std::make_pair(major, minor);
}

}  // namespace e2e
