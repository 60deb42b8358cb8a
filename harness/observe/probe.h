// The allocation probe: can a new process still use each GPU? For each GPU a
// short-lived child (aftermath-probe) selects the device, allocates one byte
// and reads free/total memory, and prints one JSON line per GPU. A child, not
// the harness: a wedged driver can hang a CUDA call forever, and only a
// process we can kill keeps the harness alive. Every child has a deadline;
// past it the child is SIGKILLed (by pidfd) and its GPU reported timed out.
//
// Each GPU gets its own child, run in parallel, with CUDA_VISIBLE_DEVICES set
// to that GPU's UUID, so the answer is about exactly that NVML device (no
// ordinal mapping to get wrong) and one hung GPU cannot hide the others.
// Without NVML (no UUIDs known) one child probes every GPU CUDA sees.
//
// The runner reaps its own children with waitpid(pid): do not run it while
// another part of the process reaps with waitpid(-1).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/device.h"
#include "harness/core/types.h"

namespace aftermath {

// How to start the probe: argv as is (tests put /bin/sleep or a shell here).
struct ProbeCommand {
  std::vector<std::string> argv;
  Nanos deadline = 20 * kSecond;  // per child, from its start to its exit
  Nanos kill_wait = 2 * kSecond;  // after SIGKILL, how long to wait for it to die
};

class ProbeRunner {
 public:
  virtual ~ProbeRunner() = default;
  // Probes `gpus`, one child each (empty: one child for every GPU CUDA sees).
  // Never throws; every failure is in the report.
  virtual ProbeReport run(const std::vector<GpuInfo>& gpus) = 0;
};

class ProcessProbeRunner final : public ProbeRunner {
 public:
  explicit ProcessProbeRunner(ProbeCommand command) : command_(std::move(command)) {}
  ProbeReport run(const std::vector<GpuInfo>& gpus) override;

 private:
  ProbeCommand command_;
};

// One line of probe output; nullopt when it is not one (not JSON, no status).
std::optional<GpuProbe> parse_probe_line(std::string_view line);

// The default probe command: `dir`/aftermath-probe, or $AFTERMATH_PROBE when set.
ProbeCommand default_probe_command(const std::string& bin_dir);

}  // namespace aftermath
