// What a job process says over the event socket (AFTERMATH_EVENTS): one JSON
// object per datagram, {"t": "announce" | "event" | "point" | "test", ...}
// ("test": a test's boundary, answered like a point once the supervisor has
// sampled; its name and fields as an event's). Messages
// are untrusted input: fields are read by type, a wrong or missing one takes
// its default, and nothing throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "harness/core/types.h"

namespace aftermath {

struct JobMessage {
  std::string type;  // "announce", "event", "point", "test" or another word; empty: malformed
  std::string name;  // event, point, test: its name
  // announce: who it is (role unknown / -1 when not said)
  Role role = Role::Unknown;
  int rank = -1;
  int worker = -1;
  long long hit = 0;                                 // point: the hit number it reports
  nlohmann::json labels = nlohmann::json::object();  // announce, point
  std::string fields = "{}";                         // event, test: its fields, as JSON text
};

JobMessage parse_job_message(std::string_view text);

}  // namespace aftermath
