// The scenario model: what a YAML file under scenarios/ says, parsed and
// validated. A Scenario is only ever built by parse_scenario() (or by the CLI
// for `aftermath run -- CMD`), so every field here already passed validation.
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/python_facts.h"
#include "harness/core/types.h"
#include "harness/os/expected.h"
#include "harness/scenario/diagnostic.h"
#include "harness/scenario/fault.h"

namespace aftermath {

class CheckCatalog;  // harness/scenario/check_catalog.h

struct Job {
  // argv[0] is resolved: an absolute path to an existing executable file.
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to (or replacing) the harness's environment
  std::string cwd;                         // absolute; empty = the harness's cwd
  // The signal dispositions the job starts with. A scenario file's job starts
  // with every signal at its default (`signals: default`): the same
  // experiment whatever shell ran aftermath, where a background job's ignored
  // SIGINT would undo a SIGINT fault or torch's parent-death SIGINT. True
  // (`signals: inherited`; always for `-- COMMAND` and `aftermath pytest`):
  // those aftermath's caller left ignored, as the program would get run
  // without the harness (nohup's SIGHUP, say).
  bool inherit_ignored_signals = false;
};

struct Timeouts {
  Nanos job = 60 * kSecond;  // deadline for the top process; past it: hang, teardown
  // After the top process exits, leftovers are watched until nothing of the
  // job is left (and /dev/shm is back), or nothing has changed for
  // settle_quiet() (core/python_facts.h), or this bound passes; 0: judge right away. 10 s by
  // default: PyTorch's own cleanup runs on its clocks (an orphaned
  // DataLoader worker notices its dead parent within MP_STATUS_CHECK_INTERVAL,
  // 5 s; torch_shm_manager unlinks 2 s after its last client, ~7 s after a
  // killed file_system loader), and a shorter watch blames the harness's
  // teardown on the job.
  Nanos settle = 10 * kSecond;
  Nanos teardown = 2 * kSecond;  // SIGTERM -> SIGKILL bound
};

// One check's configuration. Every known check has an entry after parsing.
struct CheckConfig {
  bool enabled = true;
  std::optional<Nanos> grace;        // per-check override of Scenario::grace
  std::map<Role, Nanos> role_grace;  // per-check, per-role overrides (grace: {helper: 3s})
  // The check's own parameters, typed and validated at parse time by the
  // check layer (harness/check/check_params.h); empty: the check's defaults.
  std::any params;
};

// A grace given as one duration ("500ms": the default for every role not
// named otherwise) or as a map of roles ("{default: 1s, helper: 3s}").
struct GraceSpec {
  std::optional<Nanos> all;
  std::map<Role, Nanos> by_role;
};
// Parses a --grace value; the error says what is wrong with it.
Expected<GraceSpec> parse_grace_text(std::string_view text);

struct Expectation {
  bool expect_pass = true;        // `expect: pass`
  std::set<std::string> failing;  // `expect: {fail: [checks...]}`; non-empty iff !expect_pass
  // `expect: {may_fail: [checks...]}`: checks a known race of the job's own
  // makes fail in some runs only; their result leaves the verdict alone (each
  // is still judged and reported). Never one of `failing`.
  std::set<std::string> may_fail;
  std::string reason;  // optional free text: the bug it reproduces
};

// What a scenario says for the PyTorch releases of one range (`torch:` in
// the file): its checks (the base's, with each check named here replacing
// the base's configuration of that check) and its expectation.
struct TorchVariant {
  TorchRange range;
  std::map<std::string, CheckConfig> checks;
  Expectation expect;
};

struct Scenario {
  std::string name;
  std::string description;
  std::vector<std::string> tags;
  std::vector<std::string> requires_;  // "root", "gpu", "torch", "python-torch", ...
  std::string file;                    // path as given; "<command line>" for `run -- CMD`
  std::string text;                    // the file's raw text (for the repro bundle)
  Job job;
  Timeouts timeouts;
  Nanos grace = 1 * kSecond;  // how long a process may outlive its parent / stay a zombie
  // Per role, over `grace` (`grace: {default: 1s, helper: 3s}`). Without
  // one, no_orphans gives helpers helper_grace() of the job's PyTorch
  // (core/python_facts.h; see CheckInput::grace).
  std::map<Role, Nanos> role_grace;
  Nanos sample_interval = 20 * kMilli;  // /proc and /dev/shm sampling period
  std::map<std::string, CheckConfig> checks;
  Expectation expect;
  // `torch:`: where behaviour differs by PyTorch release, what the scenario
  // checks and expects on each range, in file order (the first range that
  // holds the job's torch applies; none: `checks` and `expect` above).
  std::vector<TorchVariant> torch_variants;
  // Set by for_torch(): the range that applied, empty when none did.
  std::string torch_range;
  std::optional<std::uint64_t> seed;  // `seed:`; the CLI's --seed wins
  std::vector<FaultSpec> faults;      // in firing order
  // `nodes: N`: the job runs on N nodes of a Slurm allocation, one agent per
  // node running that node's part (docs/multinode.md); 1: this machine only.
  int nodes = 1;
  // A node's part of a multi-node scenario only (node_part): the point
  // triggers of faults that belong to another node (`node:N`, `agent:N`,
  // `node: N`), armed here too so that a point reached on this node fires
  // the fault there. Each with the fault's index in the whole scenario.
  std::vector<std::pair<size_t, TriggerSpec>> remote_triggers;
};

// The scenario as it applies to a job on PyTorch `torch` (nullopt: none
// known): the checks and expectation of the first variant whose range holds
// it, torch_range naming that range; else the scenario unchanged.
Scenario for_torch(const Scenario& sc, const std::optional<TorchVersion>& torch);

// The variables a multi-node scenario's job may use, resolved on each node
// when its agent starts the node's part: the head node's host name (node 0,
// where torchrun's rendezvous lives), this node's index, and the node count.
// In a multi-node scenario parsed without values for them (validation, the
// coordinator), they stay as written.
inline constexpr const char* kNodeVars[] = {"AFTERMATH_HEAD", "AFTERMATH_NODE", "AFTERMATH_NODES"};

struct ParseContext {
  std::string file;          // for diagnostics and relative paths
  std::string scenario_dir;  // base for relative commands and cwd; default: dirname(file)
  // Values for ${NAME} in commands, args, env values and cwd. AFTERMATH_BIN is
  // the build's bin dir; SCENARIO_DIR the scenario's folder; PYTHON the run's
  // interpreter (--python). Unknown names fall back to the process
  // environment; still unknown is a diagnostic.
  std::map<std::string, std::string> vars;
  // When false, the command's existence is not checked (used by `list`).
  bool check_command = true;
};

// Every problem a parse found, in file order; never empty as an error.
using Diagnostics = std::vector<Diagnostic>;
// The scenario, or every diagnostic the parse found.
using ParseResult = Expected<Scenario, Diagnostics>;

// Parses and validates one scenario from its text, its checks through
// `checks` (the check layer's registry: harness/check/scenario_load.h has the
// forms callers use). Pure but for the command lookup (PATH / file system)
// when ctx.check_command. Never throws on bad input.
ParseResult parse_scenario(std::string_view text, const ParseContext& ctx,
                           const CheckCatalog& checks);

// Parses one fault given on the command line as a YAML flow map, e.g.
// "{action: SIGKILL, target: launcher, at: {after: 2s}}". `label` names it in
// diagnostics ("--fault 1"). (harness/scenario/fault_parse.cc)
Expected<FaultSpec, Diagnostics> parse_fault_text(std::string_view yaml, const std::string& label);

// Parses checks given on the command line as a YAML flow map, as they stand
// under checks: ("no_orphans: {grace: {helper: 3s}}"), into *checks (left
// unchanged on error). `label` names the option in diagnostics.
Expected<void, Diagnostics> parse_checks_text(std::string_view yaml, const std::string& label,
                                              const CheckCatalog& catalog,
                                              std::map<std::string, CheckConfig>* checks);

// Reads `path` and parses it; a read error becomes a diagnostic.
ParseResult load_scenario(const std::string& path, ParseContext ctx, const CheckCatalog& checks);

// A scenario's name: lower-case letters, digits, '.', '_', '-', starting with
// a letter or digit (it names folders and JUnit suites).
constexpr std::string_view kScenarioNameRule =
    "lower-case letters, digits, '.', '_', '-'; starting with a letter or digit";
bool valid_scenario_name(std::string_view name);

}  // namespace aftermath
