// The names a scenario's `requires:` may list. What each means, and how this
// machine is probed for it, is harness/observe/requirements_probe.h; the
// scenario only checks that a name is one of these.
#pragma once

#include <string>
#include <vector>

namespace aftermath {

// root, pidns, gpu, cuda, nccl, torch, python-torch, memory-cgroup (in the
// order an "unknown requirement" error lists them).
const std::vector<std::string>& known_requirements();

}  // namespace aftermath
