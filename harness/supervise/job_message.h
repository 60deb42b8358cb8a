// What a job process says over the event socket (AFTERMATH_EVENTS): one JSON
// object per datagram, {"t": "announce" | "event" | "point", ...}. Messages
// are untrusted input: fields are read by type, a wrong or missing one takes
// its default, and nothing throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "harness/core/types.h"

namespace aftermath {

struct JobMessage {
  std::string type;  // "announce", "event", "point" or another word; empty: malformed
  std::string name;  // event, point: its name
  // announce: who it is (role unknown / -1 when not said)
  Role role = Role::Unknown;
  int rank = -1;
  int worker = -1;
  long long hit = 0;  // point: the hit number it reports
  nlohmann::json labels = nlohmann::json::object();  // announce, point
  std::string fields = "{}";  // event: its fields, as JSON text
};

JobMessage parse_job_message(std::string_view text);

}  // namespace aftermath
