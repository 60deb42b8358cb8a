#include "harness/core/fields_json.h"

namespace aftermath {

using nlohmann::json;

json to_json(const Outcome& outcome) {
  json j;
  if (outcome.is_exited()) {
    j = {{"kind", "exited"}, {"code", outcome.exit_code()}};
  } else {
    j = {{"kind", "killed"},
         {"signal", signal_name(outcome.signal())},
         {"signo", outcome.signal()},
         {"core_dumped", outcome.core_dumped()}};
  }
  j["text"] = outcome.to_string();
  return j;
}

namespace fields_json {

json parse_or_text(const std::string& text) {
  if (text.empty()) return json::object();
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(text) : j;
}

}  // namespace fields_json
}  // namespace aftermath
