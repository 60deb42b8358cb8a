// Shared by the report renderer tests: the result.json fixtures under
// tests/data/reports/ and small string helpers.
//
// result.json and result-rerun.json are two real runs of the same six
// scenarios (clean-job, orphan-outlives-parent, zombie-unreaped, hang,
// shm-leak, and orphan-unexpected: an orphaning job whose scenario expects a
// clean shutdown, so its verdict is fail). See tests/data/reports/README.md.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "reports/result_read.h"
#include "tests/support/files.h"

#ifndef AFTERMATH_TEST_DATA
#error "AFTERMATH_TEST_DATA must be defined as the absolute path of tests/data"
#endif

namespace aftermath::testing_reports {

inline nlohmann::json load_fixture(const std::string& name = "result.json") {
  std::string path = std::string(AFTERMATH_TEST_DATA) + "/reports/" + name;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// A result.json document as the typed run the renderers take (what
// `aftermath report` reads it into); throws, naming the field, when it does
// not read, so a fixture that drifted fails loudly.
inline RunResult typed(const nlohmann::json& doc) {
  auto run = read_result(doc);
  if (!run) throw std::runtime_error("not a result: " + run.error().what);
  return std::move(*run);
}

using testing::count;

// The fixture's scenario with this name (throws if absent, so a fixture
// change fails loudly instead of testing nothing).
inline nlohmann::json& scenario(nlohmann::json& result, const std::string& name) {
  for (auto& sc : result["scenarios"]) {
    if (sc["name"] == name) return sc;
  }
  throw std::runtime_error("fixture has no scenario " + name);
}

}  // namespace aftermath::testing_reports
