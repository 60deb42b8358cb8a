// Test helpers for the GPU-side and hygiene tests: a scratch folder, a fake
// procfs tree (stat, status with NSpid and Uid, fd links, maps), and real
// planted processes: children started by the test that hold a planted file,
// map a planted /dev/shm entry, are orphaned to the test (a child subreaper)
// or leave a zombie, and that the test always takes down and reaps itself.
//
// Children run only async-signal-safe calls between fork and _exit (the test
// process may have threads), bound their own life with alarm(), and die when
// the test closes (or loses) their lifeline pipe.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace aftermath::testing {

namespace fs = std::filesystem;

// A fake procfs tree under a TempDir.
class FakeProc {
 public:
  explicit FakeProc(const TempDir& dir) : root_(dir.path() + "/proc") {
    fs::create_directories(root_);
  }
  const std::string& root() const { return root_; }

  // A process: stat (52 fields), status (Uid, NSpid), empty fd folder.
  void add(int pid, int ppid, const std::string& comm, char state = 'S', unsigned uid = 1000,
           std::vector<int> nspid = {}, unsigned long long start = 1000) {
    std::string dir = root_ + "/" + std::to_string(pid);
    fs::create_directories(dir + "/fd");
    std::ofstream(dir + "/stat")
        << pid << " (" << comm << ") " << state << " " << ppid
        << " 6405 5286 0 -1 4194304 98 0 0 0 11 7 0 0 20 0 1 0 " << start
        << " 3133440 389 18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 4 5 6 7 8 9 "
           "10 0\n";
    if (nspid.empty()) nspid = {pid};
    std::string ns;
    for (int n : nspid) ns += (ns.empty() ? "" : "\t") + std::to_string(n);
    std::ofstream(dir + "/status")
        << "Name:\t" << comm << "\nState:\t" << state << " (sleeping)\nTgid:\t" << pid << "\nPid:\t"
        << pid << "\nPPid:\t" << ppid << "\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t"
        << uid << "\nNSpid:\t" << ns << "\n";
    std::ofstream(dir + "/cmdline", std::ios::binary) << comm << '\0' << "--fake" << '\0';
  }
  // An open file: /proc/PID/fd/FD -> target.
  void fd(int pid, int fd, const std::string& target) {
    fs::create_symlink(target, root_ + "/" + std::to_string(pid) + "/fd/" + std::to_string(fd));
  }
  // /proc/PID/maps lines mapping `paths`.
  void maps(int pid, const std::vector<std::string>& paths) {
    std::ofstream f(root_ + "/" + std::to_string(pid) + "/maps");
    unsigned long a = 0x7f0000000000;
    for (const auto& p : paths) {
      f << std::hex << a << "-" << a + 0x100000 << std::dec
        << " rw-s 00000000 00:1a 12345                      " << p << "\n";
      a += 0x200000;
    }
  }

 private:
  std::string root_;
};

// Waits up to `deadline` for the pidfd to become readable (the process exited).
inline bool wait_pidfd(int pidfd, Nanos deadline) {
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(deadline / kMilli)) == 1;
}

// Reaps `pid` (a child of this process) within `deadline`; true when reaped.
inline bool reap_child(pid_t pid, Nanos deadline) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return false;
  bool exited = wait_pidfd(fd, deadline);
  ::close(fd);
  int st;
  return exited && ::waitpid(pid, &st, WNOHANG) == pid;
}

