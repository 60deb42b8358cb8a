#include "harness/core/job_environment.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace aftermath {

namespace {

std::string field_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return {};
}

}  // namespace

std::map<std::string, std::string> job_environment_from(const Timeline& tl) {
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& ev : tl.observations) {
    const auto* e = event_named(ev, "torch_config");
    if (!e) continue;
    auto j = nlohmann::json::parse(e->fields_json, nullptr, false);
    if (!j.is_object()) continue;
    for (const auto& [k, v] : j.items()) {
      std::string text = field_text(v);
      if (text.empty()) continue;
      auto& seen = values[k];
      if (std::find(seen.begin(), seen.end(), text) == seen.end()) seen.push_back(text);
    }
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, seen] : values) {
    std::string joined;
    for (const auto& v : seen) joined += (joined.empty() ? "" : ", ") + v;
    out[k] = joined;
  }
  return out;
}

}  // namespace aftermath
