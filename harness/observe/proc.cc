#include "harness/observe/proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>

namespace aftermath {

namespace {
// Splits on single spaces; stat's fields after comm never contain spaces.
std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\n') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

template <typename T>
bool to_num(std::string_view s, T& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view c) {
  auto open = c.find('(');
  auto close = c.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  ProcStat st;
  if (open < 2 || c[open - 1] != ' ' || !to_num(c.substr(0, open - 1), st.pid)) return std::nullopt;
  st.comm = std::string(c.substr(open + 1, close - open - 1));
  auto f = split_fields(c.substr(close + 1));
  // f[0] is field 3 (state); field N is f[N - 3].
  if (f.size() < 22) return std::nullopt;
  if (f[0].size() != 1) return std::nullopt;
  st.state = f[0][0];
  if (!to_num(f[1], st.ppid) || !to_num(f[2], st.pgrp) || !to_num(f[3], st.session) ||
      !to_num(f[11], st.utime) || !to_num(f[12], st.stime) || !to_num(f[17], st.num_threads) ||
      !to_num(f[19], st.starttime) || !to_num(f[21], st.rss_pages))
    return std::nullopt;
  return st;
}

std::vector<int> parse_status_nspid(std::string_view c) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < c.size()) {
    size_t eol = c.find('\n', pos);
    if (eol == std::string_view::npos) eol = c.size();
    auto line = c.substr(pos, eol - pos);
    if (line.rfind("NSpid:", 0) == 0) {
      for (auto f : split_fields(line.substr(6))) {
        // tabs separate the values
        size_t i = 0;
        while (i < f.size()) {
          while (i < f.size() && f[i] == '\t') ++i;
          size_t j = i;
          while (j < f.size() && f[j] != '\t') ++j;
          int v;
          if (j > i && to_num(f.substr(i, j - i), v)) out.push_back(v);
          i = j;
        }
      }
      return out;
    }
    pos = eol + 1;
  }
  return out;
}

std::string parse_cmdline(std::string_view c) {
  while (!c.empty() && c.back() == '\0') c.remove_suffix(1);
  std::string s(c);
  for (auto& ch : s)
    if (ch == '\0') ch = ' ';
  return s;
}

std::optional<std::string> read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  if (n <= 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

StatFiles::StatFiles(const std::string& root, std::size_t max_open)
    : root_(root),
      root_fd_(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
      max_open_(max_open) {}

std::size_t StatFiles::default_max_open() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 256;
  return static_cast<std::size_t>(rl.rlim_cur / 4);
}

std::optional<ProcStat> StatFiles::read(int pid) {
  char buf[1024];
  auto it = fds_.find(pid);
  if (it == fds_.end()) {
    char rel[32];
    std::snprintf(rel, sizeof rel, "%d/stat", pid);
    int fd = root_fd_ ? ::openat(root_fd_.get(), rel, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
      auto text = read_small_file(root_ + "/" + rel);
      return text ? parse_proc_stat(*text) : std::nullopt;
    }
    UniqueFd owned(fd);
    ssize_t n = ::pread(fd, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    if (fds_.size() < max_open_) fds_.emplace(pid, std::move(owned));
    return parse_proc_stat(std::string_view(buf, static_cast<size_t>(n)));
  }
  ssize_t n;
  do n = ::pread(it->second.get(), buf, sizeof buf, 0);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    fds_.erase(it);  // reaped: this descriptor will never read again
    return std::nullopt;
  }
  return parse_proc_stat(std::string_view(buf, static_cast<size_t>(n)));
}

std::map<int, ProcStat> ProcReader::scan() const {
  std::map<int, ProcStat> out;
  DIR* d = ::opendir(root_.c_str());
  if (!d) return out;
  std::string path;
  while (dirent* e = ::readdir(d)) {
    int pid;
    std::string_view name(e->d_name);
    if (name.empty() || name[0] < '0' || name[0] > '9' || !to_num(name, pid)) continue;
    path.assign(root_).append("/").append(name).append("/stat");
    auto text = read_small_file(path);
    if (!text) continue;
    if (auto st = parse_proc_stat(*text)) out.emplace(st->pid, std::move(*st));
  }
  ::closedir(d);
  return out;
}

std::optional<ProcStat> ProcReader::stat(int pid) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

std::string ProcReader::cmdline(int pid) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/cmdline");
  return text ? parse_cmdline(*text) : std::string();
}

std::optional<std::uint64_t> parse_status_sigcgt(std::string_view c) {
  return parse_status_sigmask(c, "SigCgt");
}

