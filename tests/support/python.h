// The interpreter a test's Python runs on unless the test is about another:
// the project's venv (scripts/venv.sh, PyTorch 2.x), as the CLI's default.
#pragma once

#include <string>

namespace aftermath::testing {

inline std::string default_python() {
#ifdef AFTERMATH_DEFAULT_PYTHON
  return AFTERMATH_DEFAULT_PYTHON;
#else
  return "/usr/bin/python3";
#endif
}

}  // namespace aftermath::testing
