#include "harness/observe/holders.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>

namespace aftermath {

namespace {

constexpr std::string_view kDeleted = " (deleted)";

FileRef file_ref(std::string_view target) {
  FileRef f;
  if (target.size() > kDeleted.size() &&
      target.substr(target.size() - kDeleted.size()) == kDeleted) {
    f.deleted = true;
    target.remove_suffix(kDeleted.size());
  }
  f.path = std::string(target);
  return f;
}

void add_unique(std::vector<FileRef>& v, FileRef f) {
  for (const auto& x : v)
    if (x.path == f.path && x.deleted == f.deleted) return;
  v.push_back(std::move(f));
}

std::vector<int> numeric_entries(const std::string& dir) {
  std::vector<int> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    int v;
    auto r = std::from_chars(n.data(), n.data() + n.size(), v);
    if (r.ec == std::errc() && r.ptr == n.data() + n.size()) out.push_back(v);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// A path under dir: "dir/..." exactly, so /dev/shmem is not under /dev/shm.
bool under(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return path.size() > dir.size() + 1 && path.substr(0, dir.size()) == dir &&
         path[dir.size()] == '/';
}

}  // namespace

Expected<PathPattern> PathPattern::parse(std::string_view spec) {
  PathPattern p;
  p.spec_ = std::string(spec);
  if (spec.rfind("re:", 0) == 0) {
    try {
      p.regex_.emplace(std::string(spec.substr(3)), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Error{"bad device pattern '" + std::string(spec) + "': " + e.what()};
    }
  } else {
    p.glob_ = std::string(spec.rfind("glob:", 0) == 0 ? spec.substr(5) : spec);
    p.prefix_ = p.glob_.substr(0, p.glob_.find_first_of("*?[\\"));
  }
  return p;
}

PathPattern PathPattern::under_dir(std::string_view dir) {
  PathPattern p;
  p.spec_ = std::string(dir) + "/*";
  p.dir_ = std::string(dir);
  p.prefix_ = p.dir_ + "/";
  return p;
}

bool PathPattern::matches(std::string_view path) const {
  if (!dir_.empty()) return under(path, dir_);
  if (regex_) return std::regex_search(path.begin(), path.end(), *regex_);
  return ::fnmatch(glob_.c_str(), std::string(path).c_str(), 0) == 0;
}

std::map<int, std::vector<FileRef>> scan_open_files(const std::string& proc_root,
                                                    const PathPattern& pattern, int* unreadable,
                                                    std::set<int>* unreadable_pids) {
  std::map<int, std::vector<FileRef>> out;
  std::string target(4096, '\0');
  const std::string& prefix = pattern.literal_prefix();
  // Each fd folder opened relative to the procfs root: no path walk from /.
  const int root_fd = ::open(proc_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  char rel[32];
  for (int pid : numeric_entries(proc_root)) {
    std::snprintf(rel, sizeof rel, "%d/fd", pid);
    const int fd_dir =
        root_fd >= 0 ? ::openat(root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    DIR* d = fd_dir >= 0 ? ::fdopendir(fd_dir) : nullptr;
    if (!d && fd_dir >= 0) {
      const int err = errno;
      ::close(fd_dir);
      errno = err;
    }
    if (!d) {
      // EACCES: not ours to read. ENOENT: gone meanwhile, nothing to count.
      if (errno == EACCES) {
        if (unreadable) ++*unreadable;
        if (unreadable_pids) unreadable_pids->insert(pid);
      }
      continue;
    }
    int dfd = ::dirfd(d);
    bool denied = false;  // a listable fd folder whose links are refused
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      ssize_t n = ::readlinkat(dfd, e->d_name, target.data(), target.size());
      if (n <= 0) {
        denied |= errno == EACCES || errno == EPERM;
        continue;
      }
      std::string_view link(target.data(), static_cast<size_t>(n));
      if (link.substr(0, prefix.size()) != prefix) continue;  // cannot match: no path built
      auto f = file_ref(link);
      if (pattern.matches(f.path)) add_unique(out[pid], std::move(f));
    }
    ::closedir(d);
    if (denied) {
      if (unreadable) ++*unreadable;
      if (unreadable_pids) unreadable_pids->insert(pid);
    }
  }
  if (root_fd >= 0) ::close(root_fd);
  return out;
}

std::string_view maps_line_path(std::string_view line) {
  // address perms offset dev inode [path]: the path starts after 5 fields
  // and may itself hold spaces.
  size_t i = 0;
  for (int field = 0; field < 5; ++field) {
    while (i < line.size() && line[i] == ' ') ++i;
    while (i < line.size() && line[i] != ' ') ++i;
  }
  while (i < line.size() && line[i] == ' ') ++i;
  return i >= line.size() ? std::string_view() : line.substr(i);
}

std::vector<FileRef> parse_maps_paths(std::string_view contents, std::string_view dir) {
  std::vector<FileRef> out;
  size_t pos = 0;
  while (pos < contents.size()) {
    size_t eol = contents.find('\n', pos);
    if (eol == std::string_view::npos) eol = contents.size();
    std::string_view path = maps_line_path(contents.substr(pos, eol - pos));
    pos = eol + 1;
    if (path.empty()) continue;
    auto f = file_ref(path);
    if (under(f.path, dir)) add_unique(out, std::move(f));
  }
  return out;
}

std::map<int, std::vector<FileRef>> scan_mapped_files(const std::string& proc_root,
                                                      std::string_view dir, int* unreadable,
                                                      std::set<int>* unreadable_pids) {
  std::map<int, std::vector<FileRef>> out;
  for (int pid : numeric_entries(proc_root)) {
    std::string path = proc_root + "/" + std::to_string(pid) + "/maps";
    errno = 0;
    auto text = read_small_file(path);
    if (!text) {
      if (errno == EACCES) {
        if (unreadable) ++*unreadable;
        if (unreadable_pids) unreadable_pids->insert(pid);
      }
      continue;
    }
    auto files = parse_maps_paths(*text, dir);
    if (!files.empty()) out[pid] = std::move(files);
  }
  return out;
}

std::vector<DeviceHolder> find_device_holders(const ProcessIndex& procs,
                                              const std::string& proc_root,
                                              const PathPattern& pattern, const JobRef& job,
                                              int* unreadable) {
  std::vector<DeviceHolder> out;
  for (auto& [pid, files] : scan_open_files(proc_root, pattern, unreadable)) {
    DeviceHolder h;
    h.pid = pid;
    for (const auto& f : files) h.devices.push_back(f.path);
    std::sort(h.devices.begin(), h.devices.end());
    h.devices.erase(std::unique(h.devices.begin(), h.devices.end()), h.devices.end());
    if (const ProcInfo* p = procs.get(pid)) {
      h.ppid = p->ppid;
      h.state = p->state;
      h.uid = p->uid;
      h.start_ticks = p->start_ticks;
      h.comm = p->comm;
      h.nspid = p->nspid;
      h.in_job = job.contains(*p);
      h.orphan = job.orphan(*p);
      h.zombie = p->zombie();
    } else {
      h.nspid = {pid};  // started after the index was taken: identity unknown
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace aftermath
