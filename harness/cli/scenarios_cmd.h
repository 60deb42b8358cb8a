// `aftermath list` and `aftermath validate`: scenario files read and checked,
// nothing launched.
#pragma once

#include <string>
#include <vector>

namespace aftermath {

// Prints a table of the *.yaml scenarios in `dir` (name, tags, requirements,
// the description's first line); a file that does not parse prints its
// diagnostics on stderr. Returns 0, or 2 when `dir` cannot be read or any
// file is invalid.
int cmd_list(const std::string& dir);

// Parses and validates the scenario files `inputs` name (expand_inputs).
// Prints every problem on stderr and returns 2, or a one-line count and 0.
int cmd_validate(const std::vector<std::string>& inputs);

}  // namespace aftermath
