#include "harness/supervise/device_watch.h"

#include <algorithm>

namespace aftermath {

bool device_memory_at_baseline(const DeviceTimeline& d, std::int64_t tolerance_bytes) {
  for (const auto& base : d.baseline) {
    if (!d.job_gpus.empty() &&
        std::find(d.job_gpus.begin(), d.job_gpus.end(), base.index) == d.job_gpus.end())
      continue;
    // The newest good sample of this GPU: called on every turn of the loop
    // while waiting, so look from the end.
    auto last = std::find_if(d.samples.rbegin(), d.samples.rend(), [&](const GpuSample& s) {
      return s.index == base.index && s.error.empty();
    });
    if (last != d.samples.rend() && last->used > base.used + tolerance_bytes) return false;
  }
  return true;
}

std::optional<Nanos> release_origin(const Timeline& tl) {
  for (const auto& o : tl.observations)
    if (o.is<obs::Fault>()) return o.t;
  if (auto t = phase_time(tl, RunPhase::JobExited)) return t;
  return phase_time(tl, RunPhase::Deadline);
}

DeviceWatch::DeviceWatch(boost::asio::io_context& ctx, DeviceWatchOptions options,
                         std::function<Nanos()> now, std::function<JobRef()> job)
    : ctx_(ctx), opt_(std::move(options)), now_(std::move(now)), job_(std::move(job)) {}

void DeviceWatch::start(std::optional<std::string> visible, std::optional<std::string> order) {
  if (!opt_.sources.nvml) return;
  DeviceObserverOptions o;
  o.proc_root = opt_.proc_root;
  if (!opt_.sources.device_pattern.empty()) o.device_pattern = opt_.sources.device_pattern;
  dev_ = std::make_unique<DeviceObserver>(opt_.sources.nvml, opt_.sources.probe, o);
  if (!dev_->start(now_(), job_())) return;
  dev_->set_job_environment(std::move(visible), std::move(order));
  timer_ = std::make_unique<boost::asio::steady_timer>(ctx_);
  schedule();
}

void DeviceWatch::schedule() {
  timer_->expires_after(std::chrono::nanoseconds(opt_.interval));
  timer_->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    dev_->sample(now_(), job_());
    schedule();
  });
}

bool DeviceWatch::at_baseline() const {
  return !active() || device_memory_at_baseline(dev_->timeline(), opt_.memory.tolerance_bytes);
}

Nanos DeviceWatch::begin_release(Nanos origin) {
  dev_->set_origin(origin);
  dev_->sample(now_(), job_());
  return origin + opt_.memory.deadline + opt_.interval;
}

DeviceTimeline DeviceWatch::finish(std::vector<std::string>& notes) {
  if (!dev_) {
    DeviceTimeline off;
    off.unavailable = "device observation off";
    return off;
  }
  if (!dev_->available()) return dev_->take();
  if (timer_) timer_->cancel();
  dev_->finish(now_(), job_());
  for (const auto& n : dev_->notes()) notes.push_back(n);
  return dev_->take();
}

}  // namespace aftermath
