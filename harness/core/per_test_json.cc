#include "harness/core/per_test_json.h"

namespace aftermath {

nlohmann::json to_json(const TestLeak& l) {
  nlohmann::json j{{"kind", l.kind}, {"what", l.what}};
  if (l.kind == "shm" || l.kind == "device") {
    j["name"] = l.name;
    j["bytes"] = l.bytes;
  }
  if (l.kind != "shm") j["pid"] = l.pid;
  return j;
}

}  // namespace aftermath
