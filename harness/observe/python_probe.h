// The facts of the Python a job runs (core/python_facts.h), read from the
// interpreter itself: one run of `PYTHON -c ...` that imports torch and
// prints what it finds, with a deadline, cached per interpreter path for the
// life of the process (importing torch costs a second or two).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/python_facts.h"

namespace aftermath {

// The Python a job's command runs, when that can be told from the command
// alone: argv[0] itself when its file name starts with "python" (python3,
// python3.11, a venv's bin/python); else the interpreter of argv[0]'s "#!"
// line when that names a Python (torchrun, pytest and other console scripts
// of a venv, `#!/usr/bin/env python3` resolved on PATH). nullopt otherwise.
std::optional<std::string> job_python(const std::vector<std::string>& argv);

// Probes `interpreter` (a path or a name on PATH). Never fails: a probe that
// cannot run, times out or prints nothing gives default_python_facts() with
// `interpreter` set and `probe_error` saying why; a Python without torch
// gives its version and `torch_error`. Thread-safe; cached per path.
PythonFacts probe_python(const std::string& interpreter);

// The facts to judge a job by: its own Python's (job_python) when it runs
// one, else `fallback`'s (the run's --python) when given, else the defaults.
PythonFacts facts_for_job(const std::vector<std::string>& argv, const std::string& fallback);

}  // namespace aftermath
