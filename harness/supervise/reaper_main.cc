// aftermath-reaper: the job's init. See reaper_protocol.h for the protocol.
//
//   aftermath-reaper --events FD --lifeline FD [--stdout PATH] [--stderr PATH]
//                    [--cwd DIR] [--contain auto|pidns|subreaper]
//                    [--shm auto|private|host] [--proc own|host]
//                    [--ignored-signals HEXMASK] -- ARGV...
//
// In PID-namespace mode there are two processes: this one (outside, the
// supervisor's child, which only waits) and its child, pid 1 inside, which
// starts the job and reaps. In subreaper mode this process does both.
//
// The job's view of /proc. A PID namespace alone leaves the job reading the
// host's /proc: it would find its own processes there under host pids that
// mean nothing to kill() inside the namespace (ESRCH), and /proc/self would
// disagree with getpid(). So in PID-namespace mode the job also gets a mount
// namespace of its own (private: nothing propagates back to the host) where
// pid 1 mounts a procfs on /proc. It must be pid 1, not this process: a
// procfs shows the PID namespace of the process that mounts it. We ourselves
// report host pids, read through a handle on the host's procfs opened before
// any of this (host_pid_of_self). --proc host leaves /proc alone (the job then
// sees the host's, as it would where the mount is refused).
// Written against the raw system interface on purpose: it must stay small,
// single-threaded, and free of anything that could block its reaping loop.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "harness/core/modes.h"
#include "harness/supervise/reaper_protocol.h"

using aftermath::reaper::Containment;
using aftermath::reaper::Msg;
using aftermath::reaper::Record;

namespace {

int g_events = -1;
int g_lifeline = -1;
int g_host_proc = -1;  // the host's procfs, opened before the job's own is mounted

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void send(Msg type, int pid, int a, int b = 0) {
  Record r{type, pid, a, b, now_ns()};
  // Best effort: if the supervisor is gone, the lifeline ends us anyway.
  ssize_t n;
  do n = ::write(g_events, &r, sizeof r);
  while (n < 0 && errno == EINTR);
}

[[noreturn]] void die(const char* what) {
  fprintf(stderr, "aftermath-reaper: %s: %s\n", what, strerror(errno));
  _exit(125);
}

// Our pid as the supervisor sees it: "self" in the host's procfs (which
// belongs to the supervisor's PID namespace) even from inside a new PID
// namespace, and after the job's own procfs covers /proc. Async-signal-safe
// (it runs between fork and exec): no allocation, no locale, no stdio.
int host_pid_of_self() {
  char buf[32];
  ssize_t n = g_host_proc >= 0 ? ::readlinkat(g_host_proc, "self", buf, sizeof buf) : -1;
  int pid = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) pid = pid * 10 + (buf[i] - '0');
  return pid > 0 ? pid : getpid();
}

bool write_file(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = ::write(fd, text, strlen(text));
  ::close(fd);
  return n == ssize_t(strlen(text));
}

struct Options {
  std::string out, err, cwd;
  aftermath::ContainMode contain = aftermath::ContainMode::Auto;
  aftermath::ShmMode shm = aftermath::ShmMode::Auto;
  aftermath::ProcMode proc = aftermath::ProcMode::Own;
  // The signals the job starts with ignored (bit sig-1): those its launcher
  // had ignored, not what the harness or this reaper happen to ignore.
  unsigned long long ignored = 0;
  bool ignored_given = false;
  // As pid 1 of a PID namespace: how often to look at the namespace's last
  // pid (ms; 0: never). A supervisor without the kernel's process events
  // learns of the job's forks from us, not from every fork on the machine.
  int watch_forks_ms = 0;
  std::vector<char*> argv;
};

// The newest pid of the reader's PID namespace: /proc/loadavg's last field
// (whatever procfs it is read from, the kernel answers for the reader's
// namespace). -1 if unreadable.
int namespace_last_pid(int fd) {
  char buf[128];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* sp = strrchr(buf, ' ');
  return sp ? atoi(sp + 1) : -1;
}

// Gives the job the dispositions it would have had without the harness: a
// handler is reset by exec anyway, so only "ignored" travels; every signal is
// SIG_IGN exactly when the launcher had it so. Between fork and exec:
// sigaction only.
void restore_ignored(const Options& o) {
  if (!o.ignored_given) return;
  for (int sig = 1; sig < 65; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction sa{};
    sa.sa_handler = (o.ignored >> (sig - 1)) & 1 ? SIG_IGN : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(sig, &sa, nullptr);  // EINVAL for the C library's own: left as they are
  }
}

