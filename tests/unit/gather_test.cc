// Tests for gathering a machine snapshot (harness/hygiene/snapshot.h) from a
// planted /proc tree and /dev/shm directory: what is read, and nothing judged.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/hygiene/snapshot.h"
#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

using testing::FakeProc;
using testing::TempDir;

class Gather : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.path() + "/shm");
    opts_.proc_root = proc_.root();
    opts_.shm_dir = dir_.path() + "/shm";
    opts_.cgroup_dir = "";
    opts_.now_wall_ns = 123 * kSecond;
  }
  TempDir dir_{"aftermath-gather"};
  FakeProc proc_{dir_};
  HygieneOptions opts_;
};

TEST_F(Gather, ReadsHoldersShmEntriesAndCommandLines) {
  proc_.add(1, 0, "init", 'S', 0);
  proc_.add(100, 1, "python3");
  proc_.fd(100, 3, "/dev/nvidia0");
  proc_.add(101, 100, "worker");
  proc_.maps(101, {opts_.shm_dir + "/torch_100_1_0"});
  proc_.add(102, 100, "python3", 'Z');
  proc_.add(103, 1, "idle");
  dir_.write("shm/torch_100_1_0", std::string(10, 'x'));
  opts_.device_pattern = "/dev/nvidia*";

  MachineSnapshot m = gather_machine(opts_);
  EXPECT_EQ(m.now_wall_ns, 123 * kSecond);
  EXPECT_EQ(m.processes.all().size(), 5u);
  ASSERT_EQ(m.device_files.count(100), 1u);
  EXPECT_EQ(m.device_files.at(100)[0].path, "/dev/nvidia0");
  ASSERT_EQ(m.shm_mapped.count(101), 1u);
  ASSERT_EQ(m.shm.size(), 1u);
  EXPECT_EQ(m.shm[0].entry.name, "torch_100_1_0");
  EXPECT_EQ(m.shm[0].entry.bytes, 10);
  EXPECT_NE(m.shm[0].inode, 0u);
  // Command lines of holders and zombies only.
  EXPECT_EQ(m.cmdlines.count(100), 1u);
  EXPECT_EQ(m.cmdlines.count(101), 1u);
  EXPECT_EQ(m.cmdlines.count(102), 1u);
  EXPECT_EQ(m.cmdlines.count(103), 0u);
  // No NVML, no probe, no temp dir, no cgroup dir: each says so or stays empty.
  EXPECT_EQ(m.gpu_unavailable, "NVML not consulted");
  EXPECT_FALSE(m.probe.has_value());
  EXPECT_FALSE(m.tmp_error.has_value());
  EXPECT_TRUE(m.tmp.empty());
  EXPECT_EQ(m.cgroup_dir, "");
  EXPECT_FALSE(m.pattern_error.has_value());
}

TEST_F(Gather, ABadDevicePatternIsRecordedNotThrown) {
  opts_.device_pattern = "re:[";
  MachineSnapshot m = gather_machine(opts_);
  ASSERT_TRUE(m.pattern_error.has_value());
  EXPECT_FALSE(m.pattern_error->empty());
  EXPECT_TRUE(m.device_files.empty());
}

TEST_F(Gather, AnUnreadableTempDirIsRecorded) {
  opts_.tmp_dir = dir_.path() + "/no-such-dir";
  MachineSnapshot m = gather_machine(opts_);
  EXPECT_TRUE(m.tmp_error.has_value());
}

}  // namespace
}  // namespace aftermath
