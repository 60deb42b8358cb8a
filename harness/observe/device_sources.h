// Where a run reads the device side from: NVML, the allocation probe, the
// device nodes whose holders it looks for. One struct, passed down as it is
// from the command line (RunOptions) through the supervisor to the device
// watch; tests put doubles here.
#pragma once

#include <string>

#include "harness/observe/nvml.h"
#include "harness/observe/probe.h"

namespace aftermath {

struct DeviceSources {
  Nvml* nvml = nullptr;          // not owned; null: no GPU observation
  ProbeRunner* probe = nullptr;  // not owned; null: no allocation probe
  std::string device_pattern;    // empty: /dev/nvidia*
};

}  // namespace aftermath
