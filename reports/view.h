// What the renderers share: the typed run's processes as lanes, its log
// paths, its timings in reading order, and the few words and numbers every
// report writes the same way. Every renderer takes the typed RunResult
// (reports/result_read.h reads result.json into one); nothing here decides
// a verdict: the renderers only show what the run says.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/result.h"

namespace aftermath::report {

// "1.8 ms", "1.50 s", "-" for nullopt. Milliseconds below a second keep one
// decimal: the timings are sampled at 20 ms, finer digits would be noise.
std::string format_ms(std::optional<double> ms);
// "0 B", "64.0 KiB", "2.0 MiB".
std::string format_bytes(double bytes);
// A number as JSON would write it, but without a trailing ".0" noise: "1.5", "3".
std::string format_number(double v, int max_decimals = 3);

// pass and xfail are the good verdicts; everything else (fail, xpass, error,
// skipped) is treated as bad, so no other verdict is ever shown as green.
bool verdict_ok(Verdict v);
// fail and error are the statuses that make a check count as failed.
bool check_failed(CheckStatus s);

// The last `n` non-empty lines of `text`, each ending in '\n' ("" for none).
std::string last_lines(std::string_view text, size_t n);

// Display order of roles: launcher, rank, worker, helper, any role this
// version does not know, unknown.
int role_rank(std::string_view role);

// One job process as the timeline draws it.
struct ProcessView {
  const ProcessHistory* history = nullptr;  // the process it shows
  long long pid = 0;
  int ppid = 0, last_ppid = 0;       // its first parent, and its last (re-parented)
  std::optional<long long> job_pid;  // as the job saw it (its PID namespace), when different
  std::string role = "unknown";
  std::string comm;
  std::string cmdline;
  bool top = false;
  std::optional<long long> node;          // a multi-node run: the node it ran on
  std::optional<long long> rank, worker;  // announced by the fixture, when known
  double start_ms = 0;
  std::optional<double> exited_ms, gone_ms, orphaned_ms, zombie_since_ms;
  // When the process stopped running: the earlier of its exit and the first
  // time it was seen a zombie; else when it vanished from /proc; nullopt when
  // it was alive at the end of the timeline.
  std::optional<double> life_end_ms;
  std::string outcome;  // "killed(SIGKILL)", or "" when the harness never learnt it
  // Its own log files (processes[].logs), relative to the scenario's out_dir
  // or absolute; empty when it had none.
  std::string log_stdout, log_stderr;
};

// "17956" or, where the job saw another pid, "17956 (6 in the job)": reports
// show the host's pid; the job's own output and log file names show its own.
std::string pid_text(const ProcessView& p);

// Where a scenario's log file is: a path of the run (stdout_path, a
// process's logs) joined to the scenario's out_dir when relative.
std::string scenario_file(const ScenarioResult& scenario, const std::string& path);

// The href for a log file in a report written to `report_dir`: a relative
// path when the file is inside that folder (so the folder can be moved and
// the links still work), else an absolute file:// URL. Percent-encoded: '#',
// '?', '%' and spaces in a folder name cannot change what the link points at.
std::string log_href(const std::string& path, const std::string& report_dir);

// The scenario's processes grouped by role (role_rank), then by start time
// and pid, so every renderer lists lanes in the same order.
std::vector<ProcessView> processes_by_role(const ScenarioResult& scenario);

// The last instant the scenario's record covers: the latest of every
// timeline time, process time, fault time and total_ms. At least 1 ms so
// scales never divide by zero.
double scenario_end_ms(const ScenarioResult& scenario);
// A named timing of the typed scenario (timings_ms), nullopt when absent or
// not reached.
std::optional<double> timing_ms(const ScenarioResult& scenario, const std::string& key);

// Timing keys in reading order: the documented ones first (job_ms,
// to_all_exited_ms, to_all_gone_ms, to_shm_baseline_ms, teardown_ms,
// total_ms), then any others alphabetically.
std::vector<std::string> timing_keys(const std::map<std::string, std::optional<double>>& timings);

// Why a merged run (`aftermath merge`) is partial: its merge record's
// incomplete sentences when the shards do not make it whole; empty otherwise.
std::vector<std::string> merge_gaps(const RunResult& run);

// The names of the scenario's failed checks (status fail or error), in order.
std::vector<std::string> failed_checks(const ScenarioResult& scenario);

}  // namespace aftermath::report