// Subreaper mode only (as pid 1 the kernel does this for us): SIGKILLs every
// descendant, deepest first, then reaps them. Our descendants cannot be
// reaped by anyone but their parents, and orphans only by us, so a pid found
// under us names a process of the job until we reap it.
void kill_descendants() {
  for (int round = 0; round < 50; ++round) {
    std::multimap<int, int> children;  // ppid -> pid
    if (DIR* d = opendir("/proc")) {
      while (dirent* e = readdir(d)) {
        int pid = atoi(e->d_name);
        if (pid <= 0) continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        const char* rp = strrchr(buf, ')');
        int ppid = 0;
        char state = 0;
        if (!rp || sscanf(rp + 2, "%c %d", &state, &ppid) != 2) continue;
        children.emplace(ppid, pid);
      }
      closedir(d);
    }
    std::vector<std::pair<int, int>> found;  // depth, pid
    std::vector<std::pair<int, int>> stack{{getpid(), 0}};
    while (!stack.empty()) {
      auto [p, depth] = stack.back();
      stack.pop_back();
      auto [b, e] = children.equal_range(p);
      for (auto it = b; it != e; ++it) {
        found.emplace_back(depth + 1, it->second);
        stack.emplace_back(it->second, depth + 1);
      }
    }
    if (found.empty()) return;
    std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (auto& [depth, pid] : found) kill(pid, SIGKILL);
    int status;
    while (waitpid(-1, &status, WNOHANG | __WALL) > 0) {
    }
    struct timespec ts{0, 10 * 1000 * 1000};  // bounded: 50 rounds
    nanosleep(&ts, nullptr);
  }
}

// Starts the job's top process. Returns its pid (as this process sees it).
pid_t start_top(const Options& o, sigset_t old_mask) {
  pid_t pid = ::fork();
  if (pid < 0) die("fork");
  if (pid > 0) return pid;
  // Child: only async-signal-safe calls from here to exec.
  restore_ignored(o);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  int host = host_pid_of_self();
  if (!o.out.empty()) {
    int fd = ::open(o.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) dup2(fd, 1);
  }
  if (!o.err.empty()) {
    int fd = ::open(o.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) dup2(fd, 2);
  }
  if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) {
    send(Msg::ExecFailed, 0, errno);
    _exit(127);
  }
  int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
  send(Msg::TopStarted, host, getpid());
  ::close(g_lifeline);  // the job must not hold the supervisor's lifeline
  execvp(o.argv[0], o.argv.data());
  send(Msg::ExecFailed, 0, errno);
  _exit(127);
}

// The init loop: reap everything, report every reap, until the lifeline
// closes (the supervisor is done or dead) and, in subreaper mode, no child is
// left. Returns the exit code for this process.
int init_loop(const Options& o, bool pid1) {
  sigset_t mask, old;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, &old);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) die("signalfd");

  pid_t top = start_top(o, old);
  bool top_done = false;
  // Reaps and reports everything that is ready. Also run on the way out: a
  // child that exited just before the lifeline closed (the supervisor's
  // teardown SIGTERMs, then closes it) would otherwise go unreported, its
  // status lost with the namespace.
  auto reap_ready = [&] {
    for (;;) {
      int status;
      pid_t p = waitpid(-1, &status, WNOHANG | __WALL);
      if (p <= 0) break;
      if (p == top && !top_done) {
        top_done = true;
        send(Msg::TopExited, p, status);
      } else {
        send(Msg::Reaped, p, status);
      }
    }
  };
  // The job's forks, for a supervisor that has no process events: the
  // namespace's last pid, looked at every watch_forks_ms.
  int loadavg = -1, last_pid = -1;
  if (pid1 && o.watch_forks_ms > 0) {
    loadavg = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (loadavg >= 0) {
      last_pid = namespace_last_pid(loadavg);
      send(Msg::ForkWatch, last_pid, o.watch_forks_ms);
    }
  }
  for (;;) {
    reap_ready();
    pollfd fds[2] = {{sfd, POLLIN, 0}, {g_lifeline, POLLIN, 0}};
    int r = poll(fds, 2, loadavg >= 0 ? o.watch_forks_ms : -1);
    if (loadavg >= 0) {
      int now_last = namespace_last_pid(loadavg);
      if (now_last != last_pid) {
        last_pid = now_last;
        send(Msg::Forked, now_last, 0);
      }
    }
    if (r < 0 && errno != EINTR) die("poll");
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si;
      while (::read(sfd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo != SIGCHLD) {
          // The supervisor asks for the end, or died (our parent-death
          // signal). As pid 1 our exit kills the namespace; as a subreaper we
          // kill the job ourselves.
          reap_ready();
          if (!pid1) kill_descendants();
          return 0;
        }
      }
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      char c;
      if (::read(g_lifeline, &c, 1) <= 0) {
        // The supervisor is done, or dead. As pid 1 our exit makes the
        // kernel kill the rest of the namespace; as a subreaper we do it.
        reap_ready();
        if (!pid1) kill_descendants();
        return 0;
      }
    }
  }
}

