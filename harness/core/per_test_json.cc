#include "harness/core/per_test_json.h"

namespace aftermath {

nlohmann::json to_json(const TestLeak& l) {
  nlohmann::json j{{"kind", std::string(to_string(l.kind))}, {"what", l.what}};
  if (l.kind == LeakKind::Shm || l.kind == LeakKind::Device) {
    j["name"] = l.name;
    j["bytes"] = l.bytes;
  }
  if (l.kind != LeakKind::Shm) j["pid"] = l.pid;
  return j;
}

}  // namespace aftermath
