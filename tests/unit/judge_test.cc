// Tests for judging a machine snapshot (harness/hygiene/hygiene.h:
// judge_machine) on snapshots made by hand: no /proc, no /dev/shm, no GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/hygiene/hygiene.h"

namespace aftermath {
namespace {

constexpr std::int64_t kNow = 1'000'000 * kSecond;

ProcInfo proc(int pid, int ppid, const std::string& comm, char state = 'S') {
  ProcInfo p;
  p.pid = pid;
  p.ppid = ppid;
  p.comm = comm;
  p.state = state;
  p.uid = 1000;
  p.nspid = {pid};
  return p;
}

ShmFile shm(const std::string& name, Nanos age) {
  ShmFile f;
  f.entry.name = name;
  f.entry.bytes = 4096;
  f.entry.mtime_ns = kNow - age;
  f.ctime_ns = f.entry.mtime_ns;
  f.inode = 7;
  return f;
}

class Judge : public ::testing::Test {
 protected:
  void SetUp() override {
    m_.now_wall_ns = kNow;
    m_.self_pid = 50;
    m_.processes.add(proc(1, 0, "init"));
    m_.processes.add(proc(40, 1, "bash"));
    m_.processes.add(proc(50, 40, "aftermath"));  // the inspector
    m_.gpu_unavailable = "NVML not consulted";
    o_.shm_min_age = 30 * kSecond;
  }
  const HygieneProcess* find(const InspectReport& r, int pid) {
    for (const auto& p : r.processes)
      if (p.proc.pid == pid) return &p;
    return nullptr;
  }
  MachineSnapshot m_;
  HygieneOptions o_;
};

TEST_F(Judge, AnOrphanHoldingADeviceIsALeftoverWithItsTree) {
  m_.processes.add(proc(100, 1, "python3"));
  m_.processes.add(proc(101, 100, "worker"));
  m_.processes.add(proc(102, 100, "python3", 'Z'));
  m_.processes.add(proc(200, 40, "train"));
  m_.device_files[100] = {{"/dev/nvidia0", false}};
  m_.device_files[101] = {{"/dev/nvidiactl", false}};
  m_.device_files[200] = {{"/dev/nvidia1", false}};
  m_.cmdlines[100] = "python3 train.py";
  InspectReport r = judge_machine(m_, o_);
  ASSERT_NE(find(r, 100), nullptr);
  EXPECT_TRUE(find(r, 100)->leftover);
  EXPECT_EQ(find(r, 100)->why, "leftover: orphan (re-parented to 1)");
  EXPECT_EQ(find(r, 100)->cmdline, "python3 train.py");
  EXPECT_TRUE(find(r, 101)->leftover);
  EXPECT_EQ(find(r, 101)->depth, 1);
  ASSERT_NE(find(r, 102), nullptr) << "the leftover's zombie child is listed";
  EXPECT_EQ(find(r, 102)->why, "zombie: child of leftover 100");
  EXPECT_FALSE(find(r, 200)->leftover);
  EXPECT_EQ(find(r, 200)->why, "in use: its parent 40 is alive");
  EXPECT_EQ(r.problems.size(), 3u);
  EXPECT_FALSE(r.clean());
  // Leftovers first, by tree, root first.
  EXPECT_EQ(r.processes.front().proc.pid, 100);
  EXPECT_EQ(r.processes.back().proc.pid, 200);
}

TEST_F(Judge, TheInspectorAndKnownDaemonsAreNeverLeftovers) {
  m_.processes.add(proc(300, 1, "nvidia-persiste"));
  m_.device_files[300] = {{"/dev/nvidiactl", false}};
  m_.device_files[40] = {{"/dev/nvidia0", false}};  // an ancestor of the inspector, under init
  InspectReport r = judge_machine(m_, o_);
  EXPECT_TRUE(r.clean()) << r.problems.front();
  EXPECT_EQ(find(r, 300)->why, "in use: a known daemon");
  EXPECT_EQ(find(r, 40)->why, "in use: the caller itself");
}

TEST_F(Judge, ShmEntriesByCreatorUseAndAge) {
  m_.processes.add(proc(200, 40, "train"));
  m_.shm = {shm("psm_other", 3600 * kSecond),       // not ours to judge
            shm("sem.mp-young", kSecond),           // creator unknown, too young
            shm("torch_200_1_0", 3600 * kSecond),   // creator alive
            shm("torch_999_1_0", kSecond),          // creator gone: at any age
            shm("torch_998_1_0", 3600 * kSecond)};  // gone, but mapped by 200
  m_.shm_mapped[200] = {{"/dev/shm/torch_998_1_0", false}};
  InspectReport r = judge_machine(m_, o_);
  ASSERT_EQ(r.shm.size(), 4u);
  auto entry = [&](const std::string& name) {
    return *std::find_if(r.shm.begin(), r.shm.end(), [&](const auto& s) { return s.name == name; });
  };
  EXPECT_EQ(entry("sem.mp-young").why, "young (1s): its creator may still map it");
  EXPECT_EQ(entry("torch_200_1_0").why, "in use: creator 200 is alive");
  EXPECT_TRUE(entry("torch_999_1_0").leftover);
  EXPECT_EQ(entry("torch_999_1_0").creator, CreatorState::Gone);
  EXPECT_EQ(entry("torch_998_1_0").why, "in use by 200");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0],
            "/dev/shm/torch_999_1_0 (4.0 KiB, 1s old): leftover: creator 999 is "
            "gone, no process maps or holds it");
}

