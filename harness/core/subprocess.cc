#include "harness/core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

extern char** environ;

namespace aftermath {

pid_t spawn_process(const std::vector<std::string>& argv, const std::vector<std::string>* env,
                    int in_fd, int out_fd, int err_fd, std::string* error, bool search_path) {
  if (argv.empty()) {
    if (error) *error = "no command";
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const int fds[3] = {in_fd, out_fd, err_fd};
  for (int target = 0; target < 3; ++target) {
    if (fds[target] >= 0) {
      posix_spawn_file_actions_adddup2(&fa, fds[target], target);
    } else {
      posix_spawn_file_actions_addopen(&fa, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY,
                                       0);
    }
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  if (env) {
    for (const auto& e : *env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  pid_t pid = -1;
  char** e = env ? envp.data() : environ;
  int rc = search_path ? ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), e)
                       : ::posix_spawn(&pid, args[0], &fa, &attr, args.data(), e);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    if (error) *error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

bool CommandOutcome::exited_zero() const {
  return started && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

CommandOutcome run_command(const std::vector<std::string>& argv, Nanos deadline,
                           size_t max_output, const std::function<void()>& while_waiting) {
  CommandOutcome r;
  if (argv.empty()) {
    r.output = "no command";
    return r;
  }
  char tmpl[] = "/tmp/aftermath-cmd-XXXXXX";
  int out = ::mkstemp(tmpl);
  if (out < 0) {
    r.output = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return r;
  }
  ::unlink(tmpl);
  pid_t child = spawn_process(argv, nullptr, -1, out, out, &r.output, /*search_path=*/true);
  if (child < 0) {
    ::close(out);
    return r;
  }
  r.started = true;
  int pfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
  if (pfd < 0) {
    // No way to wait with a deadline: do not wait at all. The child is ours
    // and not yet reaped, so its pid still names it.
    ::kill(child, SIGKILL);
    r.timed_out = true;
  } else {
    Nanos end = monotonic_now() + deadline;
    for (;;) {
      Nanos left = end - monotonic_now();
      if (left <= 0) {
        r.timed_out = true;
        break;
      }
      pollfd pl{pfd, POLLIN, 0};
      Nanos slice = while_waiting ? std::min<Nanos>(left, 50 * kMilli) : left;
      int n = ::poll(&pl, 1, static_cast<int>((slice + kMilli - 1) / kMilli));
      if (n == 1) break;
      if (n < 0 && errno != EINTR) break;
      if (while_waiting) while_waiting();
    }
    if (r.timed_out) ::syscall(SYS_pidfd_send_signal, pfd, SIGKILL, nullptr, 0);
  }
  while (::waitpid(child, &r.status, 0) < 0 && errno == EINTR) {
  }
  if (pfd >= 0) ::close(pfd);
  char buf[4096];
  ::lseek(out, 0, SEEK_SET);
  ssize_t n;
  while (r.output.size() < max_output && (n = ::read(out, buf, sizeof buf)) > 0)
    r.output.append(buf, static_cast<size_t>(n));
  if (r.output.size() > max_output) r.output.resize(max_output);
  ::close(out);
  return r;
}

}  // namespace aftermath
