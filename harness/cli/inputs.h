// What the command line names: scenario files, .suite files and folders,
// expanded to scenario files; and where this program lives.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/os/expected.h"

namespace aftermath {

// The scenario files `inputs` name, in order: a folder gives its *.yaml files
// (sorted); a .suite file lists scenario files (or other suites), one per
// line, relative to itself, '#' starting a comment; anything else is taken as
// a scenario file. Each problem (an unreadable suite, a listed file that does
// not exist as "suite:line:1: name: no such scenario file", suites nested more
// than 8 deep) is appended to `errors`; the rest is still expanded.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs,
                                       std::vector<std::string>& errors);

// A program given where a scenario was expected (`run /usr/bin/python3
// train.py`, the `--` forgotten): an executable or a script with #!, not
// named like a scenario (.yaml, .yml, .suite). A scenario file is never
// executed, so its name or its YAML says what it is.
bool looks_like_program(const std::string& path);

// "WORDS[PROGRAM]: a program, not a scenario or suite; did you mean
// `aftermath run -- WORDS[PROGRAM] ...`?", with every word from PROGRAM on.
std::string double_dash_hint(const std::vector<std::string>& words, size_t program);

// This program's path ("aftermath" when /proc/self/exe cannot be read).
std::string self_path();

// The folder this program is in (where aftermath-reaper and aftermath-probe are).
std::string bin_dir();

// The run's Python interpreter, named once: `given` (--python) when not
// empty, else $AFTERMATH_PYTHON, else the project's own venv (the build's
// AFTERMATH_DEFAULT_PYTHON, where it exists), else the `python` beside this
// program (a venv's bin/, where pip put the wheel's entry point), else
// python3 on PATH. A name without a '/' is looked up on PATH; the result is
// an absolute path, or the error names where it came from ("--python
// /nope: not found or not executable").
Expected<std::string> run_python(const std::string& given);

// The variables scenario files may use: AFTERMATH_BIN (bin_dir()),
// AFTERMATH_TRAINER ($AFTERMATH_TRAINER, else bin_dir()'s aftermath-trainer)
// and PYTHON (the run's interpreter, `python`).
std::map<std::string, std::string> scenario_vars(const std::string& python = "");

}  // namespace aftermath
