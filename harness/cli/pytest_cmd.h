// The `pytest` subcommand: a pytest suite run as the job, each test's
// processes and /dev/shm entries attributed to it (tests_clean).
//
//   aftermath pytest [RUN OPTIONS] [--python PYTHON]... -- PYTEST ARGS...
//
// runs `PYTHON -m pytest -p aftermath_pytest PYTEST ARGS...` (PYTHON: the
// run's interpreter, as for `run`: --python, $AFTERMATH_PYTHON, the
// project's venv, python3) exactly as `aftermath run -- ...` would, with the
// folder holding the plugin (fixtures/points/aftermath_pytest.py, copied by
// the build to bin/../python) first on PYTHONPATH. Options as `run`'s for
// -- COMMAND; --python given more than once runs the suite on each.
#pragma once

#include <string>
#include <vector>

#include "harness/cli/run_cmd.h"
#include "harness/os/expected.h"

namespace aftermath {

// The job's command for pytest's arguments: PYTHON -m pytest -p aftermath_pytest ARGS.
std::vector<std::string> pytest_command(const std::string& python,
                                        const std::vector<std::string>& pytest_args);

// The default name of a pytest run: "pytest-" and the last path component of
// its first argument that is not an option and names an existing file or
// folder ("pytest-pytest_leaks" for `-- -n 2 tests/pytest_leaks`), else
// "pytest".
std::string pytest_run_name(const std::vector<std::string>& pytest_args);

// PYTHONPATH for the job: `plugin_dir` first, then what `inherited` held.
std::string pytest_pythonpath(const std::string& plugin_dir, const char* inherited);

// Checks the invocation (pytest's arguments after --; no scenario files, no
// --shard), then runs it as cmd_run does; an error names the option and
// nothing is launched (exit 2). `plugin_dir` must hold aftermath_pytest.py
// and aftermath_points.py.
int cmd_pytest(RunCliOptions options, RunInvocation invocation, const std::string& plugin_dir);

}  // namespace aftermath
