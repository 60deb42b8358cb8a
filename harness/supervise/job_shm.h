// The job's /dev/shm: a baseline before the launch (empty for a private
// tmpfs), every entry added, resized and removed while the job runs, and the
// leftovers after teardown, recorded and then removed (or kept with
// keep_leaks). inotify says which names changed, so an idle sample reads
// nothing and a busy one costs its changes, not the directory's size; a full
// scan where inotify cannot, and as a safety net every 10 s (less often where
// a scan is long: never more than 0.1% of a core).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "harness/core/timeline.h"
#include "harness/observe/shm.h"

namespace aftermath {

class JobShm {
 public:
  // `now`: run time; `record`: where the observations go.
  JobShm(std::function<Nanos()> now, std::function<void(Observation)> record);

  // Before the launch: the machine's /dev/shm (as `dir` shows it) is the
  // baseline. A `dir` that cannot be read (here, or the private one in
  // set_place) is recorded as a HarnessFailure of HarnessPart::ShmDir.
  void take_baseline(const std::string& dir);
  // The reaper said where the job's /dev/shm is: a private tmpfs (seen as
  // /proc/<reaper_pid>/root/dev/shm, baseline empty) or the host's. The
  // baseline entries are recorded (at time 0).
  void set_place(bool private_shm, int reaper_pid);
  // Records what changed since the last look. No-op once finished.
  void sample();
  bool finished() const { return final_; }
  // Bytes in, and count of, entries not in the baseline.
  std::int64_t extra_bytes() const { return extra_; }
  int fresh_entries() const { return fresh_; }
  bool at_baseline() const;
  // After the job: records each entry it left (reclaimed: removed from the
  // host's /dev/shm, or discarded with a private tmpfs), or keeps it
  // (`keep_leaks`: a private one is copied into `keep_dir`). Stops sampling.
  void finish(bool keep_leaks, const std::string& keep_dir);
  const std::string& dir() const { return dir_; }
  // Full scans of the directory so far (the first sample's, the safety
  // net's, and those where inotify could not say what changed).
  int scans() const { return scans_; }
  // The inotify descriptor while the directory is watched (-1: not, and
  // every sample may have to scan): readable when something changed.
  int watch_fd() const { return watch_.active() ? watch_.fd() : -1; }

 private:
  int scans_ = 0;
  std::function<Nanos()> now_;
  std::function<void(Observation)> record_;
  std::string dir_;  // where the job's /dev/shm is seen from here
  bool private_ = false;
  bool final_ = false;  // the leftovers are recorded; scans stop (a private tmpfs vanishes)
  ShmWatch watch_;
  ShmTable baseline_;
  ShmTable now_table_;
  std::int64_t extra_ = 0;  // bytes in entries not in the baseline
  int fresh_ = -1;          // those entries; -1: not counted yet
  Nanos last_scan_ = -1;    // monotonic time of the last full scan (-1: none)
  Nanos scan_cost_ = 0;     // and how long it took
  void recount();           // extra_ and fresh_ from the whole table
};

}  // namespace aftermath