// Gives the job (and us) a mount namespace of our own, in which no mount
// propagates back to the host. Returns 0 or the errno of what failed.
int own_mount_namespace() {
  if (unshare(CLONE_NEWNS) != 0) return errno;
  if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  return 0;
}

// Gives the job its own /dev/shm: a fresh tmpfs of the host's size (in the
// job's own mount namespace), so concurrent jobs never see (or get blamed for)
// each other's segments, and whatever the job leaks goes away with it.
bool private_shm() {
  struct statvfs host{};
  if (statvfs("/dev/shm", &host) != 0) return false;
  char opts[64];
  snprintf(opts, sizeof opts, "size=%llu,mode=1777",
           static_cast<unsigned long long>(host.f_blocks) * host.f_frsize);
  return mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0;
}

// Pid 1 only, in the job's own mount namespace: a procfs of this PID
// namespace on /proc. Returns 0 or mount's errno (EPERM in a user namespace
// where the host's /proc has parts masked by other mounts, as in most
// containers: the kernel will not show more than the host's view does).
int mount_own_proc() {
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return errno;
  return 0;
}

bool try_pid_namespace(bool user_ns, int* err) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  int flags = CLONE_NEWPID | (user_ns ? CLONE_NEWUSER : 0);
  if (unshare(flags) != 0) {
    *err = errno;
    return false;
  }
  if (user_ns) {
    char map[64];
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
    if (!write_file("/proc/self/uid_map", map)) {
      *err = errno;
      return false;
    }
    snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
    write_file("/proc/self/gid_map", map);
  }
  return true;
}

// Reads the command line into `o` (and the two descriptors); false, having
// said why on stderr, on anything it does not know.
bool parse_options(int argc, char** argv, Options& o) {
  using namespace aftermath;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        fprintf(stderr, "aftermath-reaper: %s needs a value\n", a.c_str());
        exit(125);
      }
      return argv[++i];
    };
    auto bad = [&](const char* takes, const char* v) {
      fprintf(stderr, "aftermath-reaper: %s takes %s, not %s\n", a.c_str(), takes, v);
      return false;
    };
    if (a == "--events")
      g_events = atoi(next());
    else if (a == "--lifeline")
      g_lifeline = atoi(next());
    else if (a == "--stdout")
      o.out = next();
    else if (a == "--stderr")
      o.err = next();
    else if (a == "--cwd")
      o.cwd = next();
    else if (a == "--contain") {
      const char* v = next();
      auto m = parse_contain_mode(v);
      if (!m) return bad("auto, pidns or subreaper", v);
      o.contain = *m;
    } else if (a == "--shm") {
      const char* v = next();
      auto m = parse_shm_mode(v);
      if (!m) return bad("auto, private or host", v);
      o.shm = *m;
    } else if (a == "--ignored-signals") {
      o.ignored = strtoull(next(), nullptr, 16);
      o.ignored_given = true;
    } else if (a == "--watch-forks") {
      const char* v = next();
      char* end = nullptr;
      long ms = strtol(v, &end, 10);
      if (!end || *end || ms < 0 || ms > 60000) return bad("milliseconds (0..60000)", v);
      o.watch_forks_ms = static_cast<int>(ms);
    } else if (a == "--proc") {
      const char* v = next();
      auto m = parse_proc_mode(v);
      if (!m) return bad("own or host", v);
      o.proc = *m;
    } else if (a == "--") {
      ++i;
      break;
    } else {
      fprintf(stderr, "aftermath-reaper: unknown option %s\n", a.c_str());
      return false;
    }
  }
  for (; i < argc; ++i) o.argv.push_back(argv[i]);
  o.argv.push_back(nullptr);
  if (g_events < 0 || g_lifeline < 0 || o.argv.size() < 2) {
    fprintf(stderr, "aftermath-reaper: usage: --events FD --lifeline FD -- ARGV...\n");
    return false;
  }
  return true;
}

