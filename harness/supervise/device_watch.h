// The device watch: the GPUs over a run. A baseline before the launch, NVML
// samples on a timer of their own while the job runs, the wait for device
// memory to come back after teardown (it returns once the driver has torn
// the dead processes' contexts down, not when they exit), then the holder
// scan and the allocation probe (observe/device_observer.h does the reading).
#pragma once

#include <boost/asio.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/device_checks.h"
#include "harness/core/timeline.h"
#include "harness/observe/device_observer.h"
#include "harness/observe/device_sources.h"

namespace aftermath {

struct DeviceWatchOptions {
  DeviceSources sources;
  std::string proc_root = "/proc";
  Nanos interval = 200 * kMilli;
  DeviceMemoryParams memory;  // the scenario's device_memory_released parameters
};

// Is every GPU the job sees back at its baseline (within `tolerance_bytes`)
// in its newest good sample? A GPU without a good sample counts as back.
bool device_memory_at_baseline(const DeviceTimeline& d, std::int64_t tolerance_bytes);

// Where release deadlines count from: the first fault, else the top's exit
// (the job_exited phase), else the job's deadline; nullopt: none of these.
std::optional<Nanos> release_origin(const Timeline& tl);

class DeviceWatch {
 public:
  // `now`: run time; `job`: the job as it is now (read at each sample).
  DeviceWatch(boost::asio::io_context& ctx, DeviceWatchOptions options, std::function<Nanos()> now,
              std::function<JobRef()> job);

  // Before the launch: the baseline, and sampling from then on where NVML
  // works. `visible`/`order`: the job's CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER.
  void start(std::optional<std::string> visible, std::optional<std::string> order);
  // NVML answered at the start: there is memory to watch.
  bool active() const { return dev_ && dev_->available(); }
  bool at_baseline() const;
  // After teardown: release deadlines count from `origin`; one more sample.
  // The run time until which to wait for at_baseline().
  Nanos begin_release(Nanos origin);
  // Stops sampling, scans for holders, runs the probe; the run's device
  // timeline (unavailable, with the reason, where there is none). `notes`
  // gets what the observer had to say.
  DeviceTimeline finish(std::vector<std::string>& notes);

 private:
  void schedule();

  boost::asio::io_context& ctx_;
  DeviceWatchOptions opt_;
  std::function<Nanos()> now_;
  std::function<JobRef()> job_;
  std::unique_ptr<DeviceObserver> dev_;
  std::unique_ptr<boost::asio::steady_timer> timer_;
};

}  // namespace aftermath
