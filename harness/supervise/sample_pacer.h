// The sampler's period: the scenario's `sample_interval`, stretched when
// samples grow expensive (a job of a thousand processes, a loaded machine)
// so that sampling never falls behind its own timer nor takes over a core,
// and brought back once they are cheap again.
//
// The cost it weighs is a moving average of the samples' durations (a
// quarter weight each), so one slow sample (the periodic full walk) does not
// move the period, a run of them does: above half the period it doubles (up
// to a second), below an eighth it halves (down to the scenario's). Every
// change is returned for the timeline.
#pragma once

#include <optional>

#include "harness/core/types.h"

namespace aftermath {

class SamplePacer {
 public:
  static constexpr Nanos kMaxPeriod = kSecond;

  explicit SamplePacer(Nanos base) : base_(base), period_(base) {}
  Nanos period() const { return period_; }
  Nanos base() const { return base_; }
  // A sample took `took`: the new period if it changes, else nullopt.
  std::optional<Nanos> took(Nanos took);

 private:
  Nanos base_;
  Nanos period_;
  Nanos avg_ = -1;  // moving average of the samples' durations (-1: none yet)
};

}  // namespace aftermath