// Makes this process a child subreaper for the test's life: orphans of its
// descendants come back to it, so the test can find and reap them.
class SubreaperScope {
 public:
  SubreaperScope() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~SubreaperScope() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

// What a planted holder does. Everything is prepared before fork.
struct HolderSpec {
  std::string open_path = "";  // a file to hold open ("": none)
  std::string map_path = "";   // a file to map shared ("": none)
  bool orphan = true;          // double fork: re-parented to the (subreaper) test
  bool zombie_child = false;   // leave an unreaped exited child
  bool ignore_term = false;    // ignore SIGTERM (reap must escalate to SIGKILL)
  unsigned lifetime_s = 30;    // bound on its own life
};

struct Planted {
  pid_t holder = -1;  // the process holding the files
  pid_t zombie = -1;  // its unreaped child, if asked for
  pid_t middle = -1;  // the live parent when !orphan
  int lifeline = -1;  // write end: closing it ends the holder (and middle)
};

// Starts a holder per `spec`. The report pipe carries {holder, zombie} once
// everything is in place; nothing is returned before that (or a 10 s deadline).
inline Planted plant_holder(const HolderSpec& spec) {
  Planted out;
  int report[2], life[2];
  if (::pipe2(report, O_CLOEXEC) != 0 || ::pipe2(life, O_CLOEXEC) != 0) return out;
  const char* open_path = spec.open_path.empty() ? nullptr : spec.open_path.c_str();
  const char* map_path = spec.map_path.empty() ? nullptr : spec.map_path.c_str();
  pid_t first = ::fork();
  if (first == 0) {
    // Child (the middle): async-signal-safe calls only from here on.
    ::close(report[0]);
    ::close(life[1]);
    ::alarm(spec.lifetime_s);
    pid_t holder = ::fork();
    if (holder == 0) {
      ::alarm(spec.lifetime_s);
      if (spec.ignore_term) {
        struct sigaction sa{};
        sa.sa_handler = SIG_IGN;
        ::sigaction(SIGTERM, &sa, nullptr);
      }
      int fd = open_path ? ::open(open_path, O_RDONLY) : -1;  // not CLOEXEC: it is held
      if (map_path) {
        int mfd = ::open(map_path, O_RDWR);
        if (mfd >= 0) {
          ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
          ::close(mfd);  // the mapping alone keeps it in use
        }
      }
      pid_t ids[2] = {::getpid(), -1};
      if (spec.zombie_child) {
        pid_t z = ::fork();
        if (z == 0) ::_exit(0);
        siginfo_t si;
        // Wait until it has exited, without reaping it: it stays a zombie.
        ::waitid(P_PID, static_cast<id_t>(z), &si, WEXITED | WNOWAIT);
        ids[1] = z;
      }
      (void)fd;
      if (::write(report[1], ids, sizeof ids) != sizeof ids) ::_exit(3);
      ::close(report[1]);
      char c;
      while (::read(life[0], &c, 1) < 0 && errno == EINTR) {
      }
      ::_exit(0);
    }
    if (spec.orphan) ::_exit(holder > 0 ? 0 : 1);
    // Stay as the holder's live parent until the lifeline closes.
    ::close(report[1]);
    char c;
    while (::read(life[0], &c, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  ::close(report[1]);
  ::close(life[0]);
  out.lifeline = life[1];
  if (first < 0) {
    ::close(report[0]);
    return out;
  }
  pid_t ids[2] = {-1, -1};
  pollfd p{report[0], POLLIN, 0};
  if (::poll(&p, 1, 10000) == 1 && ::read(report[0], ids, sizeof ids) == sizeof ids) {
    out.holder = ids[0];
    out.zombie = ids[1];
  }
  ::close(report[0]);
  if (spec.orphan) {
    reap_child(first, 10 * kSecond);  // the middle exits at once: the holder is orphaned
  } else {
    out.middle = first;
  }
  return out;
}

// Takes down whatever of `p` is left and reaps what is ours: closing the
// lifeline ends the holder and the middle; SIGKILL by pidfd for a holder that
// ignores it. Only processes this test started are touched.
inline void take_down(Planted& p) {
  if (p.lifeline >= 0) ::close(p.lifeline), p.lifeline = -1;
  for (pid_t pid : {p.holder, p.middle}) {
    if (pid <= 0) continue;
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd >= 0) {
      if (!wait_pidfd(fd, 2 * kSecond)) ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
      wait_pidfd(fd, 5 * kSecond);
      ::close(fd);
    }
  }
  // The holder and its zombie child are ours (subreaper) or the middle's.
  for (pid_t pid : {p.middle, p.holder, p.zombie}) {
    int st;
    if (pid > 0) {
      for (int i = 0; i < 200 && ::waitpid(pid, &st, WNOHANG) == 0; ++i) {
        pollfd none{-1, 0, 0};
        ::poll(&none, 0, 10);  // bounded: 2 s in all, for the re-parenting to land
      }
    }
  }
  p.holder = p.middle = p.zombie = -1;
}

}  // namespace aftermath::testing