std::optional<std::uint64_t> parse_status_sigmask(std::string_view c, std::string_view field) {
  const std::string key = std::string(field) + ":";
  size_t pos = c.find(key);
  if (pos == std::string_view::npos || (pos > 0 && c[pos - 1] != '\n')) return std::nullopt;
  pos += key.size();
  while (pos < c.size() && (c[pos] == '\t' || c[pos] == ' ')) ++pos;
  std::uint64_t v = 0;
  size_t digits = 0;
  for (; pos < c.size() && c[pos] != '\n'; ++pos, ++digits) {
    char ch = c[pos];
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (d < 0 || digits >= 16) return std::nullopt;
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  if (digits == 0) return std::nullopt;
  return v;
}

std::optional<std::string> parse_environ_value(std::string_view c, std::string_view name) {
  size_t pos = 0;
  while (pos < c.size()) {
    size_t end = c.find('\0', pos);
    if (end == std::string_view::npos) end = c.size();
    auto entry = c.substr(pos, end - pos);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
        entry[name.size()] == '=')
      return std::string(entry.substr(name.size() + 1));
    pos = end + 1;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> ProcReader::caught_signals(int pid) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/status");
  return text ? parse_status_sigcgt(*text) : std::nullopt;
}

std::optional<std::uint64_t> ProcReader::ignored_signals(int pid) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/status");
  return text ? parse_status_sigmask(*text, "SigIgn") : std::nullopt;
}

std::optional<std::uint64_t> parse_io_bytes(std::string_view c) {
  std::optional<std::uint64_t> rchar, wchar;
  size_t pos = 0;
  while (pos < c.size()) {
    size_t eol = c.find('\n', pos);
    if (eol == std::string_view::npos) eol = c.size();
    auto line = c.substr(pos, eol - pos);
    pos = eol + 1;
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto key = line.substr(0, colon);
    auto v = line.substr(colon + 1);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    std::uint64_t n;
    if (!to_num(v, n)) continue;
    if (key == "rchar")
      rchar = n;
    else if (key == "wchar")
      wchar = n;
  }
  if (!rchar || !wchar) return std::nullopt;
  return *rchar + *wchar;
}

std::optional<std::uint64_t> ProcReader::io_bytes(int pid) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/io");
  return text ? parse_io_bytes(*text) : std::nullopt;
}

std::optional<SchedStat> parse_schedstat(std::string_view c) {
  std::uint64_t n[3];
  for (std::uint64_t& v : n) {
    while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
    size_t end = std::min(c.find_first_of(" \n"), c.size());
    if (!to_num(c.substr(0, end), v)) return std::nullopt;
    c.remove_prefix(end);
  }
  return SchedStat{n[0], n[1], n[2]};
}

std::optional<SchedStat> ProcReader::schedstat(int pid) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/schedstat");
  return text ? parse_schedstat(*text) : std::nullopt;
}

std::optional<std::string> ProcReader::environ_value(int pid, std::string_view name) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/environ");
  return text ? parse_environ_value(*text, name) : std::nullopt;
}

std::vector<int> ProcReader::nspid(int pid) const {
  auto text = read_small_file(root_ + "/" + std::to_string(pid) + "/status");
  return text ? parse_status_nspid(*text) : std::vector<int>{};
}

std::optional<std::vector<int>> ProcReader::children(int pid) const {
  std::string task = root_ + "/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(task.c_str());
  if (!d) return std::nullopt;
  std::vector<int> out;
  bool any_file = false;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    auto text = read_small_file(task + "/" + e->d_name + "/children");
    if (!text) continue;
    any_file = true;
    for (auto f : split_fields(*text)) {
      int c;
      if (to_num(f, c)) out.push_back(c);
    }
  }
  ::closedir(d);
  if (!any_file) return std::nullopt;
  return out;
}

std::map<int, std::pair<ProcStat, int>> ProcReader::subtree(int root) const {
  std::map<int, std::pair<ProcStat, int>> out;
  // (pid, depth, threads): a single-threaded process's children are in its
  // one task's file, read without listing task/ (most of a job: workers).
  struct Queued {
    int pid, depth, threads;
  };
  std::deque<Queued> q{{root, 0, 0}};
  std::string path;
  while (!q.empty()) {
    auto [pid, depth, threads] = q.front();
    q.pop_front();
    std::optional<std::vector<int>> kids;
    if (threads == 1) {
      path.assign(root_)
          .append("/")
          .append(std::to_string(pid))
          .append("/task/")
          .append(std::to_string(pid))
          .append("/children");
      if (auto text = read_small_file(path)) {
        kids.emplace();
        for (auto f : split_fields(*text)) {
          int c;
          if (to_num(f, c)) kids->push_back(c);
        }
      }
    }
    if (!kids) kids = children(pid);  // several threads (or it became so)
    if (!kids) {
      if (pid != root) continue;  // gone meanwhile
      // No children files on this kernel: the whole table it is.
      auto table = scan();
      for (const auto& [p, d] : descendants(table, root))
        out.emplace(p, std::make_pair(table.at(p), d));
      return out;
    }
    for (int c : *kids) {
      auto st = stat(c);
      if (!st) continue;
      int n = st->num_threads;
      if (out.emplace(c, std::make_pair(std::move(*st), depth + 1)).second)
        q.push_back({c, depth + 1, n});
    }
  }
  return out;
}

