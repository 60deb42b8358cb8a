// The device watch: when device memory counts as back, where release
// deadlines count from, and the watch itself over a scripted NVML.
#include "harness/supervise/device_watch.h"

#include <gtest/gtest.h>

#include "harness/observe/nvml_fake.h"
#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

GpuSample gpu(int index, std::int64_t used, std::string error = "") {
  GpuSample s;
  s.index = index;
  s.used = used;
  s.error = std::move(error);
  return s;
}

TEST(DeviceMemoryAtBaseline, TheNewestGoodSampleOfEachJobGpuDecides) {
  DeviceTimeline d;
  d.baseline = {gpu(0, 1000), gpu(1, 1000)};
  EXPECT_TRUE(device_memory_at_baseline(d, 0));  // no samples yet
  d.samples = {gpu(0, 5000), gpu(1, 1000)};
  EXPECT_FALSE(device_memory_at_baseline(d, 0));
  EXPECT_TRUE(device_memory_at_baseline(d, 4000));  // within the tolerance
  d.samples.push_back(gpu(0, 0, "GPU is lost"));    // a failed read says nothing
  EXPECT_FALSE(device_memory_at_baseline(d, 0));
  d.samples.push_back(gpu(0, 1000));
  EXPECT_TRUE(device_memory_at_baseline(d, 0));
  d.samples.push_back(gpu(1, 9000));
  EXPECT_FALSE(device_memory_at_baseline(d, 0));
  d.job_gpus = {0};  // GPU 1 is not the job's
  EXPECT_TRUE(device_memory_at_baseline(d, 0));
}

TEST(ReleaseOrigin, FirstFaultThenTopExitThenDeadline) {
  Timeline tl;
  EXPECT_EQ(release_origin(tl), std::nullopt);
  tl.add(obs::phase(900, RunPhase::Deadline));
  EXPECT_EQ(release_origin(tl), 900);
  tl.add(obs::phase(700, RunPhase::JobExited));
  EXPECT_EQ(release_origin(tl), 700);
  tl.add(obs::fault(300, 0, 42, FaultAction::Sigkill, "after 1s"));
  tl.add(obs::fault(400, 1, 42, FaultAction::Sigkill, "after 1s"));
  EXPECT_EQ(release_origin(tl), 300);
}

TEST(DeviceWatch, OffWithoutNvml) {
  boost::asio::io_context ctx;
  DeviceWatch w(ctx, {}, [] { return Nanos(0); }, [] { return JobRef{}; });
  w.start(std::nullopt, std::nullopt);
  EXPECT_FALSE(w.active());
  EXPECT_TRUE(w.at_baseline());
  std::vector<std::string> notes;
  EXPECT_EQ(w.finish(notes).unavailable, "device observation off");
}

TEST(DeviceWatch, UnavailableNvmlSaysWhy) {
  boost::asio::io_context ctx;
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: planted");
  DeviceWatchOptions o;
  o.sources.nvml = &nvml;
  DeviceWatch w(ctx, o, [] { return Nanos(0); }, [] { return JobRef{}; });
  w.start(std::nullopt, std::nullopt);
  EXPECT_FALSE(w.active());
  std::vector<std::string> notes;
  EXPECT_NE(w.finish(notes).unavailable.find("planted"), std::string::npos);
}

TEST(DeviceWatch, SamplesOnItsTimerUntilMemoryIsBack) {
  testing::TempDir proc;  // no processes: the holder scan finds nobody
  boost::asio::io_context ctx;
  FakeNvml nvml({{FakeNvml::gpu(0, 1000)},
                 {FakeNvml::gpu(0, 5000)},
                 {FakeNvml::gpu(0, 5000)},
                 {FakeNvml::gpu(0, 1000)}});
  DeviceWatchOptions o;
  o.sources.nvml = &nvml;
  o.proc_root = proc.path();
  o.sources.device_pattern = proc / "nvidia*";
  o.interval = 5 * kMilli;
  o.memory.tolerance_bytes = 0;
  o.memory.deadline = kSecond;
  Nanos t0 = monotonic_now();
  DeviceWatch w(ctx, o, [&] { return monotonic_now() - t0; }, [] { return JobRef{}; });
  w.start(std::nullopt, std::nullopt);
  ASSERT_TRUE(w.active());
  EXPECT_TRUE(w.at_baseline());
  Nanos until = monotonic_now() + 10 * kSecond;
  while (w.at_baseline() && monotonic_now() < until) ctx.run_one_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(w.at_baseline()) << "no sample above the baseline was taken";
  EXPECT_EQ(w.begin_release(100 * kMilli), 100 * kMilli + kSecond + 5 * kMilli);
  while (!w.at_baseline() && monotonic_now() < until)
    ctx.run_one_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(w.at_baseline());
  std::vector<std::string> notes;
  DeviceTimeline d = w.finish(notes);
  EXPECT_TRUE(d.unavailable.empty());
  EXPECT_EQ(d.origin, 100 * kMilli);
  EXPECT_GE(d.samples.size(), 3u);
}

}  // namespace
}  // namespace aftermath
