// What a pytest test left behind, as JSON: one shape wherever it is written
// (tests_clean's measured leaks, result.json's "tests").
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace aftermath {

// {kind, what}, with name and bytes for shm and device leaks, pid for all
// but shm.
nlohmann::json to_json(const TestLeak& l);

}  // namespace aftermath
