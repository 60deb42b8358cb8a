// The device checks: pure functions of a DeviceTimeline (harness/core/device.h),
// so each is unit-tested on a hand-made one. On a machine without a driver
// they are `skipped` with the reason, never passed.
//
//   device_memory_released  every GPU the job could see is back to its
//                           baseline used memory (within a tolerance) before
//                           a deadline counted from the timeline's origin,
//                           and stays there. Measures the time to release
//                           and, when it fails, which processes still held what.
//   no_device_holders       after the job, no job process and no orphan of it
//                           holds a device file (or GPU memory, per NVML).
//   device_alloc_probe      after the job, a fresh process can select every
//                           GPU the job could see, allocate and read memory.
//
// Concurrent users of the same GPUs move `used` too: the memory check is only
// as exact as the runner is exclusive (the measured values name every holder).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "harness/check/check_params.h"
#include "harness/core/device.h"
#include "harness/core/result.h"
#include "harness/core/types.h"

namespace aftermath {

// The scenario's `checks.device_memory_released` parameters (check_params.h;
// the defaults where it gave none). The supervisor reads them while the job runs.
const DeviceMemoryParams& device_memory_params(const Scenario& sc);

// Names as the catalogue lists them.
inline constexpr const char* kDeviceMemoryReleased = "device_memory_released";
inline constexpr const char* kNoDeviceHolders = "no_device_holders";
inline constexpr const char* kDeviceAllocProbe = "device_alloc_probe";

CheckResult device_memory_released(const DeviceTimeline& tl, const DeviceMemoryParams& params = {});
CheckResult no_device_holders(const DeviceTimeline& tl);
CheckResult device_alloc_probe(const DeviceTimeline& tl);

// Runs one device check by name; an unknown name yields status Error.
CheckResult run_device_check(const std::string& name, const DeviceTimeline& tl,
                             const DeviceMemoryParams& params = {});

}  // namespace aftermath
