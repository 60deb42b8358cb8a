// Mapping an agent's monotonic clock onto the coordinator's, as NTP does:
// the coordinator sends a ping at t0 (its clock), the agent stamps it with
// its own clock ta, the answer arrives at t1. If the two legs took the same
// time, ta happened at (t0 + t1) / 2 on the coordinator's clock, so
//   offset = ta - (t0 + t1) / 2        (agent clock minus coordinator clock)
// and whatever the legs took, the true offset lies within ± (t1 - t0) / 2
// of it. Of several exchanges the one with the shortest round trip gives
// the tightest bound.
#pragma once

#include <optional>
#include <vector>

#include "harness/os/clock.h"

namespace aftermath {

struct ClockSample {
  Nanos sent = 0;      // t0, coordinator clock
  Nanos agent = 0;     // ta, agent clock
  Nanos received = 0;  // t1, coordinator clock
};

struct ClockOffset {
  Nanos offset = 0;       // agent clock minus coordinator clock
  Nanos uncertainty = 0;  // the true offset is within offset ± uncertainty
  Nanos round_trip = 0;   // of the sample it came from
  int samples = 0;        // exchanges it was chosen from
};

// The estimate from the sample with the shortest round trip; nullopt for no
// usable sample (none, or one that arrived before it was sent).
std::optional<ClockOffset> estimate_offset(const std::vector<ClockSample>& samples);

// An agent's time on the coordinator's clock.
inline Nanos to_coordinator(Nanos agent_time, const ClockOffset& c) {
  return agent_time - c.offset;
}

}  // namespace aftermath
