// Who made each new entry of one directory, as the kernel says it (fanotify's
// create events carry the creating process's pid): the exact answer to
// "whose is this residue" when runs side by side share a temp dir, where
// "new since my launch" and "held by one of mine" are only guesses (a file
// written and closed is held by nobody).
//
// fanotify needs CAP_SYS_ADMIN (and a filesystem that gives file handles:
// ext4, xfs, btrfs, tmpfs do); where the kernel will not say, watch() says
// why and the caller keeps its other evidence. Not thread-safe; one owner.
#pragma once

#include <string>
#include <vector>

#include "harness/os/expected.h"
#include "harness/os/unique_fd.h"

namespace aftermath {

struct CreatedEntry {
  std::string name;  // directly in the watched directory
  int pid = 0;       // the creator (its thread group), in this process's PID namespace; 0: unknown
};

class CreatorWatch {
 public:
  // Starts reporting what is created in `dir` (files, folders, sockets,
  // renames into it; not deeper). An Error when the kernel cannot say.
  Status watch(const std::string& dir);
  bool active() const { return static_cast<bool>(fd_); }
  int fd() const { return fd_.get(); }  // readable when read() has something (-1: none)

  // The creations since the last call, oldest first, without blocking.
  // False when events were lost (the kernel's queue overflowed): what the
  // caller has not been told about is unknown.
  [[nodiscard]] bool read(std::vector<CreatedEntry>* out);

 private:
  UniqueFd fd_;
};

}  // namespace aftermath
