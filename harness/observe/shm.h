// /dev/shm as a set of named entries. The scanner takes a directory so tests
// use a temporary folder; diff_shm is pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aftermath {

struct ShmEntry {
  std::string name;
  std::int64_t bytes = 0;       // st_size
  std::int64_t allocated = 0;   // st_blocks * 512: what it really costs
  std::int64_t mtime_ns = 0;
  unsigned uid = 0;
};

using ShmTable = std::map<std::string, ShmEntry>;

// Lists regular files (and sockets/fifos: anything but . and ..) in `dir`.
// Subdirectories (torch-shm-dir-*) are listed by name with bytes 0.
ShmTable scan_shm(const std::string& dir);

struct ShmDiff {
  std::vector<ShmEntry> added;
  std::vector<ShmEntry> removed;
  std::vector<ShmEntry> resized;  // the new entry
};
ShmDiff diff_shm(const ShmTable& before, const ShmTable& after);

}  // namespace aftermath
