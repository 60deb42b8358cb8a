// Reading recorded observations back in tests: every payload of one kind,
// each with the time it was seen.
#pragma once

#include <vector>

#include "harness/core/observation.h"

namespace aftermath::testing {

// A payload of kind P with its observation's time: s.name, s.t.
template <typename P>
struct Seen : P {
  Nanos t = 0;
};

template <typename P>
std::vector<Seen<P>> all_of(const std::vector<Observation>& seen) {
  std::vector<Seen<P>> out;
  for (const auto& o : seen) {
    if (const P* p = o.as<P>()) {
      Seen<P> s;
      static_cast<P&>(s) = *p;
      s.t = o.t;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace aftermath::testing
