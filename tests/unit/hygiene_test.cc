// Unit tests for harness/hygiene (`aftermath check`): the classification on a
// fake /proc with planted /dev/shm entries, a FakeNvml and a scripted probe;
// the table and the JSON; and the check for real on planted orphans, zombies
// and /dev/shm entries started and cleaned up by the test.
#include "harness/hygiene/hygiene.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>

#include "harness/observe/nvml_fake.h"
#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;
using testing::FakeProc;
using testing::Planted;
using testing::SubreaperScope;
using testing::TempDir;

std::int64_t realtime() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

// A probe runner that answers from a script.
class ScriptedProbe final : public ProbeRunner {
 public:
  explicit ScriptedProbe(ProbeReport r) : report_(std::move(r)) {}
  ProbeReport run(const std::vector<GpuInfo>& gpus) override {
    asked_ = gpus;
    return report_;
  }
  std::vector<GpuInfo> asked_;

 private:
  ProbeReport report_;
};

const HygieneProcess* find(const CheckReport& r, int pid) {
  for (const auto& p : r.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}
const HygieneShm* find_shm(const CheckReport& r, const std::string& name) {
  for (const auto& s : r.shm)
    if (s.name == name) return &s;
  return nullptr;
}

class HygieneFake : public ::testing::Test {
 protected:
  void SetUp() override {
    shm_ = dir_.path() + "/shm";
    fs::create_directories(shm_);
    opts_.proc_root = proc_.root();
    opts_.shm_dir = shm_;
    opts_.shm_min_age = 10 * kSecond;
    opts_.now_wall_ns = realtime() + 3600 * kSecond;  // every planted file is an hour old...
  }
  void plant(const std::string& name, size_t bytes, Nanos age) {
    dir_.write("shm/" + name, std::string(bytes, 'x'));
    // ...unless told otherwise.
    std::int64_t t = opts_.now_wall_ns - age;
    timespec times[2] = {{t / kSecond, t % kSecond}, {t / kSecond, t % kSecond}};
    ::utimensat(AT_FDCWD, (shm_ + "/" + name).c_str(), times, 0);
  }
  TempDir dir_{"aftermath-hygiene"};
  FakeProc proc_{dir_};
  std::string shm_;
  HygieneOptions opts_;
};

TEST_F(HygieneFake, ClassifiesLeftoversAndWhatIsInUse) {
  proc_.add(1, 0, "init", 'S', 0);
  proc_.add(100, 1, "python3", 'S', 1000);  // orphan holding a GPU
  proc_.fd(100, 3, "/dev/nvidia0");
  proc_.fd(100, 4, "/dev/nvidiactl");
  proc_.add(101, 100, "pt_data_worker", 'S', 1000);  // below it, mapping a segment
  proc_.maps(101, {shm_ + "/torch_100_1_0"});
  proc_.add(102, 100, "python3", 'Z', 1000);  // its unreaped child
  proc_.add(150, 1, "bash", 'S', 1000);       // a live parent...
  proc_.add(200, 150, "train", 'S', 1000);    // ...of a GPU user: in use
  proc_.fd(200, 3, "/dev/nvidia1");
  proc_.add(300, 1, "nvidia-persiste", 'S', 0);  // a daemon under init
  proc_.fd(300, 3, "/dev/nvidiactl");
  plant("torch_100_1_0", 4096, kSecond * 3600);     // creator 100 is a leftover
  plant("torch_999_1_0", 1 << 20, kSecond * 3600);  // creator gone, unused
  plant("torch_200_5_0", 100, kSecond * 3600);      // creator alive
  plant("sem.mp-abc", 32, kSecond * 3600);          // creator unknown, unused
  plant("sem.mp-young", 32, kSecond);               // too young to judge
  plant("psm_other", 10, kSecond * 3600);           // not ours to judge
  FakeNvml nvml(
      {{FakeNvml::gpu(0, 4600, 81920, {FakeNvml::proc(100, 4096), FakeNvml::proc(4242, 8)}),
        FakeNvml::gpu(1, 1000, 81920, {FakeNvml::proc(200, 900)})}});
  GpuProbe ok;
  ok.index = 0;
  ok.status = ProbeStatus::Ok;
  ok.free = 1 << 30;
  GpuProbe fail;
  fail.index = 1;
  fail.status = ProbeStatus::Failed;
  fail.error = "cudaErrorDevicesUnavailable: CUDA-capable device(s) is/are busy or unavailable";
  ScriptedProbe probe(ProbeReport{"", {ok, fail}});
  opts_.nvml = &nvml;
  opts_.probe = &probe;

  CheckReport r = machine_check(opts_);
  EXPECT_FALSE(r.clean());
  ASSERT_EQ(probe.asked_.size(), 2u) << "one probe per GPU NVML knows";
  EXPECT_EQ(probe.asked_[1].uuid, r.gpus[1].info.uuid);

  const auto* root = find(r, 100);
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->leftover);
  EXPECT_TRUE(root->orphan);
  EXPECT_EQ(root->depth, 0);
  EXPECT_EQ(root->gpus, (std::vector<int>{0}));
  EXPECT_EQ(root->gpu_bytes, 4096ll << 20);
  EXPECT_EQ(root->devices, (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidiactl"}));
  const auto* worker = find(r, 101);
  ASSERT_NE(worker, nullptr);
  EXPECT_TRUE(worker->leftover);
  EXPECT_EQ(worker->leftover_root, 100);
  EXPECT_EQ(worker->depth, 1);
  EXPECT_EQ(worker->shm, (std::vector<std::string>{"torch_100_1_0"}));
  const auto* zombie = find(r, 102);
  ASSERT_NE(zombie, nullptr);
  EXPECT_TRUE(zombie->zombie);
  EXPECT_TRUE(zombie->leftover);
  const auto* user = find(r, 200);
  ASSERT_NE(user, nullptr);
  EXPECT_FALSE(user->leftover);
  EXPECT_NE(user->why.find("in use"), std::string::npos);
  const auto* daemon = find(r, 300);
  ASSERT_NE(daemon, nullptr);
  EXPECT_FALSE(daemon->leftover);
  EXPECT_TRUE(daemon->daemon);
  EXPECT_EQ(find(r, 150), nullptr) << "a process holding nothing is not listed";

  EXPECT_TRUE(find_shm(r, "torch_999_1_0")->leftover);
  EXPECT_EQ(find_shm(r, "torch_999_1_0")->creator, CreatorState::Gone);
  EXPECT_TRUE(find_shm(r, "torch_100_1_0")->freed_by_reap);
  EXPECT_FALSE(find_shm(r, "torch_100_1_0")->leftover);
  EXPECT_EQ(find_shm(r, "torch_100_1_0")->mapped_by, (std::vector<int>{101}));
  EXPECT_FALSE(find_shm(r, "torch_200_5_0")->leftover);
  EXPECT_EQ(find_shm(r, "torch_200_5_0")->creator, CreatorState::Alive);
  EXPECT_TRUE(find_shm(r, "sem.mp-abc")->leftover);
  EXPECT_EQ(find_shm(r, "sem.mp-abc")->creator, CreatorState::Unknown);
  EXPECT_FALSE(find_shm(r, "sem.mp-young")->leftover);
  EXPECT_EQ(find_shm(r, "psm_other"), nullptr);

  // 3 leftover processes, 2 leftover entries, 1 failed probe.
  EXPECT_EQ(r.problems.size(), 6u) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.gpus[1].probe->status, ProbeStatus::Failed);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("NVML pid 4242") != std::string::npos;
  EXPECT_TRUE(noted) << "a GPU user this /proc cannot see is noted";

  std::string table = format_check_table(r);
  EXPECT_NE(table.find("NOT CLEAN: 6 problem(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("LEFTOVER leftover: orphan"), std::string::npos) << table;
  EXPECT_NE(table.find("torch_999_1_0"), std::string::npos);
  EXPECT_NE(table.find("cudaErrorDevicesUnavailable"), std::string::npos);
  auto j = to_json(r);
  EXPECT_FALSE(j["clean"].get<bool>());
  EXPECT_EQ(j["problems"].size(), 6u);
  EXPECT_EQ(j["gpus"][0]["processes"][0]["pid"], 100);
  EXPECT_EQ(j["shm"].size(), 5u);
  EXPECT_EQ(j["roots"]["shm"], shm_);
}

TEST_F(HygieneFake, OrphanWithoutHoldingsIsNotALeftover) {
  proc_.add(100, 1, "sleep", 'S', 1000);
  proc_.add(101, 100, "child", 'S', 1000);
  proc_.fd(101, 3, "/dev/nvidia0");  // held below a non-holding orphan
  auto r = machine_check(opts_);
  EXPECT_TRUE(r.clean()) << ::testing::PrintToString(r.problems);
  ASSERT_NE(find(r, 101), nullptr);
  EXPECT_FALSE(find(r, 101)->leftover);
}

TEST_F(HygieneFake, CleanMachine) {
  proc_.add(1, 0, "init", 'S', 0);
  FakeNvml nvml({{FakeNvml::gpu(0, 500)}});
  opts_.nvml = &nvml;
  auto r = machine_check(opts_);
  EXPECT_TRUE(r.clean());
  EXPECT_NE(format_check_table(r).find("CLEAN: nothing left behind"), std::string::npos);
  EXPECT_TRUE(to_json(r)["clean"].get<bool>());
}

TEST_F(HygieneFake, FaultCgroupsOfAGoneHarnessAreLeftovers) {
  proc_.add(1, 0, "init", 'S', 0);
  proc_.add(300, 1, "aftermath", 'S', 0);  // a harness still running
  dir_.write("cg/aftermath-4242-0-f0-p100/cgroup.procs", "100\n");  // its harness is gone
  dir_.write("cg/aftermath-4243-3-f1-p7/cgroup.procs", "");
  dir_.write("cg/aftermath-300-1-f0-p5/cgroup.procs", "5\n");
  dir_.write("cg/system.slice/cgroup.procs", "");
  dir_.write("cg/aftermath-x-0/cgroup.procs", "");
  opts_.cgroup_dir = dir_ / "cg";
  auto r = machine_check(opts_);
  ASSERT_EQ(r.cgroups.size(), 3u);
  EXPECT_EQ(r.cgroups[0].dir, dir_ / "cg/aftermath-300-1-f0-p5");
  EXPECT_FALSE(r.cgroups[0].leftover);
  EXPECT_EQ(r.cgroups[0].why, "in use: aftermath pid 300 is alive");
  EXPECT_TRUE(r.cgroups[1].leftover);
  EXPECT_EQ(r.cgroups[1].members, std::vector<int>{100});
  EXPECT_TRUE(r.cgroups[2].leftover);
  ASSERT_EQ(r.problems.size(), 2u) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.problems[0], dir_ / "cg/aftermath-4242-0-f0-p100" +
                               ": leftover: aftermath pid 4242 made it and is gone; processes 100 "
                               "are still in it");
  EXPECT_NE(format_check_table(r).find("aftermath-4243-3-f1-p7  LEFTOVER leftover: aftermath pid 4243"),
            std::string::npos)
      << format_check_table(r);
  EXPECT_EQ(to_json(r)["cgroups"].size(), 3u);
  EXPECT_EQ(to_json(r)["roots"]["cgroup"], dir_ / "cg");
  // "" looks nowhere.
  opts_.cgroup_dir = "";
  EXPECT_TRUE(machine_check(opts_).cgroups.empty());
}

TEST_F(HygieneFake, NoDriverIsNotedNotFailed) {
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: cannot load libnvidia-ml.so.1");
  ScriptedProbe probe(ProbeReport{"no usable NVIDIA driver", {}});
  opts_.nvml = &nvml;
  opts_.probe = &probe;
  auto r = machine_check(opts_);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.gpu_unavailable, "no NVIDIA driver: cannot load libnvidia-ml.so.1");
  EXPECT_EQ(r.probe_unavailable, "no usable NVIDIA driver");
  EXPECT_NE(format_check_table(r).find("not inspected: no NVIDIA driver"), std::string::npos);
}

TEST_F(HygieneFake, BadDevicePatternIsAProblem) {
  opts_.device_pattern = "re:([";
  auto r = machine_check(opts_);
  ASSERT_FALSE(r.clean());
  EXPECT_NE(r.problems[0].find("bad device pattern"), std::string::npos);
}

TEST(HygieneNames, TorchCreatorAndAge) {
  EXPECT_EQ(torch_creator_pid("torch_4242_1804289383_0"), 4242);
  EXPECT_FALSE(torch_creator_pid("torch_abc_1"));
  EXPECT_FALSE(torch_creator_pid("torch__1"));
  EXPECT_FALSE(torch_creator_pid("sem.mp-1"));
  EXPECT_FALSE(torch_creator_pid("torch_42"));
  EXPECT_EQ(format_age(250 * kMilli), "250ms");
  EXPECT_EQ(format_age(45 * kSecond), "45s");
  EXPECT_EQ(format_age(3725 * kSecond), "1h02m");
  EXPECT_EQ(format_age(90000 * kSecond), "1d1h");
}

// The check for real: an orphan (re-parented to this test, a subreaper) that
// holds a planted device file, maps a planted segment and left a zombie.
TEST(HygieneReal, FindsAPlantedOrphanItsZombieAndItsSegment) {
  TempDir dir("aftermath-hygiene-real");
  fs::create_directories(dir / "shm");
  fs::create_directories(dir / "dev");
  dir.write("dev/nvidia0", "");
  dir.write("shm/torch_1_7_0", std::string(4096, 'x'));  // pid 1's name: "alive"
  SubreaperScope subreaper;
  Planted p = testing::plant_holder({.open_path = dir / "dev/nvidia0",
                                     .map_path = dir / "shm/torch_1_7_0",
                                     .orphan = true,
                                     .zombie_child = true});
  ASSERT_GT(p.holder, 0);
  ASSERT_GT(p.zombie, 0);
  HygieneOptions o;
  o.shm_dir = dir / "shm";
  o.device_pattern = dir / "dev/nvidia*";
  o.shm_min_age = 0;
  o.cgroup_dir = "";  // this machine's fault cgroups are not this test's
  o.orphan_parents = {1, ::getpid()};
  CheckReport r = machine_check(o);
  // Negative control: without this test as an orphan parent, nothing is orphaned.
  o.orphan_parents = {1};
  CheckReport control = machine_check(o);
  const pid_t holder = p.holder, zombie = p.zombie;
  testing::take_down(p);

  EXPECT_FALSE(r.clean());
  const auto* h = find(r, holder);
  ASSERT_NE(h, nullptr) << format_check_table(r);
  EXPECT_TRUE(h->orphan);
  EXPECT_TRUE(h->leftover);
  EXPECT_EQ(h->devices, (std::vector<std::string>{dir / "dev/nvidia0"}));
  EXPECT_EQ(h->shm, (std::vector<std::string>{"torch_1_7_0"}));
  EXPECT_EQ(h->uid, ::getuid());
  const auto* z = find(r, zombie);
  ASSERT_NE(z, nullptr) << format_check_table(r);
  EXPECT_TRUE(z->zombie);
  EXPECT_EQ(z->ppid, holder);
  EXPECT_EQ(find_shm(r, "torch_1_7_0")->mapped_by, (std::vector<pid_t>{holder}));

  EXPECT_TRUE(control.clean()) << format_check_table(control);
  ASSERT_NE(find(control, holder), nullptr);
  EXPECT_FALSE(find(control, holder)->leftover);
}

}  // namespace
}  // namespace aftermath
