#include "harness/supervise/job_message.h"

namespace aftermath {

namespace {

std::string str_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long long int_field(const nlohmann::json& j, const char* key, long long def) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : def;
}

}  // namespace

JobMessage parse_job_message(std::string_view text) {
  JobMessage m;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return m;
  m.type = str_field(j, "t");
  m.name = str_field(j, "name");
  m.role = parse_role(str_field(j, "role")).value_or(Role::Unknown);
  m.rank = static_cast<int>(int_field(j, "rank", -1));
  m.worker = static_cast<int>(int_field(j, "worker", -1));
  m.hit = int_field(j, "hit", 0);
  if (j.contains("labels")) m.labels = j["labels"];
  if (j.contains("fields")) m.fields = j["fields"].dump();
  return m;
}

}  // namespace aftermath