// The outer process of a PID namespace: waits for pid 1 and passes its end
// on. SIGTERM from the supervisor is forwarded so that "end the job" reaches
// pid 1.
int forward_until_init_exits(pid_t init) {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  ::close(g_lifeline);
  for (;;) {
    int sig = 0;
    sigwait(&mask, &sig);
    if (sig == SIGCHLD) {
      int status;
      if (waitpid(init, &status, WNOHANG) == init)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } else {
      kill(init, SIGKILL);
    }
  }
}

// pid 1 of the new namespace: its own /proc where it can, then the job.
int run_as_namespace_init(const Options& o, int err_mounts) {
  // Die with the outer process; the lifeline covers the window before this prctl.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  using aftermath::reaper::ProcViewStep;
  if (o.proc == aftermath::ProcMode::Host) {
    send(Msg::ProcView, 0, 0, int(ProcViewStep::NotAsked));
  } else if (err_mounts != 0) {
    send(Msg::ProcView, 0, err_mounts, int(ProcViewStep::MountNamespace));
  } else {
    int err = mount_own_proc();
    send(Msg::ProcView, err == 0 ? 1 : 0, err, err == 0 ? 0 : int(ProcViewStep::ProcMount));
  }
  send(Msg::InitPid, host_pid_of_self(), 0);
  return init_loop(o, true);
}

}  // namespace

int main(int argc, char** argv) {
  using aftermath::ContainMode;
  using aftermath::ShmMode;
  Options o;
  if (!parse_options(argc, argv, o)) return 125;
  fcntl(g_events, F_SETFD, FD_CLOEXEC);
  // Before any namespace: the procfs that names pids as the supervisor sees
  // them. Close-on-exec: the job does not get it.
  g_host_proc = ::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  // The lifeline stays open across fork for the init child, but the job must
  // not inherit it; start_top closes it explicitly.

  // If the supervisor is already gone, do nothing.
  {
    pollfd p{g_lifeline, POLLIN, 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR))) return 125;
  }

  int err_pid = 0, err_user = 0;
  Containment mode = Containment::Subreaper;
  if (o.contain != ContainMode::Subreaper) {
    if (try_pid_namespace(false, &err_pid))
      mode = Containment::PidNamespace;
    else if (try_pid_namespace(true, &err_user))
      mode = Containment::UserPidNamespace;
  }
  if (mode == Containment::Subreaper && o.contain == ContainMode::PidNamespace) {
    errno = err_pid;
    die("cannot create a PID namespace");
  }
  // A PID namespace gets a mount namespace too, whatever /dev/shm it keeps:
  // its /proc is mounted there (by pid 1, below).
  int err_mounts = mode == Containment::Subreaper ? 0 : own_mount_namespace();
  bool shm_private = false;
  if (mode != Containment::Subreaper && err_mounts == 0 && o.shm != ShmMode::Host)
    shm_private = private_shm();
  if (!shm_private && o.shm == ShmMode::Private) die("cannot give the job a private /dev/shm");
  send(Msg::Mode, shm_private ? 1 : 0, int(mode),
       o.contain == ContainMode::Subreaper ? 0 : err_pid);

  if (mode == Containment::Subreaper) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) die("PR_SET_CHILD_SUBREAPER");
    // Without a namespace to take the job down with us, the supervisor's
    // death must reach us as a signal we can act on: SIGTERM, not SIGKILL.
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 125;
    send(Msg::InitPid, host_pid_of_self(), 0);
    return init_loop(o, false);
  }

  pid_t init = fork();
  if (init < 0) die("fork");
  if (init == 0) return run_as_namespace_init(o, err_mounts);
  return forward_until_init_exits(init);
}
