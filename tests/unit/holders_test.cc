// Unit tests for harness/observe/holders: patterns, the maps parser on literal
// contents, the scanners on a fake /proc, and the holder scan for real: a
// child started here holds a planted file.
#include "harness/observe/holders.h"

#include <gtest/gtest.h>

#include "harness/observe/process_index.h"
#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

using testing::FakeProc;
using testing::HolderSpec;
using testing::Planted;
using testing::SubreaperScope;
using testing::TempDir;

TEST(HolderPattern, GlobRegexAndDir) {
  auto glob = PathPattern::parse("/dev/nvidia*");
  ASSERT_TRUE(glob);
  EXPECT_TRUE(glob->matches("/dev/nvidia0"));
  EXPECT_TRUE(glob->matches("/dev/nvidiactl"));
  EXPECT_TRUE(glob->matches("/dev/nvidia-caps/nvidia-cap1")) << "'*' crosses '/'";
  EXPECT_FALSE(glob->matches("/dev/null"));
  auto re = PathPattern::parse("re:^/dev/nvidia[0-9]+$");
  ASSERT_TRUE(re);
  EXPECT_TRUE(re->matches("/dev/nvidia12"));
  EXPECT_FALSE(re->matches("/dev/nvidiactl"));
  auto bad = PathPattern::parse("re:([");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what.find("bad device pattern"), std::string::npos);
  auto dir = PathPattern::under_dir("/dev/shm");
  EXPECT_TRUE(dir.matches("/dev/shm/torch_1_2_3"));
  EXPECT_FALSE(dir.matches("/dev/shmem/x"));
  EXPECT_FALSE(dir.matches("/dev/shm"));
}

TEST(HolderPattern, LiteralPrefixIsWhatEveryMatchStartsWith) {
  EXPECT_EQ(PathPattern::parse("/dev/nvidia*")->literal_prefix(), "/dev/nvidia");
  EXPECT_EQ(PathPattern::parse("glob:/tmp/x/dev?/a*")->literal_prefix(), "/tmp/x/dev");
  EXPECT_EQ(PathPattern::parse("/dev/[n]vidia0")->literal_prefix(), "/dev/");
  EXPECT_EQ(PathPattern::parse("re:^/dev/nvidia[0-9]+$")->literal_prefix(), "");
  EXPECT_EQ(PathPattern::under_dir("/dev/shm").literal_prefix(), "/dev/shm/");
  // A pattern without wildcards is its own prefix, and still only matches itself.
  auto exact = PathPattern::parse("/dev/nvidiactl");
  EXPECT_EQ(exact->literal_prefix(), "/dev/nvidiactl");
  EXPECT_TRUE(exact->matches("/dev/nvidiactl"));
  EXPECT_FALSE(exact->matches("/dev/nvidiactl2"));
}

TEST(HolderMaps, ParsesPathsUnderADirectory) {
  std::string maps =
      "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234   /usr/bin/python3.11\n"
      "7f1c2a000000-7f1c2a100000 rw-s 00000000 00:1a 5678   /dev/shm/torch_4242_1_0\n"
      "7f1c2b000000-7f1c2b100000 rw-s 00000000 00:1a 5678   /dev/shm/torch_4242_1_0\n"
      "7f1c2c000000-7f1c2c100000 rw-s 00000000 00:1a 5679   /dev/shm/torch_4242_2_0 (deleted)\n"
      "7f1c2d000000-7f1c2d100000 rw-s 00000000 00:1a 5680   /dev/shm/sem.mp-a b\n"
      "7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0      [stack]\n"
      "7ffd1d000000-7ffd1d021000 rw-p 00000000 00:00 0\n";
  auto paths = parse_maps_paths(maps, "/dev/shm");
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0].path, "/dev/shm/torch_4242_1_0");
  EXPECT_FALSE(paths[0].deleted);
  EXPECT_EQ(paths[1].path, "/dev/shm/torch_4242_2_0");
  EXPECT_TRUE(paths[1].deleted);
  EXPECT_EQ(paths[2].path, "/dev/shm/sem.mp-a b") << "paths keep their spaces";
  EXPECT_TRUE(parse_maps_paths(maps, "/dev/sh").empty());
}

