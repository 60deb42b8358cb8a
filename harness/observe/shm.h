// /dev/shm as a set of named entries. The scanner takes a directory so tests
// use a temporary folder; diff_shm is pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/os/expected.h"

namespace aftermath {

struct ShmEntry {
  std::string name;
  std::int64_t bytes = 0;      // st_size
  std::int64_t allocated = 0;  // st_blocks * 512: what it really costs
  std::int64_t mtime_ns = 0;
  unsigned uid = 0;
};

using ShmTable = std::map<std::string, ShmEntry>;

// Lists regular files (and sockets/fifos: anything but . and ..) in `dir`.
// Subdirectories (torch-shm-dir-*) are listed by name with bytes 0. An error
// when `dir` cannot be opened.
Expected<ShmTable> read_shm(const std::string& dir);
// read_shm, with an unreadable `dir` read as empty.
ShmTable scan_shm(const std::string& dir);

// One entry of `dir` by name, as scan_shm would list it; nullopt if absent.
std::optional<ShmEntry> stat_shm(const std::string& dir, const std::string& name);

// Changes to a /dev/shm directory through inotify, so that an idle check reads
// nothing. Entries created, removed, renamed, truncated or written are
// reported by name; a caller re-stats those (stat_shm) instead of rescanning.
// Where inotify is unavailable, or its queue overflowed, or the directory went
// away, poll() asks for a full scan. Not thread-safe; one owner.
class ShmWatch {
 public:
  ShmWatch() = default;
  ~ShmWatch();
  ShmWatch(const ShmWatch&) = delete;
  ShmWatch& operator=(const ShmWatch&) = delete;

  // Starts watching `dir` (stopping any previous watch). False if inotify
  // cannot watch it: every poll() then asks for a scan.
  bool watch(const std::string& dir);
  const std::string& dir() const { return dir_; }
  bool active() const { return wd_ >= 0; }
  int fd() const { return fd_; }  // readable when poll() has names to give (-1: none)

  // Adds the names changed since the last call to *changed, without blocking.
  // False when the caller must scan the whole directory instead (no watch,
  // events lost, the directory removed or unmounted).
  [[nodiscard]] bool poll(std::set<std::string>* changed);

 private:
  void stop();
  int fd_ = -1;
  int wd_ = -1;
  std::string dir_;
};

struct ShmDiff {
  std::vector<ShmEntry> added;
  std::vector<ShmEntry> removed;
  std::vector<ShmEntry> resized;  // the new entry
};
ShmDiff diff_shm(const ShmTable& before, const ShmTable& after);

}  // namespace aftermath
