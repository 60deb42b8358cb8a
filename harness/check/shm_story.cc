#include "harness/check/shm_story.h"

#include <utility>

namespace aftermath {

ShmStory shm_story(const Timeline& tl) {
  ShmStory s;
  std::map<std::string, std::int64_t> extra;
  for (const auto& o : tl.observations) {
    switch (o.kind) {
      case ObsKind::ShmAdd:
        if (!o.baseline) {
          extra[o.name] = o.value;
          ++s.created;
          s.back_to_baseline.reset();
        }
        break;
      case ObsKind::ShmResize:
        if (extra.count(o.name)) extra[o.name] = o.value;
        break;
      case ObsKind::ShmRemove:
        if (extra.erase(o.name) && extra.empty()) s.back_to_baseline = o.t;
        break;
      case ObsKind::HarnessFailure:
        if (harness_failed(o, HarnessPart::ShmDir)) s.unavailable = true;
        break;
      default:
        break;
    }
  }
  s.leaked = std::move(extra);
  return s;
}

}  // namespace aftermath
