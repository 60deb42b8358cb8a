// The one list of checks: each check's name, whether it runs by default, the
// parameters it takes and how they are read (with file:line:field errors).
// The scenario parser asks it through CheckCatalog (scenario/check_catalog.h),
// so a scenario's `checks:` map is parsed into typed parameters
// (check_params.h) exactly once, when the scenario is loaded.
#pragma once

#include <string>
#include <vector>

#include "harness/scenario/check_catalog.h"

namespace aftermath {

// The registry as the scenario parser sees it. Immutable; thread-safe.
const CheckCatalog& check_registry();

// The names of every known check, in report order.
const std::vector<std::string>& known_checks();
// The default-enabled ones (all_exited, no_orphans, no_zombies, shm_clean, tmp_clean, job_exit,
// no_hang, the three device checks, which skip with the reason where there is no GPU, and
// tests_clean, which runs only when the job reported pytest tests);
// the others (data_partition, collectives_matched, memory_growth) run only when
// a scenario names them under checks:.
const std::vector<std::string>& default_checks();

}  // namespace aftermath
