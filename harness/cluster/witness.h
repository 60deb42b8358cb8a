// What is left of a node's job once its agent is gone. The coordinator, which
// alone sees an agent die, starts `aftermath witness` on that node through
// Slurm with every job process the agent had reported alive (pid and start
// time: a pid the kernel gave to another process since is not the job's).
// The witness waits up to the grace for them to go, names the survivors, and
// SIGKILLs them so that the run leaves nothing behind; it writes its report
// as one JSON object on stdout.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/os/clock.h"
#include "harness/os/expected.h"

namespace aftermath {

struct WitnessProcess {
  int pid = 0;
  std::uint64_t start_ticks = 0;  // /proc/PID/stat's starttime when it was seen
  std::string role;               // as the agent knew it (for the report)
};

struct WitnessSurvivor {
  WitnessProcess process;
  std::string comm;
  char state = '?';
  int ppid = 0;
  bool killed = false;  // the witness's SIGKILL reached it, and it went
};

struct WitnessReport {
  int checked = 0;                         // processes asked about
  std::vector<WitnessSurvivor> survivors;  // still there after the grace
  Nanos waited = 0;  // from the witness's start until none was left, or the grace
  std::string host;
};

// Waits until none of `procs` is alive (pid with the same start time, a
// zombie included) or `grace` passed, then SIGKILLs the survivors by pidfd
// (each checked again once the pidfd is held) and waits up to 5 s for them.
WitnessReport witness(const std::vector<WitnessProcess>& procs, Nanos grace,
                      const std::string& proc_root = "/proc");

// "PID:TICKS[:ROLE]" (the witness's --proc) and back.
std::string witness_arg(const WitnessProcess& p);
Expected<WitnessProcess> parse_witness_arg(const std::string& text);

// `aftermath witness --proc ... --grace D`: the report on stdout; 0, or 2
// with the reason on stderr for a bad argument.
int cmd_witness(const std::vector<std::string>& procs, const std::string& grace);

nlohmann::json to_json(const WitnessReport& r);
Expected<WitnessReport> witness_report_from(const nlohmann::json& j);

}  // namespace aftermath
