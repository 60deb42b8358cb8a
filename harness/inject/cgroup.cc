#include "harness/inject/cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <vector>

#include "harness/observe/proc.h"

namespace aftermath {

namespace {
std::string errno_text(int e) { return std::strerror(e); }

// Writes `value` to a cgroup control file; empty on success, else why.
// cgroupfs refuses to create files (EACCES), so O_CREAT changes nothing
// there; in a planted tree it records what would have been written.
std::string write_control(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot open " + path + ": " + errno_text(errno);
  ssize_t n = ::write(fd, value.data(), value.size());
  int e = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return "writing '" + value + "' to " + path + ": " + errno_text(n < 0 ? e : EIO);
  return {};
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

std::string fault_cgroup_name(int fault_index, int pid) {
  static std::atomic<int> serial{0};
  return "aftermath-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + "-f" +
         std::to_string(fault_index) + "-p" + std::to_string(pid);
}

Expected<std::unique_ptr<MemoryCgroup>> MemoryCgroup::create(const CgroupHome& home,
                                                             const std::string& name,
                                                             std::int64_t limit) {
  auto fail = [](std::string w) { return Error{std::move(w)}; };
  if (home.version == 2) {
    auto sub = read_small_file(home.dir + "/cgroup.subtree_control");
    if (!sub || !cgroup_list_has(*sub, "memory")) {
      std::string err = write_control(home.dir + "/cgroup.subtree_control", "+memory");
      if (!err.empty())
        return fail(
            "cannot enable the memory controller for children of " + home.dir + ": " + err +
            (err.find(std::strerror(EBUSY)) != std::string::npos
                 ? " (it holds processes: cgroup v2 allows no children with controllers then)"
                 : ""));
    }
  }
  std::string dir = home.dir + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0) return fail("mkdir " + dir + ": " + errno_text(errno));
  std::unique_ptr<MemoryCgroup> cg(new MemoryCgroup(dir, home.version));
  std::string lim = std::to_string(limit);
  std::string err;
  if (home.version == 2) {
    err = write_control(dir + "/memory.max", lim);
    if (err.empty() && exists(dir + "/memory.swap.max"))
      err = write_control(dir + "/memory.swap.max", "0");
  } else {
    err = write_control(dir + "/memory.limit_in_bytes", lim);
    if (err.empty() && exists(dir + "/memory.memsw.limit_in_bytes"))
      err = write_control(dir + "/memory.memsw.limit_in_bytes", lim);
  }
  if (!err.empty()) {
    (void)cg->close();
    return fail(err);
  }
  return cg;
}

MemoryCgroup::~MemoryCgroup() { (void)close(); }

Status MemoryCgroup::add(int pid) {
  if (std::string err = write_control(dir_ + "/cgroup.procs", std::to_string(pid)); !err.empty())
    return Error{std::move(err)};
  return {};
}

std::optional<long long> MemoryCgroup::oom_kills() const {
  auto c = read_small_file(dir_ + (version_ == 2 ? "/memory.events" : "/memory.oom_control"));
  return c ? parse_oom_kill(*c) : std::nullopt;
}

Status remove_cgroup_dir(const std::string& dir, Nanos deadline) {
  // An exited member may hold the directory for a moment after its exit.
  Nanos until = monotonic_now() + deadline;
  for (;;) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return {};
    int e = errno;
    if (e != EBUSY || monotonic_now() >= until)
      return Error{"rmdir " + dir + ": " + errno_text(e), e};
    timespec ts{0, 10 * kMilli};
    ::nanosleep(&ts, nullptr);
  }
}

Status MemoryCgroup::close(Nanos deadline) {
  if (!open_) return {};
  Status st = remove_cgroup_dir(dir_, deadline);
  if (st) open_ = false;
  return st;
}

}  // namespace aftermath
