// The story of /dev/shm over a run, read off the timeline: what the job
// created, what it left, and when the extra entries were last all gone.
// Shared by shm_clean and the recovery timings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "harness/core/timeline.h"

namespace aftermath {

// The /dev/shm entries the job created and left: added (not baseline) and
// never removed before the harness reclaimed them or the run ended.
struct ShmStory {
  std::map<std::string, std::int64_t> leaked;  // name -> bytes
  int created = 0;
  std::optional<Nanos> back_to_baseline;  // last time the extra set became empty
  bool unavailable = false;
};

ShmStory shm_story(const Timeline& tl);

}  // namespace aftermath