std::vector<int> ProcReader::pids() const {
  std::vector<int> out;
  DIR* d = ::opendir(root_.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    int pid;
    std::string_view name(e->d_name);
    if (!name.empty() && name[0] >= '0' && name[0] <= '9' && to_num(name, pid)) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

std::map<int, std::pair<ProcStat, int>> ProcReader::newcomers(
    int root, const std::map<int, int>& known, std::set<int>* foreign,
    const std::vector<int>* candidates) const {
  std::map<int, std::pair<ProcStat, int>> out;
  auto depth_of = [&](int pid) -> std::optional<int> {
    if (pid == root) return 0;
    if (auto it = known.find(pid); it != known.end()) return it->second;
    if (auto it = out.find(pid); it != out.end()) return it->second.second;
    return std::nullopt;
  };
  std::vector<int> listed;
  if (!candidates) {
    // Children files: walk down from root, reading the known processes'
    // children lists and stat'ing only the pids not seen before.
    std::deque<std::pair<int, int>> q{{root, 0}};
    bool have_children = true;
    while (!q.empty()) {
      auto [pid, depth] = q.front();
      q.pop_front();
      auto kids = children(pid);
      if (!kids) {
        if (pid != root) continue;  // gone meanwhile
        have_children = false;
        break;
      }
      for (int c : *kids) {
        if (known.count(c)) {
          q.emplace_back(c, depth + 1);
          continue;
        }
        if (out.count(c)) continue;
        auto st = stat(c);
        if (!st) continue;
        out.emplace(c, std::make_pair(std::move(*st), depth + 1));
        q.emplace_back(c, depth + 1);
      }
    }
    if (have_children) return out;
    listed = pids();
    if (foreign) {
      std::set<int> now(listed.begin(), listed.end());
      for (auto it = foreign->begin(); it != foreign->end();)
        it = now.count(*it) ? std::next(it) : foreign->erase(it);
    }
    candidates = &listed;
  }
  // Stat the unknown pids, then attach each to a known (or attached) parent;
  // a parent may come later in the list (pids wrap around).
  // Announced candidates are looked at even if a listing once saw the pid
  // outside the job: it may have been reused since.
  const bool listing = candidates == &listed;
  std::map<int, ProcStat> loose;
  for (int pid : *candidates) {
    if (pid == root || known.count(pid) || loose.count(pid)) continue;
    if (listing && foreign && foreign->count(pid)) continue;
    if (auto st = stat(pid)) loose.emplace(pid, std::move(*st));
  }
  for (bool progress = true; progress && !loose.empty();) {
    progress = false;
    for (auto it = loose.begin(); it != loose.end();) {
      if (auto d = depth_of(it->second.ppid)) {
        out.emplace(it->first, std::make_pair(std::move(it->second), *d + 1));
        it = loose.erase(it);
        progress = true;
      } else {
        ++it;
      }
    }
  }
  if (foreign && listing)
    for (const auto& [pid, st] : loose) foreign->insert(pid);
  return out;
}

std::optional<int> ProcReader::last_pid() const {
  auto text = read_small_file(root_ + "/loadavg");
  if (!text) return std::nullopt;
  auto f = split_fields(*text);
  int v;
  if (f.size() < 5 || !to_num(f[4], v)) return std::nullopt;
  return v;
}

std::map<int, int> descendants(const std::map<int, ProcStat>& table, int root_pid) {
  std::multimap<int, int> children;
  for (const auto& [pid, st] : table) children.emplace(st.ppid, pid);
  std::map<int, int> out;
  std::deque<std::pair<int, int>> q{{root_pid, 0}};
  while (!q.empty()) {
    auto [pid, depth] = q.front();
    q.pop_front();
    auto [b, e] = children.equal_range(pid);
    for (auto it = b; it != e; ++it) {
      if (out.emplace(it->second, depth + 1).second) q.emplace_back(it->second, depth + 1);
    }
  }
  return out;
}

}  // namespace aftermath
