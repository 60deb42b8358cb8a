#include "harness/observe/cgroup_home.h"

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

bool has_token(const std::string& list, const std::string& word, char sep) {
  std::istringstream in(list);
  std::string t;
  while (std::getline(in, t, sep)) {
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    if (t == word) return true;
  }
  return false;
}

bool has_word(const std::string& list, const std::string& word) {
  std::istringstream in(list);
  std::string t;
  while (in >> t)
    if (t == word) return true;
  return false;
}

// mountinfo escapes blanks and backslashes as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

struct Mount {
  std::string root, point, fstype, super;
};

std::vector<Mount> cgroup_mounts(const std::string& mountinfo) {
  std::vector<Mount> out;
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    auto sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream head(line.substr(0, sep)), tail(line.substr(sep + 3));
    std::string id, parent, dev;
    Mount m;
    if (!(head >> id >> parent >> dev >> m.root >> m.point)) continue;
    std::string source;
    if (!(tail >> m.fstype >> source >> m.super)) continue;
    if (m.fstype != "cgroup" && m.fstype != "cgroup2") continue;
    m.root = unescape(m.root);
    m.point = unescape(m.point);
    out.push_back(std::move(m));
  }
  return out;
}

// The directory of cgroup `path` (as /proc/self/cgroup names it) under mount m.
std::string dir_of(const Mount& m, const std::string& path) {
  std::string rel = path;
  if (m.root != "/" && rel.compare(0, m.root.size(), m.root) == 0) rel = rel.substr(m.root.size());
  if (rel == "/") rel.clear();
  return m.point + rel;
}

bool writable_dir(const std::string& dir) { return ::access(dir.c_str(), W_OK) == 0; }

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Expected<CgroupHome> configured_home(const std::string& dir) {
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Error{"AFTERMATH_CGROUP=" + dir + " is not a directory"};
  }
  if (!writable_dir(dir)) {
    return Error{"AFTERMATH_CGROUP=" + dir + " is not writable by this user"};
  }
  if (auto ctl = read_small_file(dir + "/cgroup.controllers")) {
    if (!has_word(*ctl, "memory")) {
      return Error{"AFTERMATH_CGROUP=" + dir + " has no memory controller (cgroup.controllers: " +
                   (ctl->empty() ? "empty" : ctl->substr(0, ctl->find('\n'))) + ")"};
    }
    return CgroupHome{2, dir};
  }
  if (exists(dir + "/memory.limit_in_bytes")) {
    return CgroupHome{1, dir};
  }
  return Error{"AFTERMATH_CGROUP=" + dir +
               " is not a memory cgroup (no cgroup.controllers, no "
               "memory.limit_in_bytes)"};
}

}  // namespace

bool cgroup_list_has(const std::string& list, const std::string& word) {
  return has_word(list, word);
}

std::optional<long long> parse_oom_kill(const std::string& contents) {
  std::istringstream in(contents);
  std::string key;
  long long v = 0;
  while (in >> key >> v)
    if (key == "oom_kill") return v;
  return std::nullopt;
}

std::optional<int> fault_cgroup_owner(const std::string& name) {
  static const std::string prefix = "aftermath-";
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  size_t end = name.find('-', prefix.size());
  if (end == std::string::npos || end == prefix.size() || end - prefix.size() > 9)
    return std::nullopt;
  std::string digits = name.substr(prefix.size(), end - prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoi(digits);
}

std::vector<FaultCgroupEntry> list_fault_cgroups(const std::string& home_dir,
                                                 const std::string& proc_root) {
  std::vector<FaultCgroupEntry> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(home_dir, ec)) {
    std::error_code ec2;
    if (!e.is_directory(ec2)) continue;
    std::string name = e.path().filename().string();
    auto owner = fault_cgroup_owner(name);
    if (!owner) continue;
    FaultCgroupEntry f;
    f.dir = e.path().string();
    f.owner = *owner;
    f.owner_alive = exists(proc_root + "/" + std::to_string(*owner));
    if (auto procs = read_small_file(f.dir + "/cgroup.procs")) {
      std::istringstream in(*procs);
      int pid = 0;
      while (in >> pid) f.members.push_back(pid);
    }
    struct stat st{};
    if (::stat(f.dir.c_str(), &st) == 0) f.uid = st.st_uid;
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const FaultCgroupEntry& a, const FaultCgroupEntry& b) { return a.dir < b.dir; });
  return out;
}

