// The device side's value types as JSON, one shape everywhere they are
// written: result.json's "device" member and `aftermath check --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/device.h"

namespace aftermath {

nlohmann::json to_json(const GpuProbe& p);
nlohmann::json to_json(const GpuProcess& p);
nlohmann::json to_json(const DeviceHolder& h);
// Compact: every GPU's identity and baseline, one {t_ms, index, used_bytes,
// free_bytes} per sample, the processes of each GPU's last sample only, the
// holder scan and the probe after the job.
nlohmann::json to_json(const DeviceTimeline& tl);

}  // namespace aftermath
