// A scenario's `requires:` (harness/scenario/requirements.h) probed on this machine. A scenario whose
// requirements are not met is not launched: its verdict is `skipped`, with
// the first unmet requirement and why ("gpu: no NVIDIA device
// (/dev/nvidiactl absent)"), so the GPU suite on a CPU runner reports what it
// could not do instead of failing or passing.
//
//   root          the harness runs as root (euid 0)
//   pidns         a new PID namespace can be made (as root, or through an
//                 unprivileged user namespace), tried for real in a child
//   gpu           an NVIDIA device node (/dev/nvidiactl and /dev/nvidia<N>)
//   cuda          gpu, and the driver library libcuda.so.1 loads
//   nccl          gpu, and the job's Python torch reports NCCL available
//   torch         the harness was built with LibTorch (the trainer exists)
//   python-torch  the job's Python imports torch
//   memory-cgroup a memory cgroup where host_oom may put a target under the
//                 kernel's OOM killer (inject/cgroup.h: $AFTERMATH_CGROUP,
//                 a v2 ancestor that enables memory, or our v1 memory cgroup)
//
// Each answer is probed once per process and cached (importing torch costs a
// second or two). Probes run with a deadline.
#pragma once

#include <optional>
#include <string>

#include "harness/os/expected.h"
#include "harness/scenario/requirements.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

// Where the probes look; tests point them at planted files.
struct RequirementEnv {
  std::string dev_dir = "/dev";
  // The interpreter for python-torch / nccl when the job's command is not a
  // Python one.
  std::string python = "/usr/bin/python3";
};

// Met, or the error says why not (one line). An unknown name is unmet.
Status probe_requirement(const std::string& name, const Scenario& sc,
                         const RequirementEnv& env = {});

// The first unmet requirement of the scenario, as "name: why"; nullopt when
// all are met.
std::optional<std::string> unmet_requirements(const Scenario& sc, const RequirementEnv& env = {});

}  // namespace aftermath
