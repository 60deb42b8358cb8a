// The kernel's log, from now on: /dev/kmsg opened at its end, read without
// blocking. Used to attach the kernel's own words to what a fault caused
// ("Memory cgroup out of memory: Killed process 4242 (python3) total-vm:...").
// Reading it takes root (or CAP_SYSLOG) where dmesg_restrict is set; where it
// cannot be opened, open() says why and nothing is attached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/os/pidfd.h"

namespace aftermath {

struct KmsgRecord {
  std::uint64_t seq = 0;
  std::uint64_t usec = 0;  // CLOCK_MONOTONIC microseconds when the kernel logged it
  int level = 0;           // syslog priority (0 emerg .. 7 debug)
  std::string message;     // the first line, without the "key=value" continuation lines
};

// One /dev/kmsg record: "prio,seq,usec,flags[,...];message\n[ KEY=value\n]...".
std::optional<KmsgRecord> parse_kmsg_record(std::string_view text);

// The OOM killer's line about `pid` among `records` ("... Killed process
// <pid> (...)"), the latest one; nullopt if there is none.
std::optional<std::string> oom_kill_message(const std::vector<KmsgRecord>& records, int pid);

class KmsgTail {
 public:
  // Opens `path` at its end. Empty on success, else why not.
  std::string open(const std::string& path = "/dev/kmsg");
  bool is_open() const { return static_cast<bool>(fd_); }
  // Every record logged since the last drain (or the open).
  std::vector<KmsgRecord> drain();

 private:
  UniqueFd fd_;
};

}  // namespace aftermath
