// A scenario's `requires:` (the names are harness/scenario/requirements.h's) probed on this
// machine. A scenario whose requirements are not met is not launched: its verdict is `skipped`,
// with the first unmet requirement and why ("gpu: no NVIDIA device
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
//                 kernel's OOM killer (observe/cgroup_home.h: $AFTERMATH_CGROUP,
//                 a v2 ancestor that enables memory, or our v1 memory cgroup)
//
// Each answer is probed once per process and cached (importing torch costs a
// second or two). Probes run with a deadline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/os/expected.h"

namespace aftermath {

// Where the probes look; tests point them at planted files.
struct RequirementEnv {
  std::string dev_dir = "/dev";
  // The interpreter for python-torch / nccl when the job's command is not a
  // Python one.
  std::string python = "/usr/bin/python3";
};

// Met, or the error says why not (one line). An unknown name is unmet.
// `job_argv` is the job's command: its Python, when it runs one, is the one
// asked about torch.
Status probe_requirement(const std::string& name, const std::vector<std::string>& job_argv,
                         const RequirementEnv& env = {});

// Whether every one of `requirements` (a scenario's `requires:`) is met
// here; the error names the first unmet one: "name: why".
Status requirements_met(const std::vector<std::string>& requirements,
                        const std::vector<std::string>& job_argv, const RequirementEnv& env = {});

}  // namespace aftermath
