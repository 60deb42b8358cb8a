// The scenario's `job:` section: the command, its arguments, environment and
// working directory. The one part of scenario parsing that looks at the file
// system: the program is resolved like execvp() would (PATH, or a path
// relative to the scenario's folder) and must be an executable file, and the
// cwd must be a directory, so a typo is a diagnostic, not a failed launch.
#pragma once

#include <filesystem>
#include <string>

#include "harness/scenario/scenario.h"
#include "harness/scenario/yaml_fields.h"

namespace aftermath {

// Absolute and lexically normal, without resolving symlinks: argv[0] keeps the
// name the scenario used (python3 stays python3, not python3.11).
std::string absolute_normal(const std::filesystem::path& p);

// Parses `je` (a map {command, args, env, cwd}) into *job, reporting through
// `r`. Relative paths are taken from `base_dir`. With `check_command` false
// the program and cwd are not looked up (`list` parses without them).
void parse_job(FieldReader& r, const Entry& je, const std::string& base_dir, bool check_command,
               Job* job);

}  // namespace aftermath
