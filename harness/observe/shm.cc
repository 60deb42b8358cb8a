#include "harness/observe/shm.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace aftermath {

ShmTable scan_shm(const std::string& dir) {
  ShmTable out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  int dfd = ::dirfd(d);
  while (dirent* e = ::readdir(d)) {
    std::string name(e->d_name);
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    ShmEntry en;
    en.name = name;
    en.bytes = S_ISDIR(st.st_mode) ? 0 : st.st_size;
    en.allocated = S_ISDIR(st.st_mode) ? 0 : static_cast<std::int64_t>(st.st_blocks) * 512;
    en.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    en.uid = st.st_uid;
    out.emplace(name, std::move(en));
  }
  ::closedir(d);
  return out;
}

ShmDiff diff_shm(const ShmTable& before, const ShmTable& after) {
  ShmDiff d;
  auto b = before.begin();
  auto a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      d.removed.push_back(b->second);
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      d.added.push_back(a->second);
      ++a;
    } else {
      if (a->second.bytes != b->second.bytes) d.resized.push_back(a->second);
      ++a;
      ++b;
    }
  }
  return d;
}

}  // namespace aftermath
