// The process table, read from a procfs tree. Parsing is apart from I/O: the
// parse_* functions take file contents; ProcReader takes a root directory so
// tests can point it at a fake /proc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "harness/os/unique_fd.h"

namespace aftermath {

struct ProcStat {
  int pid = 0;
  std::string comm;
  char state = '?';
  int ppid = 0;
  int pgrp = 0;
  int session = 0;
  std::uint64_t utime = 0;  // clock ticks
  std::uint64_t stime = 0;
  int num_threads = 0;
  std::uint64_t starttime = 0;  // clock ticks since boot: with pid, identifies a process
  std::int64_t rss_pages = 0;
};

// A thread-group leader that has exited while other threads of its group
// still run (a CUDA process's driver threads tearing its context down, say):
// stat shows 'Z', but its parent cannot reap it before the last thread is
// gone. It is still exiting, not a zombie.
inline bool leader_exiting(const ProcStat& st) { return st.state == 'Z' && st.num_threads > 1; }

// Parses /proc/PID/stat. comm may hold spaces and parentheses: it is
// everything between the first '(' and the last ')'. nullopt if malformed.
std::optional<ProcStat> parse_proc_stat(std::string_view contents);

// The NSpid line of /proc/PID/status: the pid in each namespace, outermost
// first. Empty if absent (kernels before 4.1).
std::vector<int> parse_status_nspid(std::string_view contents);

// A signal mask line of /proc/PID/status ("SigCgt": caught, "SigIgn":
// ignored, ...): bit sig-1. nullopt if absent or malformed.
std::optional<std::uint64_t> parse_status_sigmask(std::string_view contents,
                                                  std::string_view field);
// The SigCgt line: the mask of caught signals.
std::optional<std::uint64_t> parse_status_sigcgt(std::string_view contents);

// /proc/PID/io: rchar + wchar, the bytes passed through read/write-like
// calls. nullopt if either line is missing or malformed.
std::optional<std::uint64_t> parse_io_bytes(std::string_view contents);

// /proc/PID/schedstat: the nanoseconds the task ran, those it was runnable
// but waited on a runqueue for a CPU, and the times it was given one. The
// kernel adds a wait when it ends (part of it when the waiting task moves to
// another CPU): the rest of the one going on is not in it yet. All zeros
// where the kernel keeps the file but counts nothing (schedstats off, before
// Linux 5.14).
struct SchedStat {
  std::uint64_t ran_ns = 0;
  std::uint64_t waited_ns = 0;
  std::uint64_t slices = 0;
};
// nullopt if malformed.
std::optional<SchedStat> parse_schedstat(std::string_view contents);

// The value of `name` in /proc/PID/environ contents (NUL-separated
// NAME=VALUE entries). nullopt if absent.
std::optional<std::string> parse_environ_value(std::string_view contents, std::string_view name);

// /proc/PID/cmdline: NUL-separated arguments joined by spaces; a trailing NUL
// does not add an argument. Empty for kernel threads and zombies.
std::string parse_cmdline(std::string_view contents);

// Reads procfs under a root ("/proc" in production).
class ProcReader {
 public:
  explicit ProcReader(std::string root = "/proc") : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  // Every process's stat; processes that vanish mid-scan are skipped.
  std::map<int, ProcStat> scan() const;
  std::optional<ProcStat> stat(int pid) const;
  std::string cmdline(int pid) const;
  std::vector<int> nspid(int pid) const;
  std::optional<std::uint64_t> caught_signals(int pid) const;   // SigCgt
  std::optional<std::uint64_t> ignored_signals(int pid) const;  // SigIgn
  // Bytes the process read and wrote through read/write-like calls (files,
  // pipes, sockets; /proc/PID/io rchar + wchar). nullopt where unreadable
  // (another user's process without privilege, or gone).
  std::optional<std::uint64_t> io_bytes(int pid) const;
  // The process's main thread's time on and waiting for a CPU
  // (/proc/PID/schedstat); nullopt where the kernel has no such file
  // (CONFIG_SCHED_INFO off) or the process is gone.
  std::optional<SchedStat> schedstat(int pid) const;
  // One variable of the process's initial environment (what it was exec'd
  // with); nullopt if absent or unreadable.
  std::optional<std::string> environ_value(int pid, std::string_view name) const;
  // The children of `pid`, from /proc/PID/task/*/children (every thread's:
  // a child belongs to the thread that forked it). nullopt if the kernel has
  // no children files (CONFIG_PROC_CHILDREN) or the process is gone.
  std::optional<std::vector<int>> children(int pid) const;
  // Every descendant of `root` with its stat and depth (children: 1), read by
  // walking children files: the cost is the subtree's, not the machine's.
  // Falls back to a full scan where children files are missing. A process
  // re-parented during the walk can be missed by one walk; callers confirm
  // absence with stat() before calling anything gone.
  std::map<int, std::pair<ProcStat, int>> subtree(int root) const;
  // Every pid in the table (thread-group leaders), unsorted; no file is read.
  std::vector<int> pids() const;
  // The processes below `root` that are not in `known` (pid -> depth below
  // root; root itself may be left out), each stat'ed, with its depth. Cheaper
  // than subtree(): only pids not yet known are stat'ed. `candidates` (pids
  // announced by process events), when given, are the only ones looked at.
  // Else the children files of root and the known pids are read; without
  // children files the table is listed and the pids neither known nor in
  // *foreign are stat'ed: those found outside the subtree are added to
  // *foreign (pids no longer listed are dropped from it, so a reused pid is
  // looked at again). A process whose parent is neither known nor found is
  // left out.
  std::map<int, std::pair<ProcStat, int>> newcomers(
      int root, const std::map<int, int>& known, std::set<int>* foreign,
      const std::vector<int>* candidates = nullptr) const;
  // The most recently created pid on the machine (last field of
  // /proc/loadavg): unchanged means no fork anywhere since the last read.
  std::optional<int> last_pid() const;

