// One run made on several Python interpreters (`aftermath run --python A
// --python B ...`): each interpreter's run has its own reports in a folder of
// its own; versions.md and versions.json put them side by side, a column per
// PyTorch version, so that "did the upgrade change our shutdown path?" is
// one table: each scenario's verdict and failed checks, its orphans (how many,
// the longest lifetime), how long torch_shm_manager and other helpers
// lingered, the time until every process was gone and /dev/shm was back, and
// the top process's exit, with the rows whose verdict or failed checks
// differ marked. `aftermath diff A/result.json B/result.json` gives every
// check and timing of two columns.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/python_facts.h"
#include "harness/core/result.h"
#include "harness/os/expected.h"

namespace aftermath {

// One interpreter's part of the run.
struct VersionRun {
  PythonFacts facts;
  std::string dir;          // its folder under --out ("torch-2.13.0-cpu")
  std::string result_path;  // its result.json
};

// The side-by-side document (versions.json) from each part's facts and its
// run, as its result.json reads (nullopt: the part did not finish; its cells
// say so). A scenario's repeated runs (--repeat N) are a row each. Pure.
nlohmann::json versions_json(const std::vector<VersionRun>& runs,
                             const std::vector<std::optional<RunResult>>& results);

// versions.md from versions_json's document. Pure.
std::string render_versions_md(const nlohmann::json& versions);

// Reads each part's result.json (reports/result_read.h; one that does not
// read is a part that did not finish), writes versions.json and versions.md
// under `out`; gives the Markdown (for the console), or why a file could not be
// written.
Expected<std::string> write_versions(const std::vector<VersionRun>& runs, const std::string& out);

}  // namespace aftermath
