// What a parse reported, as a list that is empty when it succeeded, so a test
// can assert on the diagnostics of any parse alike.
#pragma once

#include "harness/scenario/scenario.h"

namespace aftermath {

template <typename T>
const Diagnostics& diagnostics_of(const Expected<T, Diagnostics>& r) {
  static const Diagnostics kNone;
  return r ? kNone : r.error();
}

}  // namespace aftermath
