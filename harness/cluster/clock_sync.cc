#include "harness/cluster/clock_sync.h"

namespace aftermath {

std::optional<ClockOffset> estimate_offset(const std::vector<ClockSample>& samples) {
  const ClockSample* best = nullptr;
  int usable = 0;
  for (const auto& s : samples) {
    if (s.received < s.sent) continue;
    ++usable;
    if (!best || s.received - s.sent < best->received - best->sent) best = &s;
  }
  if (!best) return std::nullopt;
  ClockOffset c;
  c.round_trip = best->received - best->sent;
  // (t0 + t1) / 2 without overflow: t0 + (t1 - t0) / 2.
  c.offset = best->agent - (best->sent + c.round_trip / 2);
  c.uncertainty = (c.round_trip + 1) / 2;
  c.samples = usable;
  return c;
}

}  // namespace aftermath
