// The job's per-process log files: which ones its processes announced (the
// points clients move an announced process's stdout/stderr to files of its
// own under AFTERMATH_LOG_DIR), and the job's output merged from them for the
// checks and reports.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/core/timeline.h"

namespace aftermath {

// The per-process log files the job's processes reported ("aftermath.logs"
// events; the sender's pid is the kernel's) and that exist, by pid, relative
// to out_dir. Without a PID namespace (containment "subreaper"), a file
// <out_dir>/logs/*-<pid>.out/.err of a job process counts too.
std::map<int, ScenarioResult::ProcessLogs> find_process_logs(
    const Timeline& tl, const std::vector<ProcessHistory>& procs, const std::string& out_dir);

// The job's output as the checks (job_exit's output_regex) and reports
// (stderr tail) read it, now that announced processes write their own files:
// the shared stdout/stderr, then each process's own files (deepest first,
// then by start; the top process last, so a tail ends with what it said),
// kept to the last kJobOutputBytes of each stream.
constexpr std::size_t kJobOutputBytes = 64 * 1024;
void merge_process_output(Timeline& tl, const std::vector<ProcessHistory>& procs,
                          const std::map<int, ScenarioResult::ProcessLogs>& logs,
                          const std::string& out_dir);

}  // namespace aftermath
