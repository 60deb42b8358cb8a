#include "harness/os/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace aftermath {

namespace {

// The child's side, between fork and exec: async-signal-safe calls only, no
// allocation. On failure it writes errno to `report` and exits 127.
[[noreturn]] void exec_child(const SpawnOptions& o, char* const* argv, char* const* envp,
                             int report, pid_t parent, const int* keep, size_t nkeep) {
  auto fail = [report]() {
    int e = errno;
    (void)!::write(report, &e, sizeof e);
    ::_exit(127);
  };
  if (o.die_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail();
    if (::getppid() != parent) {  // the harness died before the signal was armed
      errno = ESRCH;
      fail();
    }
  }
  const int fds[3] = {o.stdin_fd, o.stdout_fd, o.stderr_fd};
  // Move the sources above 2 first, so dup2 onto 0..2 cannot clobber one
  // another (a caller may pass the same fd for stdout and stderr).
  int moved[3];
  for (int t = 0; t < 3; ++t) {
    moved[t] = -1;
    if (fds[t] >= 0 && (moved[t] = ::fcntl(fds[t], F_DUPFD_CLOEXEC, 3)) < 0) fail();
  }
  for (int t = 0; t < 3; ++t) {
    int src = moved[t];
    if (src < 0 && (src = ::open("/dev/null", t == 0 ? O_RDONLY : O_WRONLY)) < 0) fail();
    if (::dup2(src, t) < 0) fail();
  }
  // Everything else above 2 goes, whether or not it was opened close-on-exec
  // (a library's descriptor must not reach the job). `keep` is sorted and
  // holds `report`, which closes itself at exec.
  int from = 3;
  for (size_t i = 0; i < nkeep; ++i) {
    if (keep[i] > from) ::syscall(SYS_close_range, from, keep[i] - 1, 0);
    if (keep[i] >= from) from = keep[i] + 1;
  }
  ::syscall(SYS_close_range, from, ~0U, 0);
  for (int fd : o.keep_fds)
    if (::fcntl(fd, F_SETFD, 0) != 0) fail();
  if (o.reset_signals) {
    struct sigaction dfl{};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // KILL/STOP: EINVAL
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  }
  if (o.search_path)
    ::execvpe(argv[0], argv, envp);
  else
    ::execve(argv[0], argv, envp);
  fail();
  ::_exit(127);  // not reached: fail() exits
}

}  // namespace

Expected<pid_t> spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return Error{"no command"};
  std::vector<char*> args;
  for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  if (o.env) {
    for (const auto& e : *o.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char* const* e = o.env ? envp.data() : environ;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return sys_error("cannot run " + o.argv[0] + ": pipe");
  std::vector<int> keep = o.keep_fds;
  keep.push_back(report[1]);
  std::sort(keep.begin(), keep.end());
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return sys_error("cannot run " + o.argv[0] + ": fork", err);
  }
  if (pid == 0) {
    ::close(report[0]);
    exec_child(o, args.data(), e, report[1], parent, keep.data(), keep.size());
  }
  ::close(report[1]);
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n <= 0) return pid;  // EOF: the exec succeeded and closed the pipe
  int status;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return sys_error("cannot run " + o.argv[0], child_errno);
}

std::string CommandOutcome::describe() const {
  switch (end) {
    case End::NotStarted:
      return "not started: " + output;
    case End::TimedOut:
      return "timed out";
    case End::Exited:
      return "exited " + std::to_string(code);
    case End::Signaled: {
      const char* name = ::sigabbrev_np(code);
      return std::string("killed by ") +
             (name ? std::string("SIG") + name : "signal " + std::to_string(code));
    }
  }
  return "not started";
}

Expected<StartedCommand> start_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return Error{"no command"};
  char tmpl[] = "/tmp/aftermath-cmd-XXXXXX";
  int out = ::mkstemp(tmpl);
  if (out < 0) return sys_error("cannot create a temporary file");
  ::unlink(tmpl);
  SpawnOptions so;
  so.argv = argv;
  so.search_path = true;
  so.stdout_fd = out;
  so.stderr_fd = out;
  auto started = spawn(so);
  if (!started) {
    ::close(out);
    return started.error();
  }
  StartedCommand c;
  c.pid = *started;
  c.out = out;
  c.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, c.pid, 0));
  return c;
}

CommandOutcome finish_command(StartedCommand& c, bool kill, size_t max_output) {
  CommandOutcome r;
  if (kill || c.pidfd < 0) {
    // No pidfd: the child is ours and not yet reaped, so its pid still names it.
    if (c.pidfd >= 0)
      ::syscall(SYS_pidfd_send_signal, c.pidfd, SIGKILL, nullptr, 0);
    else
      ::kill(c.pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (kill || c.pidfd < 0) {
    r.end = CommandOutcome::End::TimedOut;
  } else if (WIFSIGNALED(status)) {
    r.end = CommandOutcome::End::Signaled;
    r.code = WTERMSIG(status);
  } else {
    r.end = CommandOutcome::End::Exited;
    r.code = WEXITSTATUS(status);
  }
  if (c.pidfd >= 0) ::close(c.pidfd);
  char buf[4096];
  ::lseek(c.out, 0, SEEK_SET);
  ssize_t n;
  while (r.output.size() < max_output && (n = ::read(c.out, buf, sizeof buf)) > 0)
    r.output.append(buf, static_cast<size_t>(n));
  if (r.output.size() > max_output) r.output.resize(max_output);
  ::close(c.out);
  c = StartedCommand{};
  return r;
}

CommandOutcome run_command(const std::vector<std::string>& argv, Nanos deadline, size_t max_output,
                           const std::function<void()>& while_waiting) {
  auto started = start_command(argv);
  if (!started) {
    CommandOutcome r;
    r.output = started.error().what;
    return r;
  }
  StartedCommand& c = *started;
  bool timed_out = c.pidfd < 0;  // no way to wait with a deadline: do not wait at all
  Nanos end = monotonic_now() + deadline;
  while (!timed_out) {
    Nanos left = end - monotonic_now();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pl{c.pidfd, POLLIN, 0};
    Nanos slice = while_waiting ? std::min<Nanos>(left, 50 * kMilli) : left;
    int n = ::poll(&pl, 1, static_cast<int>((slice + kMilli - 1) / kMilli));
    if (n == 1) break;
    if (n < 0 && errno != EINTR) break;
    if (while_waiting) while_waiting();
  }
  return finish_command(c, timed_out, max_output);
}

}  // namespace aftermath
