#include "harness/check/shm_story.h"

#include <utility>

namespace aftermath {

ShmStory shm_story(const Timeline& tl) {
  ShmStory s;
  std::map<std::string, std::int64_t> extra;
  for (const auto& o : tl.observations) {
    std::visit(Overloaded{
                   [&](const obs::ShmAdd& a) {
                     if (a.baseline) return;
                     extra[a.name] = a.bytes;
                     ++s.created;
                     s.back_to_baseline.reset();
                   },
                   [&](const obs::ShmResize& r) {
                     if (extra.count(r.name)) extra[r.name] = r.bytes;
                   },
                   [&](const obs::ShmRemove& x) {
                     if (extra.erase(x.name) && extra.empty()) s.back_to_baseline = o.t;
                   },
                   [&](const obs::HarnessFailure& f) {
                     if (f.part == HarnessPart::ShmDir) s.unavailable = true;
                   },
                   [](const auto&) {},
               },
               o.what);
  }
  s.leaked = std::move(extra);
  return s;
}

}  // namespace aftermath
