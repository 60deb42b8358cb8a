// Finding a program on $PATH the way execvp() does, so the harness runs what
// a shell would run for the same name.
#pragma once

#include <optional>
#include <string>

namespace aftermath {

// The first `dir/name` that is a regular, executable file, for dir in $PATH
// (when unset, /usr/local/bin:/usr/bin:/bin) and then in `extra_dirs`
// (colon-separated). An empty entry is the current directory, as POSIX says.
// The path as found (relative where the entry was); nullopt when none is.
std::optional<std::string> find_program(const std::string& name,
                                        const std::string& extra_dirs = "");

// Whether `path` is a regular file this process may execute.
bool is_executable_file(const std::string& path);

}  // namespace aftermath
