#include "harness/observe/shm_held.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "harness/observe/holders.h"
#include "harness/observe/proc.h"

namespace aftermath {

namespace {

constexpr std::string_view kDeleted = " (deleted)";

bool is_shm_path(std::string_view p) {
  return p.rfind("/dev/shm/", 0) == 0 || p.rfind("/memfd:", 0) == 0;
}

HeldShm& entry(std::vector<HeldShm>& v, std::string_view raw) {
  bool deleted =
      raw.size() > kDeleted.size() && raw.substr(raw.size() - kDeleted.size()) == kDeleted;
  std::string path(deleted ? raw.substr(0, raw.size() - kDeleted.size()) : raw);
  for (auto& h : v)
    if (h.path == path) return h;
  HeldShm h;
  h.path = std::move(path);
  h.deleted = deleted;
  h.memfd = h.path.rfind("/memfd:", 0) == 0;
  v.push_back(std::move(h));
  return v.back();
}

}  // namespace

std::vector<HeldShm> parse_maps_shm(std::string_view maps) {
  std::vector<HeldShm> out;
  size_t pos = 0;
  while (pos < maps.size()) {
    size_t eol = maps.find('\n', pos);
    if (eol == std::string_view::npos) eol = maps.size();
    std::string_view line = maps.substr(pos, eol - pos);
    pos = eol + 1;
    std::string_view path = maps_line_path(line);
    if (!is_shm_path(path)) continue;
    size_t dash = line.find('-');
    size_t sp = line.find(' ');
    if (dash == std::string_view::npos || sp == std::string_view::npos || dash > sp) continue;
    std::uint64_t start = std::strtoull(std::string(line.substr(0, dash)).c_str(), nullptr, 16);
    std::uint64_t end =
        std::strtoull(std::string(line.substr(dash + 1, sp - dash - 1)).c_str(), nullptr, 16);
    HeldShm& h = entry(out, path);
    h.mapped = true;
    if (end > start) h.bytes += static_cast<std::int64_t>(end - start);
  }
  return out;
}

std::vector<HeldShm> shm_held_by(const std::string& proc_root, int pid) {
  std::string base = proc_root + "/" + std::to_string(pid);
  std::vector<HeldShm> out;
  if (auto maps = read_small_file(base + "/maps")) out = parse_maps_shm(*maps);
  if (DIR* d = ::opendir((base + "/fd").c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string link = base + "/fd/" + e->d_name;
      std::optional<std::string> target = read_link(link);
      if (!target || !is_shm_path(*target)) continue;
      HeldShm& h = entry(out, *target);
      h.open = true;
      struct stat st{};
      if (!h.mapped && ::stat(link.c_str(), &st) == 0)
        h.bytes = std::max<std::int64_t>(h.bytes, st.st_size);
    }
    ::closedir(d);
  }
  return out;
}

}  // namespace aftermath
