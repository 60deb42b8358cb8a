// The supervisor: launches a scenario's job contained, watches it on one event
// loop, tears it down, and returns the timeline of what it saw.
//
// Containment. The job runs under aftermath-reaper (reaper_protocol.h): pid 1
// of a new PID namespace where the kernel allows it (root, or an unprivileged
// user namespace), else a child subreaper. Either way every orphan of the job
// is re-parented to the reaper, so "the job" is exactly the reaper's
// descendants: a double-forked, setsid() daemon is still found. With a PID
// namespace the job cannot outlive the supervisor: if the supervisor is
// SIGKILLed, the reaper dies by its parent-death signal / lifeline, and the
// kernel kills the namespace. Without one, the report says so.
//
// Observation. /proc and /dev/shm are sampled every sample_interval; exits
// are taken from pidfds as they happen (no polling lag), exit statuses from
// the reaper, which reaps every orphan.
//
// Teardown, at the job's end (after the settle period) or its deadline:
// SIGTERM (+SIGCONT for stopped ones) to every live job process, deepest
// first; SIGKILL after timeouts.teardown; then the reaper ends, and a last
// scan proves nothing of the job is left. /dev/shm entries the job created and
// left are recorded, then removed unless keep_leaks; so is the PyTorch and
// multiprocessing residue it left in its temp dir (tmp_watch.h), which is
// observed, the job's environment untouched. Only processes of the job are
// ever signalled, and only through pidfds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/inject/fault_driver.h"
#include "harness/observe/device_sources.h"
#include "harness/os/expected.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

// A fault of this node's run to fire now, triggered on node `node` by the
// point `point` (its hit `hit`): see SupervisorOptions::remote_fires.
struct RemoteFireRequest {
  size_t fault = 0;
  int node = -1;
  std::string point;
  long long hit = 0;
};

struct LiveStatus {
  Nanos elapsed = 0;
  int processes = 0;
  std::string phase;
  int run = 1, runs = 1;  // which of --repeat N runs this is (the runner fills these in)
};

// How the job is contained and what becomes of what it leaves: from the
// command line (RunOptions) to the supervisor as it is.
struct Containment {
  std::string reaper_path;    // aftermath-reaper
  std::string mode = "auto";  // auto | pidns | subreaper
  // auto | private | host. private: the job gets its own tmpfs at /dev/shm (in
  // its own mount namespace), so parallel runs never mix their segments and
  // leaks vanish with the job; host: the machine's /dev/shm, where entries
  // that appear during the run are attributed to the job by time alone.
  std::string shm = "auto";
  bool keep_leaks = false;  // leave leaked /dev/shm entries and temp-dir residue in place
  // The signals aftermath's caller left ignored (bit sig-1), for a job that
  // inherits them (Job::inherit_ignored_signals; else every signal starts at
  // its default); nullopt: this process's ignored signals at the launch.
  std::optional<std::uint64_t> ignored_signals;

  // The folder of aftermath's own programs: the reaper's (the probe, the
  // fault tools and a py-spy installed beside it live there).
  std::string tools_dir() const;
};

// A multi-node agent's hooks into its node's run (null outside one): from
// the agent (RunOptions) to the supervisor as they are.
struct NodeHooks {
  // Called with every observation as it is recorded (a multi-node agent
  // streams them to its coordinator); on the supervisor's loop, so quick.
  std::function<void(const Observation&)> on_observation;
  // no_hang's stall rule across the nodes of a multi-node run: progress on
  // any node is progress on every node, so a node that waits on a slower one
  // is not hung while that one moves. `on_progress` is called whenever this
  // node's job makes progress (often: rate-limit it); `remote_progress`, at
  // every sample, says whether another node made progress since its last call.
  std::function<void()> on_progress;
  std::function<bool()> remote_progress;
  // A fault triggered on one node and owned by another: `on_remote_trigger`
  // when a point here matched another node's fault (Scenario::
  // remote_triggers; its index in the whole scenario); `remote_fires`, at
  // every sample, this node's faults (its own indices) that a point on
  // another node triggered since its last call.
  std::function<void(size_t fault, const std::string& point, long long hit)> on_remote_trigger;
  std::function<std::vector<RemoteFireRequest>()> remote_fires;
};

struct SupervisorOptions {
  Containment contain;
  std::string out_dir;  // this scenario's folder: stdout.log, stderr.log
  std::string proc_root = "/proc";
  std::string shm_dir = "/dev/shm";
  // The device side (null nvml: no GPU observation). NVML is sampled every
  // device_interval from before the launch until the memory is back at its
  // baseline after teardown (or device_memory_released's deadline); the
  // holder scan and the allocation probe run once after teardown.
  DeviceSources devices;
  Nanos device_interval = 200 * kMilli;
  // What the faults act with (tools_dir empty: the reaper's folder).
  InjectTools inject;
  std::function<void(const LiveStatus&)> on_status;  // called at most every 200 ms
  NodeHooks node;
  // The job's Python and PyTorch (observe/python_probe.h): recorded in the
  // timeline's facts for the checks; the settle's quiet period follows its
  // DataLoader watchdog period.
  PythonFacts python = default_python_facts();
  // Set from a signal handler to stop the run early (teardown still happens).
  const volatile bool* interrupted = nullptr;
};

// The signals this process has set to SIG_IGN (bit sig-1). The CLI takes it
// first thing, before it ignores SIGPIPE itself, so that the job starts with
// what the user's shell gave it.
std::uint64_t ignored_signals_now();

// Runs one scenario's job to the end. Blocking; single-threaded. The error:
// the job could not be started (the reaper could not be run, the event socket
// not opened). A job whose exec fails is not this: it exited 127 and is
// reported as such.
Expected<Timeline> supervise(const Scenario& scenario, const SupervisorOptions& options);

}  // namespace aftermath
