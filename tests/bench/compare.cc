// aftermath-compare: the harness's own cost, side by side with the tools
// engineers use today, in one table. Whole-run figures (micro ones are in
// aftermath_bench). Run from the repository root after a build:
//   build/bin/aftermath-compare [--quick] [--only overhead,holders,...]
// Every figure is measured here, now; baselines run on the same trees.
// --quick takes fewer samples and leaves out the nightly-suite timings (the
// suite three times over: minutes), unless --only names them.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "aftermath_points.h"
#include "harness/core/types.h"
#include "harness/observe/holders.h"
#include "harness/observe/proc.h"
#include "harness/observe/process_index.h"
#include "harness/observe/shm.h"
#include "harness/supervise/job_shm.h"
#include "tree.h"

extern char** environ;
using aftermath::monotonic_now;
using aftermath::Nanos;

namespace {

std::string g_bin;  // the build's bin dir
bool g_quick = false;

double ms(Nanos d) { return static_cast<double>(d) / 1e6; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

// Runs argv to completion, output discarded (or captured); wall time in ms.
double run_cmd(const std::vector<std::string>& argv, std::string* out = nullptr,
               int* status_out = nullptr) {
  char tmpl[] = "/tmp/aftermath-compare-XXXXXX";
  int fd = mkstemp(tmpl);
  unlink(tmpl);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Nanos t0 = monotonic_now();
  pid_t pid;
  if (posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    return -1;
  }
  int status;
  waitpid(pid, &status, 0);
  Nanos t1 = monotonic_now();
  posix_spawn_file_actions_destroy(&fa);
  if (out) {
    lseek(fd, 0, SEEK_SET);
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  }
  if (status_out) *status_out = status;
  close(fd);
  return ms(t1 - t0);
}

struct Row {
  std::string what, ours, baseline, ratio, target;
};
std::vector<Row> g_rows;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A psutil figure from a script that prints one number (ms); 0 if psutil
// is not there.
double psutil_ms(const std::string& script) {
  std::string out;
  int st = 0;
  if (run_cmd({"/usr/bin/python3", "-c", script}, &out, &st) >= 0 && WIFEXITED(st) &&
      WEXITSTATUS(st) == 0)
    return std::atof(out.c_str());
  return 0;
}

void snapshot_rows() {
  struct Size {
    int ranks, workers;
  };
  for (Size s : {Size{0, 0}, Size{1, 15}, Size{8, 16}, Size{37, 26}}) {
    bench::ProcessTree tree(s.ranks, s.workers);
    int n = tree.size();
    aftermath::ProcReader reader;
    const int reps = g_quick ? 20 : 100;
    // The walk: the job's subtree by children files, every process found
    // from nothing (the supervisor's start, and its safety net).
    std::vector<double> walk;
    std::vector<int> pids{tree.root()};
    for (int i = 0; i < reps; ++i) {
      Nanos t0 = monotonic_now();
      auto members = reader.subtree(tree.root());
      walk.push_back(ms(monotonic_now() - t0));
      if (i == 0)
        for (const auto& [pid, entry] : members) pids.push_back(pid);
    }
    // The sample: what each refresh reads of processes already known (their
    // stat, by descriptors kept open), as the job tracker does.
    aftermath::StatFiles files;
    for (int pid : pids) (void)files.read(pid);
    std::vector<double> sample, by_path;
    for (int i = 0; i < reps; ++i) {
      Nanos t0 = monotonic_now();
      for (int pid : pids) (void)files.read(pid);
      sample.push_back(ms(monotonic_now() - t0));
      t0 = monotonic_now();
      for (int pid : pids) (void)reader.stat(pid);
      by_path.push_back(ms(monotonic_now() - t0));
    }
    double o = median(walk), smp = median(sample), path = median(by_path);
    std::vector<double> ps;
    for (int i = 0; i < (g_quick ? 5 : 20); ++i)
      ps.push_back(run_cmd({"ps", "-eo", "pid,ppid,stat,comm"}));
    const std::string reps_s = std::to_string(g_quick ? 5 : 20);
    double p = psutil_ms(
        "import psutil, time, statistics\n"
        "root = psutil.Process(" +
        std::to_string(tree.root()) +
        ")\n"
        "ts = []\n"
        "for _ in range(" +
        reps_s +
        "):\n"
        "    t = time.perf_counter()\n"
        "    procs = [root] + root.children(recursive=True)\n"
        "    rows = [(q.pid, q.ppid(), q.status(), q.name()) for q in procs]\n"
        "    ts.append(time.perf_counter() - t)\n"
        "print(statistics.median(ts) * 1000)\n");
    // psutil's sample: the same known processes, state and parent re-read.
    double ps_sample = psutil_ms(
        "import psutil, time, statistics\n"
        "root = psutil.Process(" +
        std::to_string(tree.root()) +
        ")\n"
        "procs = [root] + root.children(recursive=True)\n"
        "ts = []\n"
        "for _ in range(" +
        reps_s +
        "):\n"
        "    t = time.perf_counter()\n"
        "    rows = [(q.status(), q.ppid(), q.cpu_times()) for q in procs]\n"
        "    ts.append(time.perf_counter() - t)\n"
        "print(statistics.median(ts) * 1000)\n");
    g_rows.push_back(
        {"walk of a " + std::to_string(n) + "-process job (every process found from nothing)",
         fmt("%.3f ms", o) + fmt(" (%.1f us/proc)", o * 1000 / n),
         (p > 0 ? "psutil " + fmt("%.2f ms", p) : std::string("psutil n/a")) + "; ps " +
             fmt("%.1f ms", median(ps)),
         p > 0 ? fmt("%.1fx vs psutil", p / o) : "-", "≥5x psutil, ≤20 us/proc"});
    g_rows.push_back(
        {"sample of a " + std::to_string(n) + "-process job (state, parent, CPU of each)",
         fmt("%.3f ms", smp) + fmt(" (%.1f us/proc", smp * 1000 / n) +
             fmt("; by path %.1f us/proc)", path * 1000 / n),
         ps_sample > 0 ? "psutil " + fmt("%.2f ms", ps_sample) : std::string("psutil n/a"),
         ps_sample > 0 ? fmt("%.1fx vs psutil", ps_sample / smp) : "-", "≤10 us/proc"});
  }
}

// Resident memory of this process, bytes.
std::int64_t rss_bytes() {
  auto text = aftermath::read_small_file("/proc/self/statm");
  long pages = 0, rss = 0;
  if (!text || std::sscanf(text->c_str(), "%ld %ld", &pages, &rss) != 2) return 0;
  return static_cast<std::int64_t>(rss) * sysconf(_SC_PAGESIZE);
}

void shm_rows() {
  for (int n : {100, 1000, 10000, 100000}) {
    char tmpl[] = "/dev/shm/aftermath-compare-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    for (int i = 0; i < n; ++i) {
      int fd =
          open((dir + "/torch_1_" + std::to_string(i) + "_0").c_str(), O_CREAT | O_WRONLY, 0600);
      if (fd >= 0) close(fd);
    }
    // The baseline: scan + diff every sample, what a polling sampler does.
    auto before = aftermath::scan_shm(dir);
    std::vector<double> t;
    for (int i = 0; i < (n >= 100000 ? 5 : 20); ++i) {
      Nanos t0 = monotonic_now();
      auto d = aftermath::diff_shm(before, aftermath::scan_shm(dir));
      t.push_back(ms(monotonic_now() - t0));
    }
    before.clear();
    // Ours: the job's /dev/shm as the supervisor watches it (inotify): an
    // idle sample, and a sample that finds one new entry (a leak), timed.
    std::int64_t rss0 = rss_bytes();
    Nanos t_base0 = monotonic_now();
    aftermath::JobShm job([] { return Nanos(0); }, [](aftermath::Observation) {});
    job.take_baseline(dir);
    job.set_place(false, 0);
    job.sample();
    double base_ms = ms(monotonic_now() - t_base0);
    std::int64_t mem = rss_bytes() - rss0;
    std::vector<double> idle, change;
    for (int i = 0; i < 50; ++i) {
      Nanos t0 = monotonic_now();
      job.sample();
      idle.push_back(ms(monotonic_now() - t0));
      int fd = open((dir + "/leak_" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY, 0600);
      if (fd >= 0) close(fd);
      t0 = monotonic_now();
      job.sample();
      change.push_back(ms(monotonic_now() - t0));
    }
    bool found = job.fresh_entries() == 50;
    std::vector<double> ls;
    for (int i = 0; i < (n >= 100000 ? 3 : 5); ++i) ls.push_back(run_cmd({"ls", "-la", dir}));
    job.finish(false, "");
    std::filesystem::remove_all(dir);
    g_rows.push_back(
        {"/dev/shm with " + std::to_string(n) + " entries: a sample (idle / with a new entry)",
         fmt("%.3f", median(idle)) + fmt(" / %.3f ms", median(change)) +
             (found ? "" : " (NOT FOUND)") + fmt("; baseline %.0f ms", base_ms) +
             fmt(", %.1f MiB", static_cast<double>(mem) / (1 << 20)),
         "scan + diff " + fmt("%.2f ms", median(t)) + "; ls -la " + fmt("%.1f ms", median(ls)),
         fmt("%.0fx vs scan", median(t) / std::max(1e-6, median(change))),
         "O(changes): ≤ 0.1 ms at any size"});
  }
}

// Exit detection: SIGKILL sent -> exit seen. pidfd poll against a 10 ms
// polling loop (what a sampling harness would do).
//
// A sampler runs on its own clock, so a kill lands anywhere in its period:
// the exit is seen at the first tick after the process is a zombie, on
// average half a period later. The loop below keeps that clock: its next tick
// falls a uniformly random time in (0, 10 ms] after the kill (seeded, so runs
// compare), then every 10 ms. (Reading /proc at the kill's own instant, as a
// tick that happens to coincide with every kill, measures instead whether the
// child finished dying before that first read: about 10 ms where the read
// wins, the child's own exit time, well under 1 ms, where it loses.)
void exit_latency_rows() {
  int n = g_quick ? 200 : 1000;
  constexpr Nanos kPeriod = 10 * aftermath::kMilli;
  std::mt19937_64 rng(20261124);
  std::uniform_int_distribution<Nanos> first_tick(1, kPeriod);
  auto sleep_until = [](Nanos t) {
    timespec ts{static_cast<time_t>(t / aftermath::kSecond),
                static_cast<long>(t % aftermath::kSecond)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  };
  std::vector<double> pidfd_lat, poll_lat;
  for (int i = 0; i < n; ++i) {
    for (int mode = 0; mode < 2; ++mode) {
      int hold[2];
      if (pipe(hold) != 0) return;
      pid_t pid = fork();
      if (pid == 0) {
        close(hold[1]);
        char c;
        while (read(hold[0], &c, 1) > 0) {
        }
        _exit(0);
      }
      close(hold[0]);
      int pfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
      Nanos t0 = monotonic_now();
      syscall(SYS_pidfd_send_signal, pfd, SIGKILL, nullptr, 0);
      if (mode == 0) {
        pollfd p{pfd, POLLIN, 0};
        poll(&p, 1, 5000);
        pidfd_lat.push_back(ms(monotonic_now() - t0));
      } else {
        // The state a /proc sampler sees: Z (or gone) at one of its ticks.
        const std::string path = "/proc/" + std::to_string(pid) + "/stat";
        for (Nanos tick = t0 + first_tick(rng);; tick += kPeriod) {
          sleep_until(tick);
          std::ifstream f(path);
          std::string line;
          std::getline(f, line);
          auto rp = line.rfind(')');
          if (line.empty() || (rp != std::string::npos && line[rp + 2] == 'Z')) break;
        }
        poll_lat.push_back(ms(monotonic_now() - t0));
      }
      waitpid(pid, nullptr, 0);
      close(pfd);
      close(hold[1]);
    }
  }
  g_rows.push_back(
      {"exit detection (SIGKILL -> seen), " + std::to_string(n) + " kills",
       fmt("pidfd median %.3f ms", median(pidfd_lat)) + fmt(", p99 %.3f ms", pct(pidfd_lat, 0.99)),
       fmt("10 ms polling median %.2f ms", median(poll_lat)) +
           fmt(", p99 %.2f ms", pct(poll_lat, 0.99)),
       fmt("%.0fx", median(poll_lat) / std::max(1e-6, median(pidfd_lat))), "median < 1 ms"});
}

void unarmed_point_row() {
  const long n = 200'000'000;
  Nanos t0 = monotonic_now();
  long armed = 0;
  for (long i = 0; i < n; ++i) armed += aftermath::points::point("loader.worker.getitem").armed;
  double ns = static_cast<double>(monotonic_now() - t0) / n;
  g_rows.push_back({"unarmed point (C++ client)", fmt("%.2f ns/call", ns) + (armed ? "?" : ""), "-",
                    "-", "< 50 ns"});
}

void fixed_cost_row() {
  std::vector<double> t;
  std::string out = "/tmp/aftermath-compare-out";
  for (int i = 0; i < (g_quick ? 5 : 20); ++i)
    t.push_back(run_cmd({g_bin + "/aftermath", "run", "--out", out, "--", "/bin/true"}));
  std::filesystem::remove_all(out);
  std::vector<double> bare;
  for (int i = 0; i < 20; ++i) bare.push_back(run_cmd({"/bin/true"}));
  g_rows.push_back({"fixed cost: aftermath run -- true", fmt("%.1f ms", median(t)),
                    fmt("/bin/true alone %.2f ms", median(bare)), "-", "< 100 ms"});
}

// Harness CPU while supervising 136 idle processes at the default rate; with
// `fallback`, without the kernel's process events (the /proc/loadavg gate).
// The whole run (starting, tracking and tearing down 136 processes) and the
// steady part alone: from the moment all 136 are up to the last look before
// the first of them ends.
struct Overhead {
  double whole_pct = -1, whole_cpu = 0, steady_pct = -1;
};
Overhead overhead_run(bool fallback);
void overhead_row() {
  int secs = g_quick ? 10 : 30;
  Overhead ev = overhead_run(false), fb = overhead_run(true);
  if (ev.whole_pct < 0) return;
  auto both = [](const Overhead& o) {
    return fmt("%.2f%% of one core steady", o.steady_pct) + fmt(", %.2f%% whole run", o.whole_pct) +
           fmt(" (%.2f s CPU)", o.whole_cpu);
  };
  g_rows.push_back(
      {"supervising 136 idle processes for " + std::to_string(secs) + " s (20 ms sampling)",
       both(ev),
       fb.whole_pct < 0 ? "-" : "without process events (AFTERMATH_PROC_EVENTS=0): " + both(fb),
       "-", "< 1% steady"});
}

Overhead overhead_run(bool fallback) {
  Overhead r;
  int secs = g_quick ? 10 : 30;
  std::string out = "/tmp/aftermath-compare-out";
  std::vector<std::string> argv = {g_bin + "/aftermath",
                                   "run",
                                   "--out",
                                   out,
                                   "--timeout",
                                   std::to_string(secs + 30) + "s",
                                   "--",
                                   g_bin + "/tc_hang",
                                   "--children",
                                   "135",
                                   "--life",
                                   std::to_string(secs) + "s"};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "AFTERMATH_PROC_EVENTS=", 22) != 0) env_s.push_back(*e);
  if (fallback) env_s.push_back("AFTERMATH_PROC_EVENTS=0");
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data()) != 0) return r;
  posix_spawn_file_actions_destroy(&fa);
  // The harness's own CPU time (all its threads, not its children's), in ns.
  clockid_t clock;
  if (clock_getcpuclockid(pid, &clock) != 0) return r;
  auto cpu_now = [&]() -> std::optional<Nanos> {
    timespec ts{};
    if (clock_gettime(clock, &ts) != 0) return std::nullopt;
    return static_cast<Nanos>(ts.tv_sec) * aftermath::kSecond + ts.tv_nsec;
  };
  aftermath::ProcReader reader;
  Nanos t0 = monotonic_now(), cpu = 0;
  Nanos up_t = 0, up_cpu = 0, last_t = 0, last_cpu = 0;
  const size_t full = 136;
  for (;;) {
    auto c = cpu_now();
    auto st = reader.stat(pid);
    if (!c || !st || st->state == 'Z') break;
    cpu = *c;
    size_t n = 0;
    for (const auto& [p, entry] : reader.subtree(pid))
      if (entry.first.comm == "tc_hang") ++n;
    if (n >= full) {
      if (!up_t) up_t = monotonic_now(), up_cpu = cpu;
      last_t = monotonic_now(), last_cpu = cpu;
    }
    struct timespec ts{0, 100 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  double wall = static_cast<double>(monotonic_now() - t0) / 1e9;
  waitpid(pid, nullptr, 0);
  std::filesystem::remove_all(out);
  r.whole_cpu = static_cast<double>(cpu) / 1e9;
  r.whole_pct = 100 * r.whole_cpu / wall;
  if (last_t > up_t)
    r.steady_pct =
        100.0 * static_cast<double>(last_cpu - up_cpu) / static_cast<double>(last_t - up_t);
  return r;
}

// Device-file holder scan over every process on the machine: planted
// device-like files (regular files under a temp dir, matched by a pattern as
// /dev/nvidia* would be), held open by 136 processes started here, against
// `fuser -v` and `lsof` on the same files. Ours gives what fuser -v prints:
// each holder's pid, uid, command and the files it holds.
void holder_rows() {
  const int n_holders = 136;
  char tmpl[] = "/tmp/aftermath-compare-holders-XXXXXX";
  if (!mkdtemp(tmpl)) return;
  std::string dir = tmpl;
  std::vector<std::string> files;
  for (std::string f : {"nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1", "nvidia2", "nvidia3"}) {
    files.push_back(dir + "/" + f);
    int fd = open(files.back().c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
  }
  int ready[2], hold[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0) return;
  std::vector<pid_t> kids;
  for (int i = 0; i < n_holders; ++i) {
    pid_t p = fork();
    if (p == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      alarm(600);      // bounds its own life
      close(hold[1]);  // or the EOF that ends it would never come
      close(ready[0]);
      // Like a CUDA process: the control files and one GPU.
      for (const std::string& f : {files[0], files[1], files[2 + i % 4]})
        if (open(f.c_str(), O_RDWR) < 0) _exit(1);
      if (write(ready[1], "r", 1) != 1) _exit(1);
      char c;
      while (read(hold[0], &c, 1) > 0) {
      }
      _exit(0);
    }
    if (p > 0) kids.push_back(p);
  }
  close(ready[1]);
  close(hold[0]);
  int up = 0;
  char c;
  while (up < static_cast<int>(kids.size()) && read(ready[0], &c, 1) == 1) ++up;
  close(ready[0]);

  auto pattern = *aftermath::PathPattern::parse(dir + "/nvidia*");
  std::vector<double> ours;
  size_t found = 0;
  for (int i = 0; i < (g_quick ? 5 : 20); ++i) {
    Nanos t0 = monotonic_now();
    aftermath::ProcReader reader;
    aftermath::ProcessIndex idx;
    auto holders = aftermath::find_device_holders(idx, "/proc", pattern, aftermath::JobRef{});
    for (auto& h : holders)
      if (auto p = aftermath::read_proc_info(reader, h.pid)) {
        h.uid = p->uid;
        h.comm = p->comm;
        h.ppid = p->ppid;
        h.state = p->state;
      }
    ours.push_back(ms(monotonic_now() - t0));
    found = holders.size();
  }
  std::vector<std::string> fuser_argv = {"fuser", "-v"}, lsof_argv = {"lsof"};
  fuser_argv.insert(fuser_argv.end(), files.begin(), files.end());
  lsof_argv.insert(lsof_argv.end(), files.begin(), files.end());
  std::vector<double> fu, ls;
  int st = 0;
  for (int i = 0; i < (g_quick ? 3 : 10); ++i) {
    double t = run_cmd(fuser_argv, nullptr, &st);
    if (t >= 0) fu.push_back(t);
    t = run_cmd(lsof_argv, nullptr, &st);
    if (t >= 0) ls.push_back(t);
  }
  close(hold[1]);  // EOF: every holder exits
  for (pid_t p : kids) waitpid(p, nullptr, 0);
  std::filesystem::remove_all(dir);
  double o = median(ours);
  std::string base =
      (fu.empty() ? std::string("fuser n/a") : "fuser -v " + fmt("%.1f ms", median(fu))) + "; " +
      (ls.empty() ? std::string("lsof n/a") : "lsof " + fmt("%.1f ms", median(ls)));
  g_rows.push_back({"device-file holder scan, whole machine, " + std::to_string(up) +
                        " holders of " + std::to_string(files.size()) + " planted files",
                    fmt("%.2f ms", o) + " (" + std::to_string(found) + " found)", base,
                    fu.empty() ? "-"
                               : fmt("%.1fx vs fuser", median(fu) / o) +
                                     (ls.empty() ? "" : fmt(", %.1fx vs lsof", median(ls) / o)),
                    "≥ 3x fuser"});
}

void suite_rows() {
  std::string out = "/tmp/aftermath-compare-out";
  for (int jobs : {1, 2, 4}) {
    double t = run_cmd({g_bin + "/aftermath", "run", "--out", out, "--jobs", std::to_string(jobs),
                        "scenarios/nightly-cpu.suite"});
    g_rows.push_back({"CPU nightly suite, --jobs " + std::to_string(jobs), fmt("%.2f s", t / 1000),
                      "-", "-", "-"});
  }
  std::filesystem::remove_all(out);
}

// The trainer's loader against PyTorch's DataLoader: batches per second over
// one pass, same batch shape (16 x 512-byte samples), 16 workers, fork, each
// sharing strategy. `aftermath-trainer loader-bench` and
// fixtures/python/loader_bench.py each print one JSON line; the median of the
// runs is taken, and the ratio is ours over PyTorch's (steady rate: after the
// first batch; the whole pass, workers' start included, in brackets).
void loader_throughput_rows() {
  const std::string trainer = g_bin + "/aftermath-trainer";
  const std::string script = "fixtures/python/loader_bench.py";
  if (access(trainer.c_str(), X_OK) != 0 || !std::filesystem::exists(script)) return;
  auto number = [](const std::string& line, const std::string& key) {
    auto at = line.find("\"" + key + "\": ");
    return at == std::string::npos ? -1.0 : std::atof(line.c_str() + at + key.size() + 4);
  };
  const std::vector<std::string> shape = {"--workers",    "16", "--dataset-size", "16384",
                                          "--batch-size", "16", "--sample-bytes", "512"};
  const int runs = g_quick ? 1 : 5;
  for (std::string sharing : {"file_descriptor", "file_system"}) {
    std::vector<double> ours, ours_all, theirs, theirs_all;
    for (int i = 0; i < runs; ++i) {
      std::vector<std::string> a = {trainer, "loader-bench", "--sharing", sharing};
      std::vector<std::string> b = {"/usr/bin/python3", script, "--strategy", sharing};
      a.insert(a.end(), shape.begin(), shape.end());
      b.insert(b.end(), shape.begin(), shape.end());
      std::string out;
      int st = 0;
      if (run_cmd(a, &out, &st) >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        ours.push_back(number(out, "steady_batches_per_s"));
        ours_all.push_back(number(out, "batches_per_s"));
      }
      out.clear();
      if (run_cmd(b, &out, &st) >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        theirs.push_back(number(out, "steady_batches_per_s"));
        theirs_all.push_back(number(out, "batches_per_s"));
      }
    }
    if (ours.empty()) continue;
    double o = median(ours), t = theirs.empty() ? 0 : median(theirs);
    g_rows.push_back(
        {"loader throughput, 16 workers, " + sharing + " (batches of 16 x 512 B)",
         fmt("%.0f batches/s", o) + fmt(" (%.0f whole pass)", median(ours_all)),
         t > 0 ? "PyTorch DataLoader " + fmt("%.0f batches/s", t) +
                     fmt(" (%.0f whole pass)", median(theirs_all))
               : "PyTorch n/a",
         t > 0 ? fmt("%.2fx", o / t) + fmt(" (%.2fx)", median(ours_all) / median(theirs_all)) : "-",
         "≥ 2x PyTorch"});
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --only ROW[,ROW]: snapshot shm exit point fixed overhead holders suite loader
  std::string only;
  const char* usage =
      "usage: aftermath-compare [--quick] [--only ROW[,ROW...]]\n"
      "  rows: snapshot shm exit point fixed overhead holders suite loader\n";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      g_quick = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = "," + std::string(argv[++i]) + ",";
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "aftermath-compare: unknown option %s (or --only without its rows)\n%s",
                   argv[i], usage);
      return 2;
    }
  }
  for (size_t at = 1; at < only.size();) {
    size_t end = only.find(',', at);
    std::string row = only.substr(at, end - at);
    const std::string known = ",snapshot,shm,exit,point,fixed,overhead,holders,suite,loader,";
    if (!row.empty() && known.find("," + row + ",") == std::string::npos) {
      std::fprintf(stderr, "aftermath-compare: --only: unknown row %s\n%s", row.c_str(), usage);
      return 2;
    }
    at = end + 1;
  }
  auto want = [&](const char* row) {
    return only.empty() || only.find("," + std::string(row) + ",") != std::string::npos;
  };
  g_bin = std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
  // The suite's timings run the CPU nightly suite three times (--jobs 1, 2,
  // 4): most of a full run. --quick leaves them out unless asked for.
  const bool suite = want("suite") && std::filesystem::exists("scenarios/nightly-cpu.suite") &&
                     (!g_quick || !only.empty());
  std::fprintf(stderr, "measuring%s...\n",
               suite
                   ? " (this takes 10-15 minutes, most of it the CPU nightly suite run three times)"
               : !only.empty() ? ""
               : g_quick       ? " (this takes about a minute)"
                               : " (this takes about 3 minutes)");
  if (want("snapshot")) snapshot_rows();
  // Exit detection before the /dev/shm rows: removing 100,000 entries
  // leaves the kernel freeing inodes for a while, on the cores a kill needs.
  if (want("exit")) exit_latency_rows();
  if (want("shm")) shm_rows();
  if (want("point")) unarmed_point_row();
  if (want("fixed")) fixed_cost_row();
  if (want("overhead")) overhead_row();
  if (want("holders")) holder_rows();
  if (suite)
    suite_rows();
  else if (g_quick && only.empty())
    g_rows.push_back(
        {"CPU nightly suite", "left out by --quick (--only suite times it)", "-", "-", "-"});
  if (want("loader")) loader_throughput_rows();
  std::printf("| figure | aftermath | baseline | ratio | target |\n|---|---|---|---|---|\n");
  for (const auto& r : g_rows)
    std::printf("| %s | %s | %s | %s | %s |\n", r.what.c_str(), r.ours.c_str(), r.baseline.c_str(),
                r.ratio.c_str(), r.target.c_str());
  return 0;
}
