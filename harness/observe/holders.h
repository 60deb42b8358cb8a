// Who holds what: open files (/proc/PID/fd links) and mapped files
// (/proc/PID/maps), like `fuser -v`. Used for device files (/dev/nvidia*) and
// /dev/shm entries. The scanners take a proc root so tests can point them at a
// fake tree; which paths count is a pattern, so a test can plant a regular file
// and hold it open in a real child. parse_maps_paths takes file contents.
//
// Reading another user's fd or maps needs ptrace access: as non-root, other
// users' processes are counted as unreadable, never silently taken as clean.
#pragma once

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/device.h"
#include "harness/observe/process_index.h"
#include "harness/os/expected.h"

namespace aftermath {

// Matches a path: a glob (fnmatch(3); '*' also crosses '/'), or, with the
// prefix "re:", an ECMAScript regex searched in the path.
class PathPattern {
 public:
  // An error when the regex does not compile.
  static Expected<PathPattern> parse(std::string_view spec);
  // Matches every path strictly under `dir` (no pattern characters involved).
  static PathPattern under_dir(std::string_view dir);
  bool matches(std::string_view path) const;
  // What every match starts with (the glob up to its first wildcard, the
  // folder and its slash; nothing for a regex): a scan rejects the sockets,
  // pipes and files of a machine's fds on it without building a path.
  const std::string& literal_prefix() const { return prefix_; }
  const std::string& spec() const { return spec_; }

 private:
  std::string spec_;
  std::string prefix_;
  std::string glob_;
  std::string dir_;  // under_dir
  std::optional<std::regex> regex_;
};

// The default device pattern.
inline constexpr std::string_view kNvidiaDevicePattern = "/dev/nvidia*";

// A link target of /proc/PID/fd/N without the kernel's " (deleted)" suffix.
struct FileRef {
  std::string path;
  bool deleted = false;
};

// Per process (proc-root pid), the distinct fd link targets that match.
// Processes whose fd folder or fd links cannot be read add to *unreadable
// (and their pids to *unreadable_pids).
std::map<int, std::vector<FileRef>> scan_open_files(const std::string& proc_root,
                                                    const PathPattern& pattern,
                                                    int* unreadable = nullptr,
                                                    std::set<int>* unreadable_pids = nullptr);

// The path of one /proc/PID/maps line (after address, perms, offset, dev and
// inode; it may hold spaces), or empty for an anonymous mapping.
std::string_view maps_line_path(std::string_view line);

// Paths mapped in /proc/PID/maps contents that lie under `dir` ("/dev/shm"),
// distinct, in order of appearance.
std::vector<FileRef> parse_maps_paths(std::string_view contents, std::string_view dir);

// Per process, the distinct mapped files under `dir`. Processes whose maps
// cannot be read add to *unreadable (and their pids to *unreadable_pids).
std::map<int, std::vector<FileRef>> scan_mapped_files(const std::string& proc_root,
                                                      std::string_view dir,
                                                      int* unreadable = nullptr,
                                                      std::set<int>* unreadable_pids = nullptr);

// Every process holding a device file matching `pattern`, marked against the
// job: in_job, orphan (its parent is in job.orphan_parents), zombie.
std::vector<DeviceHolder> find_device_holders(const ProcessIndex& procs,
                                              const std::string& proc_root,
                                              const PathPattern& pattern, const JobRef& job,
                                              int* unreadable = nullptr);

}  // namespace aftermath
