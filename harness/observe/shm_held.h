// Shared memory a process still maps or holds open: named /dev/shm entries,
// /dev/shm files already unlinked (PyTorch's file_descriptor strategy unlinks
// each segment at once and passes the fd), and memfds. What a surviving or
// orphaned process keeps alive, invisible to a listing of /dev/shm.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aftermath {

struct HeldShm {
  std::string path;      // "/dev/shm/torch_12_34_0", "/memfd:foo"; without " (deleted)"
  bool deleted = false;  // unlinked: only its holders keep it
  bool memfd = false;
  bool mapped = false;     // in /proc/PID/maps
  bool open = false;       // an fd in /proc/PID/fd
  std::int64_t bytes = 0;  // mapped size, else the open file's size
};

// From /proc/PID/maps contents: shared memory mappings, bytes summed per path.
std::vector<HeldShm> parse_maps_shm(std::string_view maps);

// What process `pid` maps and holds, read under proc_root (maps and fd
// links; a file's size by stat through its fd link). Unreadable parts are
// left out.
std::vector<HeldShm> shm_held_by(const std::string& proc_root, int pid);

}  // namespace aftermath