class HolderFake : public ::testing::Test {
 protected:
  TempDir dir_{"aftermath-holders"};
  FakeProc proc_{dir_};
};

TEST_F(HolderFake, FindsHoldersLikeFuser) {
  proc_.add(100, 1, "orphan", 'S', 1000);
  proc_.fd(100, 3, "/dev/nvidia0");
  proc_.fd(100, 4, "/dev/nvidiactl");
  proc_.fd(100, 5, "/dev/nvidia0");  // twice: listed once
  proc_.fd(100, 6, "/dev/null");
  proc_.add(200, 150, "rank0", 'S', 1000, {200, 3});
  proc_.fd(200, 9, "/dev/nvidia-uvm");
  proc_.add(300, 1, "bystander", 'S', 1000);
  proc_.fd(300, 1, "/dev/pts/0");
  proc_.add(400, 1, "zombie", 'Z', 1000);
  proc_.fd(400, 1, "/dev/nvidia1");  // a zombie leader whose threads still run
  auto idx = ProcessIndex::scan(ProcReader(proc_.root()));
  JobRef job;
  job.pids = {3};
  job.pid_level = 1;
  auto holders = find_device_holders(idx, proc_.root(), *PathPattern::parse("/dev/nvidia*"), job);
  ASSERT_EQ(holders.size(), 3u);
  EXPECT_EQ(holders[0].pid, 100);
  EXPECT_EQ(holders[0].devices, (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidiactl"}));
  EXPECT_TRUE(holders[0].orphan);
  EXPECT_FALSE(holders[0].in_job);
  EXPECT_EQ(holders[1].pid, 200);
  EXPECT_TRUE(holders[1].in_job) << "job pid 3 at level 1 is host pid 200";
  EXPECT_FALSE(holders[1].orphan);
  EXPECT_EQ(holders[1].comm, "rank0");
  EXPECT_TRUE(holders[2].zombie);
}

TEST_F(HolderFake, ScanMappedFiles) {
  proc_.add(100, 1, "w");
  proc_.maps(100, {"/tmp/x/torch_1_2_3", "/usr/lib/libc.so.6"});
  auto m = scan_mapped_files(proc_.root(), "/tmp/x");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[100][0].path, "/tmp/x/torch_1_2_3");
}

// The scan for real: a child of this test holds a planted "device".
TEST(HolderScan, RealChildHoldingAPlantedDevice) {
  TempDir dir("aftermath-holders-real");
  std::string dev = dir / "nvidia7";
  dir.write("nvidia7", "");
  SubreaperScope subreaper;
  Planted p = testing::plant_holder({.open_path = dev, .orphan = true});
  ASSERT_GT(p.holder, 0);
  JobRef job;
  job.orphan_parents = {1, ::getpid()};
  auto pattern = *PathPattern::parse(dir.path() + "/nvidia*");
  auto idx = ProcessIndex::scan(ProcReader("/proc"));
  auto holders = find_device_holders(idx, "/proc", pattern, job);
  // Negative control: a pattern that does not name the planted file finds nothing.
  auto other = find_device_holders(idx, "/proc", *PathPattern::parse(dir.path() + "/other*"), job);
  const pid_t holder = p.holder;
  testing::take_down(p);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].pid, holder);
  EXPECT_EQ(holders[0].devices, (std::vector<std::string>{dev}));
  EXPECT_TRUE(holders[0].orphan) << "re-parented to this test, the subreaper";
  EXPECT_EQ(holders[0].ppid, ::getpid());
  EXPECT_FALSE(holders[0].zombie);
  EXPECT_GT(holders[0].start_ticks, 0u);
  EXPECT_TRUE(other.empty());
  // Once the holder is gone, the same scan is empty.
  auto after = find_device_holders(ProcessIndex::scan(ProcReader("/proc")), "/proc", pattern, job);
  EXPECT_TRUE(after.empty());
}

}  // namespace
}  // namespace aftermath
