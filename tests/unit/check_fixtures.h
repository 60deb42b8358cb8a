// Shared by the tests of the opt-in checks (data_checks, memory_checks): a
// scenario with every known check configured, and milliseconds on the
// timeline.
#pragma once

#include "harness/check/registry.h"
#include "harness/core/types.h"
#include "harness/scenario/scenario.h"
#include "tests/support/units.h"

namespace aftermath::testing_checks {

using testing_units::msec;

inline Scenario every_check_scenario() {
  Scenario sc;
  sc.name = "unit";
  sc.file = "<unit test>";
  for (const auto& name : known_checks()) sc.checks[name] = CheckConfig{};
  return sc;
}

}  // namespace aftermath::testing_checks