 private:
  std::string root_;
};

// The stat of known processes, re-read through descriptors kept open: one
// pread per process and sample instead of a path walk, an open and a close
// (aftermath-compare: 5.4 us against 10.2 us a process at 1000 processes). A kept
// descriptor names the process it was opened for: once that process is
// reaped, reads fail (ESRCH) even if its pid is reused, so a reused pid is
// never read as the process it replaced. At most `max_open` descriptors are
// kept (the rest are read by path), so a job of many processes cannot use up
// the harness's descriptors.
class StatFiles {
 public:
  explicit StatFiles(const std::string& root = "/proc", std::size_t max_open = default_max_open());
  // pid's stat; nullopt when it is gone (or was never there). The first read
  // opens its descriptor.
  std::optional<ProcStat> read(int pid);
  // Forget pid's descriptor (the process is gone).
  void forget(int pid) { fds_.erase(pid); }
  std::size_t open_count() const { return fds_.size(); }
  // A quarter of the soft RLIMIT_NOFILE: what is left serves pidfds, logs
  // and the rest.
  static std::size_t default_max_open();

 private:
  std::string root_;
  UniqueFd root_fd_;
  std::size_t max_open_;
  std::unordered_map<int, UniqueFd> fds_;
};

// Reads a whole small file (procfs files report size 0). nullopt on error.
std::optional<std::string> read_small_file(const std::string& path);

// What a symbolic link (/proc/PID/exe, /proc/PID/fd/N) points at, as the
// kernel writes it (" (deleted)" included); nullopt when it cannot be read.
std::optional<std::string> read_link(const std::string& path);

// The pids of every descendant of `root_pid` in `table` (not root_pid itself),
// with their depth below root_pid (children: 1).
std::map<int, int> descendants(const std::map<int, ProcStat>& table, int root_pid);

}  // namespace aftermath
