// One problem found in a scenario file (or in a --check / --fault option),
// located by file, line, column and the dotted path of the field.
#pragma once

#include <string>

namespace aftermath {

// line/column are 1-based; 0 = unknown.
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;  // dotted path: "job.command", "checks.job_exit.code", "timeouts.job"
  std::string message;
  // "file:line:column: field: message"
  std::string to_string() const;
};

}  // namespace aftermath
