#include "harness/supervise/reaper_link.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "harness/supervise/bp2.h"

namespace aftermath {

namespace asio = boost::asio;
namespace bp2 = boost::process::v2;

namespace {

// Hands two pipe ends to the reaper across exec (their fd numbers go on its
// command line), arms its parent-death signal, and checks the race in which
// we died before it was armed. Runs between fork and exec: no allocation, no
// locks, async-signal-safe calls only.
struct ReaperSetup {
  int keep_a;
  int keep_b;
  pid_t parent;
  const char* const* envp;  // the job's environment, NULL-terminated
  template <typename Launcher>
  bp2::error_code on_setup(Launcher& l, const std::filesystem::path&, const char* const*) {
    l.env = envp;
    l.fd_whitelist.push_back(keep_a);
    l.fd_whitelist.push_back(keep_b);
    return {};
  }
  template <typename Launcher>
  bp2::error_code on_exec_setup(Launcher&, const std::filesystem::path&, const char* const*&) {
    ::fcntl(keep_a, F_SETFD, 0);
    ::fcntl(keep_b, F_SETFD, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
      return bp2::error_code(ESRCH, bp2::system_category());
    return {};
  }
};

}  // namespace

std::optional<reaper::Record> RecordStream::next() {
  if (pending_.size() < sizeof(reaper::Record)) return std::nullopt;
  reaper::Record r;
  std::memcpy(&r, pending_.data(), sizeof r);
  pending_.erase(0, sizeof r);
  return r;
}

std::vector<std::string> reaper_args(const ReaperLaunch& l, int events_fd, int lifeline_fd) {
  std::vector<std::string> args = {"--events",  std::to_string(events_fd),
                                   "--lifeline", std::to_string(lifeline_fd),
                                   "--stdout",   l.stdout_path,
                                   "--stderr",   l.stderr_path,
                                   "--contain",  l.containment,
                                   "--shm",      l.shm};
  char mask[32];
  std::snprintf(mask, sizeof mask, "%llx", static_cast<unsigned long long>(l.ignored_signals));
  args.push_back("--ignored-signals");
  args.push_back(mask);
  if (!l.cwd.empty()) {
    args.push_back("--cwd");
    args.push_back(l.cwd);
  }
  args.push_back("--");
  for (const auto& a : l.argv) args.push_back(a);
  return args;
}

std::string containment_name(reaper::Containment c) {
  return c == reaper::Containment::PidNamespace       ? "pid-namespace"
         : c == reaper::Containment::UserPidNamespace ? "user+pid-namespace"
                                                      : "subreaper";
}

std::string subreaper_note(int errnum) {
  std::string why = errnum ? std::string("no PID namespace (") + std::strerror(errnum) + ")"
                           : std::string("subreaper requested");
  return why + ": the job is held by a subreaper, which kills it if the harness dies; a job "
               "process can outlive the run only if the reaper itself is SIGKILLed";
}

std::string proc_view_note(const reaper::Record& r) {
  const char* name = r.a ? ::strerrorname_np(r.a) : nullptr;
  std::string err = name ? name : r.a ? std::strerror(r.a) : "";
  auto step = static_cast<reaper::ProcViewStep>(r.b);
  std::string why = step == reaper::ProcViewStep::MountNamespace
                        ? "no mount namespace of its own: " + err
                    : step == reaper::ProcViewStep::ProcMount
                        ? "mount of a procfs for its PID namespace refused: " + err
                        : std::string("the reaper was told to leave /proc alone");
  return "the job sees the host's /proc (" + why + ")";
}

struct ReaperLink::Proc {
  bp2::process p;
};

ReaperLink::ReaperLink(asio::io_context& ctx) : ctx_(ctx) {}
ReaperLink::~ReaperLink() = default;

Status ReaperLink::start(const ReaperLaunch& launch, std::function<void(const reaper::Record&)> on_record) {
  on_record_ = std::move(on_record);
  int life[2], ev[2];
  if (::pipe2(life, O_CLOEXEC) != 0) return sys_error("pipe");
  UniqueFd life_r(life[0]);
  lifeline_ = UniqueFd(life[1]);
  if (::pipe2(ev, O_CLOEXEC) != 0) return sys_error("pipe");
  UniqueFd ev_w(ev[1]);
  events_ = std::make_unique<asio::posix::stream_descriptor>(ctx_, ev[0]);

  if (::access(launch.reaper_path.c_str(), X_OK) != 0)
    return Error{"reaper not found or not executable: " + launch.reaper_path, errno};

  std::vector<std::string> env_list;
  for (const auto& [k, v] : launch.env) env_list.push_back(k + "=" + v);
  std::vector<const char*> envp;
  for (const auto& e : env_list) envp.push_back(e.c_str());
  envp.push_back(nullptr);

  ReaperSetup setup{ev_w.get(), life_r.get(), ::getpid(), envp.data()};
  bp2::error_code ec;
  auto proc = bp2::default_process_launcher()(ctx_, ec, launch.reaper_path,
                                              reaper_args(launch, ev_w.get(), life_r.get()),
                                              bp2::process_stdio{nullptr, {}, {}}, setup);
  if (ec) return Error{"cannot start " + launch.reaper_path + ": " + ec.message(), ec.value()};
  proc_ = std::make_unique<Proc>(Proc{std::move(proc)});
  pid_ = proc_->p.id();
  // Our copies of the child's ends must go, or EOF would never come.
  (void)life_r.close();
  (void)ev_w.close();
  read_more();
  return {};
}

void ReaperLink::read_more() {
  events_->async_read_some(asio::buffer(buf_), [this](boost::system::error_code ec, size_t n) {
    if (ec) {  // EOF: the reaper is gone, and every record it wrote was read
      eof_ = true;
      return;
    }
    stream_.append(buf_.data(), n);
    while (auto r = stream_.next()) on_record_(*r);
    read_more();
  });
}

void ReaperLink::async_wait(std::function<void()> done) {
  proc_->p.async_wait([done = std::move(done)](boost::system::error_code, int) { done(); });
}

void ReaperLink::terminate() {
  boost::system::error_code ec;
  proc_->p.terminate(ec);
}

}  // namespace aftermath
