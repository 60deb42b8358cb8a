#include "harness/observe/shm.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace aftermath {

namespace {
ShmEntry entry_of(std::string name, const struct stat& st) {
  ShmEntry en;
  en.name = std::move(name);
  en.bytes = S_ISDIR(st.st_mode) ? 0 : st.st_size;
  en.allocated = S_ISDIR(st.st_mode) ? 0 : static_cast<std::int64_t>(st.st_blocks) * 512;
  en.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  en.uid = st.st_uid;
  return en;
}
}  // namespace

ShmTable scan_shm(const std::string& dir) { return read_shm(dir).value_or({}); }

Expected<ShmTable> read_shm(const std::string& dir) {
  ShmTable out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return sys_error("cannot open " + dir);
  int dfd = ::dirfd(d);
  while (dirent* e = ::readdir(d)) {
    std::string name(e->d_name);
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    out.emplace(name, entry_of(name, st));
  }
  ::closedir(d);
  return out;
}

std::optional<ShmEntry> stat_shm(const std::string& dir, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return std::nullopt;
  struct stat st;
  if (::fstatat(AT_FDCWD, (dir + "/" + name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return std::nullopt;
  return entry_of(name, st);
}

ShmWatch::~ShmWatch() { stop(); }

void ShmWatch::stop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = wd_ = -1;
}

bool ShmWatch::watch(const std::string& dir) {
  stop();
  dir_ = dir;
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return false;
  // Sizes change through ftruncate/fallocate/write (IN_MODIFY); stores through
  // a mapping change no size.
  wd_ = ::inotify_add_watch(fd_, dir.c_str(),
                            IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY |
                                IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
  if (wd_ < 0) {
    stop();
    return false;
  }
  return true;
}

bool ShmWatch::poll(std::set<std::string>* changed) {
  if (wd_ < 0) return false;
  alignas(inotify_event) char buf[16384];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ok;  // EAGAIN: drained
    }
    if (n == 0) return ok;
    for (ssize_t i = 0; i < n;) {
      auto* ev = reinterpret_cast<const inotify_event*>(buf + i);
      i += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if (ev->mask & IN_Q_OVERFLOW) ok = false;
      if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
        stop();  // the directory is gone: scans from now on
        return false;
      }
      if (ev->len > 0 && ev->name[0]) changed->insert(ev->name);
    }
  }
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
