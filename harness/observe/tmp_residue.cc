#include "harness/observe/tmp_residue.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "harness/observe/proc.h"

namespace aftermath {

namespace {

std::int64_t mtime_of(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// Sums sizes and the newest mtime under the directory `fd` (consumed).
void walk(int fd, int depth, const TmpScanLimits& lim, int& files, TmpEntry& e, bool top) {
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return;
  }
  while (dirent* de = ::readdir(d)) {
    if (!std::strcmp(de->d_name, ".") || !std::strcmp(de->d_name, "..")) continue;
    if (++files > lim.max_files) {
      e.bytes_partial = true;
      break;
    }
    struct stat st;
    if (::fstatat(::dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    e.mtime_ns = std::max(e.mtime_ns, mtime_of(st));
    if (S_ISSOCK(st.st_mode) && top) e.sockets.emplace_back(de->d_name);
    if (S_ISDIR(st.st_mode)) {
      if (depth + 1 >= lim.max_depth) {
        e.bytes_partial = true;
        continue;
      }
      int sub = ::openat(::dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) walk(sub, depth + 1, lim, files, e, false);
    } else if (S_ISREG(st.st_mode)) {
      e.bytes += st.st_size;
    }
  }
  ::closedir(d);
}

std::optional<TmpEntry> entry_at(int dfd, const std::string& name, const TmpScanLimits& lim) {
  struct stat st;
  if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  TmpEntry e;
  e.name = name;
  e.kind = classify_tmp_name(name);
  e.dir = S_ISDIR(st.st_mode);
  e.uid = st.st_uid;
  e.inode = st.st_ino;
  e.mtime_ns = mtime_of(st);
  if (S_ISREG(st.st_mode)) e.bytes = st.st_size;
  if (e.dir) {
    int fd = ::openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int files = 0;
    if (fd >= 0) walk(fd, 0, lim, files, e, true);
    std::sort(e.sockets.begin(), e.sockets.end());
  }
  return e;
}

std::string real_dir(const std::string& dir) {
  char buf[PATH_MAX];
  return ::realpath(dir.c_str(), buf) ? std::string(buf) : dir;
}

// "dir/name" itself or anything below it.
bool at_or_under(std::string_view path, std::string_view base) {
  return path.size() >= base.size() && path.substr(0, base.size()) == base &&
         (path.size() == base.size() || path[base.size()] == '/');
}

}  // namespace

TmpKind classify_tmp_name(std::string_view name) {
  auto starts = [&](std::string_view p) {
    return name.size() > p.size() && name.substr(0, p.size()) == p;
  };
  if (starts("pymp-")) return TmpKind::Pymp;
  if (starts("torch-shm-dir-")) return TmpKind::TorchShmDir;
  if (starts("torchelastic_")) return TmpKind::Torchelastic;
  if (starts("aftermath-torchrun-")) return TmpKind::TorchrunShim;
  if (starts("pytorch-errorfile-") && name.ends_with(".pickle")) return TmpKind::SpawnErrorFile;
  return TmpKind::Other;
}

Expected<TmpTable> scan_tmp(const std::string& dir, const TmpScanLimits& limits) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return sys_error("cannot open " + dir);
  DIR* d = ::fdopendir(::dup(dfd));
  if (!d) {
    Error e = sys_error("cannot list " + dir);
    ::close(dfd);
    return e;
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.emplace_back(e->d_name);
  ::closedir(d);
  TmpTable out;
  for (auto& n : names)
    if (auto e = entry_at(dfd, n, limits))
      out.emplace(n, std::move(*e));  // gone meanwhile: skipped
  ::close(dfd);
  return out;
}

std::optional<TmpEntry> stat_tmp(const std::string& dir, const std::string& name,
                                 const TmpScanLimits& limits) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return std::nullopt;
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return std::nullopt;
  auto e = entry_at(dfd, name, limits);
  ::close(dfd);
  return e;
}

std::vector<TmpEntry> new_tmp_entries(const TmpTable& before, const TmpTable& after) {
  std::vector<TmpEntry> out;
  for (const auto& [name, e] : after) {
    auto it = before.find(name);
    if (it == before.end() || it->second.inode != e.inode) out.push_back(e);
  }
  return out;
}

std::vector<UnixSocket> parse_proc_net_unix(std::string_view text) {
  std::vector<UnixSocket> out;
  size_t pos = 0;
  bool header = true;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (header) {  // "Num RefCount Protocol Flags Type St Inode Path"
      header = false;
      if (line.rfind("Num", 0) == 0) continue;
    }
    // Num: RefCount Protocol Flags Type St Inode [Path]; the path (which may
    // hold spaces) is the rest of the line after the seventh field.
    size_t i = 0;
    std::string_view inode;
    for (int field = 0; field < 7; ++field) {
      while (i < line.size() && line[i] == ' ') ++i;
      size_t start = i;
      while (i < line.size() && line[i] != ' ') ++i;
      if (field == 6) inode = line.substr(start, i - start);
    }
    if (i >= line.size() || inode.empty()) continue;
    std::string_view path = line.substr(i + 1);
    if (path.empty() || path[0] != '/') continue;  // abstract (@...) or relative: no file
    UnixSocket s;
    auto r = std::from_chars(inode.data(), inode.data() + inode.size(), s.inode);
    if (r.ec != std::errc()) continue;
    s.path = std::string(path);
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, TmpHold> find_tmp_holders(const std::string& proc_root,
                                                const std::string& dir,
                                                const std::vector<std::string>& names,
                                                const std::vector<int>* only_pids,
                                                std::set<int>* unreadable) {
  std::map<std::string, TmpHold> out;
  if (names.empty()) return out;
  // The dir as given and as resolved: a process sees whichever it opened.
  std::vector<std::string> bases;
  for (const std::string& root : {dir, real_dir(dir)}) {
    std::string r = root;
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    for (const auto& n : names) bases.push_back(r + "/" + n);
  }
  auto entry_of = [&](std::string_view path) -> const std::string* {
    for (size_t i = 0; i < bases.size(); ++i)
      if (at_or_under(path, bases[i])) return &names[i % names.size()];
    return nullptr;
  };

  std::map<std::uint64_t, const std::string*> socket_entry;  // bound socket inode -> entry
  if (auto text = read_small_file(proc_root + "/net/unix")) {
    for (auto& s : parse_proc_net_unix(*text)) {
      if (const std::string* n = entry_of(s.path)) {
        socket_entry[s.inode] = n;
        out[*n].bound.push_back(s.path);
      }
    }
  }

  std::vector<int> pids;
  if (only_pids) {
    pids = *only_pids;
  } else if (DIR* d = ::opendir(proc_root.c_str())) {
    while (dirent* e = ::readdir(d)) {
      int v;
      std::string_view n(e->d_name);
      auto r = std::from_chars(n.data(), n.data() + n.size(), v);
      if (r.ec == std::errc() && r.ptr == n.data() + n.size()) pids.push_back(v);
    }
    ::closedir(d);
  }
  std::string link(PATH_MAX, '\0');
  auto hold = [&](const std::string& name, int pid) {
    auto& v = out[name].pids;
    if (std::find(v.begin(), v.end(), pid) == v.end()) v.push_back(pid);
  };
  for (int pid : pids) {
    std::string base = proc_root + "/" + std::to_string(pid);
    bool denied = false;
    ssize_t n = ::readlink((base + "/cwd").c_str(), link.data(), link.size());
    if (n > 0) {
      if (const std::string* e = entry_of(std::string_view(link.data(), static_cast<size_t>(n))))
        hold(*e, pid);
    } else if (errno == EACCES || errno == EPERM) {
      denied = true;
    }
    DIR* d = ::opendir((base + "/fd").c_str());
    if (!d) {
      if (errno == EACCES || errno == EPERM) denied = true;
    } else {
      while (dirent* de = ::readdir(d)) {
        if (de->d_name[0] == '.') continue;
        n = ::readlinkat(::dirfd(d), de->d_name, link.data(), link.size());
        if (n <= 0) {
          if (errno == EACCES || errno == EPERM) denied = true;
          continue;
        }
        std::string_view target(link.data(), static_cast<size_t>(n));
        if (target.rfind("socket:[", 0) == 0 && target.back() == ']') {
          std::uint64_t ino = 0;
          auto r = std::from_chars(target.data() + 8, target.data() + target.size() - 1, ino);
          if (r.ec != std::errc()) continue;
          if (auto it = socket_entry.find(ino); it != socket_entry.end()) hold(*it->second, pid);
          continue;
        }
        // A file deleted since it was opened holds nothing in the entry.
        if (target.size() > 10 && target.substr(target.size() - 10) == " (deleted)") continue;
        const std::string* e = entry_of(target);
        if (!e) continue;
        // An open directory is a look, not a hold: ls, du, a temp cleaner,
        // another run's own scan of a temp dir it shares (a node beside this
        // one, a run side by side) walk it. A process holds an entry by
        // working in it, a file open in it or a socket bound in it.
        struct stat st{};
        if (::fstatat(::dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode)) continue;
        hold(*e, pid);
      }
      ::closedir(d);
    }
    if (denied && unreadable) unreadable->insert(pid);
  }
  for (auto& [name, h] : out) {
    std::sort(h.pids.begin(), h.pids.end());
    std::sort(h.bound.begin(), h.bound.end());
    h.bound.erase(std::unique(h.bound.begin(), h.bound.end()), h.bound.end());
  }
  return out;
}

bool tmp_maker_gone(const TmpEntry& e, const TmpHold* hold) {
  return !e.sockets.empty() && (!hold || !hold->held());
}

std::string job_tmp_dir(const std::optional<std::string>& tmpdir_env) {
  if (tmpdir_env && !tmpdir_env->empty()) return *tmpdir_env;
  return "/tmp";
}

}  // namespace aftermath
