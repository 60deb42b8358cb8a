// Command lines a user can paste back into a shell (the repro line, the
// command line in result.json).
#pragma once

#include <string>

namespace aftermath {

// `arg` as one word for a POSIX shell: unchanged when it holds only
// characters no shell treats specially (letters, digits, _-./=:,+@%),
// otherwise in single quotes (a ' inside written '\''). "" becomes ''.
std::string shell_quote(const std::string& arg);

}  // namespace aftermath
