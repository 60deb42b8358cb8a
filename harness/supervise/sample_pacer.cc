#include "harness/supervise/sample_pacer.h"

#include <algorithm>

namespace aftermath {

std::optional<Nanos> SamplePacer::took(Nanos took) {
  avg_ = avg_ < 0 ? took : (3 * avg_ + took) / 4;
  if (2 * avg_ > period_ && period_ < kMaxPeriod) {
    period_ = std::min(kMaxPeriod, 2 * period_);
    return period_;
  }
  if (8 * avg_ < period_ && period_ > base_) {
    period_ = std::max(base_, period_ / 2);
    return period_;
  }
  return std::nullopt;
}

}  // namespace aftermath
