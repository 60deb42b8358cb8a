// What the command line names: scenario files, .suite files and folders,
// expanded to scenario files; and where this program lives.
#pragma once

#include <map>
#include <string>
#include <vector>

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

// The variables scenario files may use: AFTERMATH_BIN (bin_dir()).
std::map<std::string, std::string> scenario_vars();

}  // namespace aftermath