// A segment nobody maps whose creator is itself a leftover goes with it, and
// the reason names the creator (no empty list of users).
TEST_F(Judge, ASegmentOfALeftoverCreatorNobodyMapsNamesTheCreator) {
  m_.processes.add(proc(100, 1, "python3"));
  m_.device_files[100] = {{"/dev/nvidia0", false}};
  m_.shm = {shm("torch_100_1_0", kSecond)};
  InspectReport r = judge_machine(m_, o_);
  ASSERT_EQ(r.shm.size(), 1u);
  EXPECT_TRUE(r.shm[0].freed_by_reap);
  EXPECT_EQ(r.shm[0].why, "leftover once its creator 100 (a leftover) is gone");
}

TEST_F(Judge, APidOfANestedNamespaceProvesNothing) {
  ProcInfo inner = proc(500, 40, "job");
  inner.nspid = {500, 7};
  m_.processes.add(inner);
  m_.shm = {shm("torch_7_1_0", kSecond)};
  InspectReport r = judge_machine(m_, o_);
  ASSERT_EQ(r.shm.size(), 1u);
  EXPECT_EQ(r.shm[0].creator, CreatorState::Unknown);
  EXPECT_FALSE(r.shm[0].leftover);
}

TEST_F(Judge, ProblemsAndNotesFromWhatCouldNotBeRead) {
  m_.pattern_error = "bad device pattern";
  m_.processes.add(proc(600, 1, "secret"));
  m_.unreadable = {600};
  FaultCgroupEntry cg;
  cg.dir = "/sys/fs/cgroup/aftermath-4243-1-f0-p7";
  cg.owner = 4243;
  cg.owner_alive = false;
  m_.cgroups = {cg};
  m_.caller.uid = 1000;
  InspectReport r = judge_machine(m_, o_);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0], "bad device pattern");
  EXPECT_EQ(r.problems[1], cg.dir + ": leftover: aftermath pid 4243 made it and is gone");
  ASSERT_EQ(r.uninspected.size(), 1u);
  EXPECT_TRUE(r.uninspected[0].matters);  // an orphan: it may be a leftover
  EXPECT_EQ(r.notes.back(), "no allocation probe: no probe");
  EXPECT_EQ(r.notes[r.notes.size() - 2], "GPU memory not inspected: NVML not consulted");
}

TEST_F(Judge, TempResidueHeldOnlyByLeftoversGoesWithThem) {
  m_.processes.add(proc(100, 1, "python3"));
  m_.device_files[100] = {{"/dev/nvidia0", false}};
  TmpEntry e;
  e.name = "pymp-abc";
  e.kind = TmpKind::Pymp;
  e.mtime_ns = kNow - kSecond;
  m_.tmp.emplace(e.name, e);
  m_.tmp_holds["pymp-abc"].pids = {100};
  o_.tmp_dir = "/tmp";
  InspectReport r = judge_machine(m_, o_);
  ASSERT_EQ(r.tmp.size(), 1u);
  EXPECT_TRUE(r.tmp[0].freed_by_reap);
  EXPECT_FALSE(r.tmp[0].leftover);

  m_.tmp_error = "permission denied";
  r = judge_machine(m_, o_);
  EXPECT_TRUE(r.tmp.empty());
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(), "temp dir not inspected: permission denied"),
            r.notes.end());
}

}  // namespace
}  // namespace aftermath