Expected<CgroupHome> find_memory_cgroup_home(const std::string& proc_root,
                                             const std::string& configured) {
  std::string conf = configured;
  if (conf.empty())
    if (const char* e = std::getenv("AFTERMATH_CGROUP"); e && *e) conf = e;
  if (!conf.empty()) return configured_home(conf);

  auto cg = read_small_file(proc_root + "/self/cgroup");
  auto mi = read_small_file(proc_root + "/self/mountinfo");
  if (!cg || !mi) {
    return Error{"cannot read " + proc_root + "/self/cgroup or mountinfo"};
  }
  std::vector<Mount> mounts = cgroup_mounts(*mi);
  std::string v1path, v2path;
  bool v2seen = false;
  std::istringstream in(*cg);
  std::string line;
  while (std::getline(in, line)) {
    // "N:controllers:path"; only the v2 line has no controllers ("0::/path").
    auto a = line.find(':');
    auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1);
    if (has_token(ctrls, "memory", ',')) v1path = line.substr(b + 1);
    if (line.compare(0, 2, "0:") == 0 && ctrls.empty()) {
      v2path = line.substr(b + 1);
      v2seen = true;
    }
  }

  if (!v1path.empty()) {
    for (const Mount& m : mounts) {
      if (m.fstype != "cgroup" || !has_token(m.super, "memory", ',')) continue;
      std::string dir = dir_of(m, v1path);
      if (!exists(dir + "/memory.limit_in_bytes")) {
        return Error{"memory is on cgroup v1, but " + dir + " is not its cgroup directory"};
      }
      if (!writable_dir(dir)) {
        return Error{"memory is on cgroup v1, and our memory cgroup " + dir + " is not writable"};
      }
      return CgroupHome{1, dir};
    }
    return Error{"memory is on cgroup v1, but its hierarchy is not mounted here"};
  }
  if (!v2seen) {
    return Error{"this process is in no memory cgroup (neither v1 nor v2)"};
  }
  const Mount* v2 = nullptr;
  for (const Mount& m : mounts)
    if (m.fstype == "cgroup2") v2 = &m;
  if (!v2) {
    return Error{"cgroup v2 is not mounted here"};
  }
  std::string own = dir_of(*v2, v2path);
  auto ctl = read_small_file(own + "/cgroup.controllers");
  if (!ctl) {
    return Error{"no cgroup v2 directory " + own};
  }
  if (!has_word(*ctl, "memory")) {
    return Error{"the memory controller is not available in " + own + " (cgroup.controllers: " +
                 (ctl->empty() ? "empty" : ctl->substr(0, ctl->find('\n'))) + ")"};
  }
  // Nearest cgroup, from ours up, that already gives its children memory.
  for (std::string d = own;; d = d.substr(0, d.rfind('/'))) {
    auto sub = read_small_file(d + "/cgroup.subtree_control");
    if (sub && has_word(*sub, "memory") && writable_dir(d)) {
      return CgroupHome{2, d};
    }
    if (d.size() <= v2->point.size() || d.rfind('/') == std::string::npos) break;
  }
  // The root of the hierarchy may hold processes and still enable memory.
  if (own == v2->point && writable_dir(own) &&
      ::access((own + "/cgroup.subtree_control").c_str(), W_OK) == 0) {
    return CgroupHome{2, own};
  }
  return Error{
      "no cgroup from " + own +
      " up enables memory for its children where we may write; set "
      "AFTERMATH_CGROUP to a delegated cgroup v2 without processes of its own (e.g. mkdir "
      "/sys/fs/cgroup/aftermath as root, with memory in /sys/fs/cgroup/cgroup.subtree_control)"};
}

}  // namespace aftermath
