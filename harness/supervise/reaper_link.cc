#include "harness/supervise/reaper_link.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "harness/os/pidfd.h"
#include "harness/os/spawn.h"

namespace aftermath {

namespace asio = boost::asio;

std::optional<reaper::Record> RecordStream::next() {
  if (pending_.size() < sizeof(reaper::Record)) return std::nullopt;
  reaper::Record r;
  std::memcpy(&r, pending_.data(), sizeof r);
  pending_.erase(0, sizeof r);
  return r;
}

std::vector<std::string> reaper_args(const ReaperLaunch& l, int events_fd, int lifeline_fd) {
  std::vector<std::string> args = {"--events",   std::to_string(events_fd),
                                   "--lifeline", std::to_string(lifeline_fd),
                                   "--stdout",   l.stdout_path,
                                   "--stderr",   l.stderr_path,
                                   "--contain",  l.containment,
                                   "--shm",      l.shm};
  char mask[32];
  std::snprintf(mask, sizeof mask, "%llx", static_cast<unsigned long long>(l.ignored_signals));
  args.push_back("--ignored-signals");
  args.push_back(mask);
  if (l.watch_forks_ms > 0) {
    args.push_back("--watch-forks");
    args.push_back(std::to_string(l.watch_forks_ms));
  }
  if (!l.cwd.empty()) {
    args.push_back("--cwd");
    args.push_back(l.cwd);
  }
  args.push_back("--");
  for (const auto& a : l.argv) args.push_back(a);
  return args;
}

JobContainment job_containment(reaper::Containment c) {
  return c == reaper::Containment::PidNamespace       ? JobContainment::PidNamespace
         : c == reaper::Containment::UserPidNamespace ? JobContainment::UserPidNamespace
                                                      : JobContainment::Subreaper;
}

std::string subreaper_note(int errnum) {
  std::string why = errnum ? std::string("no PID namespace (") + std::strerror(errnum) + ")"
                           : std::string("subreaper requested");
  return why +
         ": the job is held by a subreaper, which kills it if the harness dies; a job "
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

ReaperLink::ReaperLink(asio::io_context& ctx) : ctx_(ctx) {}

ReaperLink::~ReaperLink() {
  // A reaper still unreaped here is killed and reaped (SIGKILL cannot be
  // refused, so the wait is short): the harness leaves no zombie of its own.
  if (pid_ > 0 && !reaped_) {
    terminate();
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

Status ReaperLink::start(const ReaperLaunch& launch,
                         std::function<void(const reaper::Record&)> on_record) {
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
  // The reaper gets the two pipe ends at the numbers on its command line,
  // the harness's stdout and stderr (its own diagnostics), the signal
  // dispositions the harness was started with (it restores the launcher's
  // ignored set for the job itself), and dies with the harness.
  SpawnOptions so;
  so.argv = reaper_args(launch, ev_w.get(), life_r.get());
  so.argv.insert(so.argv.begin(), launch.reaper_path);
  so.env = &env_list;
  so.stdout_fd = STDOUT_FILENO;
  so.stderr_fd = STDERR_FILENO;
  so.keep_fds = {ev_w.get(), life_r.get()};
  so.reset_signals = false;
  so.die_with_parent = true;
  auto started = spawn(so);
  if (!started)
    return Error{"cannot start " + launch.reaper_path + ": " + started.error().what,
                 started.error().errnum};
  pid_ = *started;
  if (auto ec = pidfd_open(pid_, pidfd_)) {
    // Only ENOSYS (kernel < 5.3) can get here: the reaper is ours and unreaped.
    terminate();
    return Error{"pidfd_open for the reaper: " + ec.message(), ec.value()};
  }
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
  // The pidfd reads ready when the reaper exits; then it is reaped here.
  exit_watch_ = std::make_unique<asio::posix::stream_descriptor>(ctx_, ::dup(pidfd_.get()));
  exit_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                          [this, done = std::move(done)](boost::system::error_code ec) {
                            // Cancelled, not exited: never block on a live
                            // reaper here (the destructor kills and reaps it).
                            if (ec) return;
                            int status;
                            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
                            }
                            reaped_ = true;
                            done();
                          });
}

void ReaperLink::terminate() {
  if (pidfd_) {
    (void)pidfd_signal(pidfd_.get(), SIGKILL);
  } else if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);  // ours and unreaped: the pid still names it
  }
}

}  // namespace aftermath
