// Unit tests for harness/hygiene (`aftermath check`): the classification on a
// fake /proc with planted /dev/shm entries, a FakeNvml and a scripted probe;
// the table and the JSON; and the check for real on planted orphans, zombies
// and /dev/shm entries started and cleaned up by the test.
#include "harness/hygiene/hygiene.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include <cstring>
#include <fstream>

#include "harness/observe/nvml_fake.h"
#include "reports/inspect.h"
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

const HygieneProcess* find(const InspectReport& r, int pid) {
  for (const auto& p : r.processes)
    if (p.proc.pid == pid) return &p;
  return nullptr;
}
const HygieneShm* find_shm(const InspectReport& r, const std::string& name) {
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

  InspectReport r = inspect_machine(opts_);
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
  EXPECT_TRUE(zombie->zombie());
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

  std::string table = inspect_table(r);
  EXPECT_NE(table.find("NOT CLEAN: 6 problem(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("LEFTOVER leftover: orphan"), std::string::npos) << table;
  EXPECT_NE(table.find("torch_999_1_0"), std::string::npos);
  EXPECT_NE(table.find("cudaErrorDevicesUnavailable"), std::string::npos);
  auto j = inspect_json(r);
  EXPECT_FALSE(j["clean"].get<bool>());
  EXPECT_EQ(j["problems"].size(), 6u);
  EXPECT_EQ(j["gpus"][0]["processes"][0]["pid"], 100);
  EXPECT_EQ(j["shm"].size(), 5u);
  EXPECT_EQ(j["roots"]["shm"], shm_);
}

// The young rule applies only while the creator may still map the segment:
// one whose creator is provably gone and that nobody uses is a leftover at
// once, whatever its age.
TEST_F(HygieneFake, ASegmentWhoseCreatorIsGoneIsALeftoverAtOnce) {
  proc_.add(1, 0, "init", 'S', 0);
  proc_.add(200, 1, "python3", 'S', 1000);
  proc_.add(500, 1, "python3", 'S', 1000, {500, 7});  // pid 7 in a nested PID namespace
  for (int i = 0; i < 9; ++i) plant("torch_999_" + std::to_string(i) + "_0", 4096, kSecond);
  plant("torch_200_1_0", 4096, kSecond);  // creator alive: in use
  plant("torch_7_1_0", 4096, kSecond);    // creator may be the nested pid 7: unknown, young
  plant("sem.mp-fresh", 32, kSecond);     // creator unknown: young
  InspectReport r = inspect_machine(opts_);
  EXPECT_FALSE(r.clean());
  EXPECT_EQ(r.problems.size(), 9u) << ::testing::PrintToString(r.problems);
  const auto* gone = find_shm(r, "torch_999_0_0");
  EXPECT_TRUE(gone->leftover);
  EXPECT_EQ(gone->creator, CreatorState::Gone);
  EXPECT_EQ(gone->why, "leftover: creator 999 is gone, no process maps or holds it");
  EXPECT_FALSE(find_shm(r, "torch_200_1_0")->leftover);
  const auto* nested = find_shm(r, "torch_7_1_0");
  EXPECT_FALSE(nested->leftover);
  EXPECT_EQ(nested->creator, CreatorState::Unknown);
  EXPECT_NE(nested->why.find("young"), std::string::npos) << nested->why;
  EXPECT_FALSE(find_shm(r, "sem.mp-fresh")->leftover);
  EXPECT_NE(inspect_table(r).find("NOT CLEAN: 9 problem(s)"), std::string::npos);
}

// /tmp residue: listed with owner and size, a leftover at once when its
// maker's sockets are unbound, after tmp_min_age otherwise, never while held.
class HygieneTmpFake : public HygieneFake {
 protected:
  void SetUp() override {
    HygieneFake::SetUp();
    tmp_ = dir_.path() + "/tmp";
    fs::create_directories(tmp_);
    opts_.tmp_dir = tmp_;
    opts_.tmp_min_age = 30 * kSecond;
    dir_.write("proc/net/unix", "Num       RefCount Protocol Flags    Type St Inode Path\n");
  }
  // A socket file whose socket is gone (bound, then closed).
  void socket_file(const std::string& path) {
    fs::create_directories(fs::path(path).parent_path());
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << path;
    ::close(fd);
  }
  // Every file under `rel` (and it) `age` old on the check's clock.
  void age_tree(const std::string& rel, Nanos age) {
    std::int64_t t = opts_.now_wall_ns - age;
    timespec times[2] = {{t / kSecond, t % kSecond}, {t / kSecond, t % kSecond}};
    std::string root = tmp_ + "/" + rel;
    for (auto& e : fs::recursive_directory_iterator(root))
      ::utimensat(AT_FDCWD, e.path().c_str(), times, AT_SYMLINK_NOFOLLOW);
    ::utimensat(AT_FDCWD, root.c_str(), times, AT_SYMLINK_NOFOLLOW);
  }
  void bound(std::uint64_t inode, const std::string& path) {
    std::ofstream(proc_.root() + "/net/unix", std::ios::app)
        << "0000000000000000: 00000002 00000000 00010000 0001 01 " << inode << " " << path << "\n";
  }
  const HygieneTmp* find_tmp(const InspectReport& r, const std::string& name) {
    for (const auto& t : r.tmp)
      if (t.name == name) return &t;
    return nullptr;
  }
  std::string tmp_;
};

TEST_F(HygieneTmpFake, ResidueNobodyHoldsIsALeftover) {
  proc_.add(1, 0, "init", 'S', 0);
  proc_.add(150, 1, "bash", 'S', 1000);
  proc_.add(100, 150, "python3", 'S', 1000);
  socket_file(tmp_ + "/pymp-gone/listener-1");  // maker gone: at once, though fresh
  age_tree("pymp-gone", kSecond);
  socket_file(tmp_ + "/pymp-held/listener-2");  // its listener is bound, by 100
  bound(77, tmp_ + "/pymp-held/listener-2");
  proc_.fd(100, 5, "socket:[77]");
  age_tree("pymp-held", 3600 * kSecond);
  socket_file(tmp_ + "/torch-shm-dir-a/manager.sock");  // bound by someone this /proc hides
  bound(78, tmp_ + "/torch-shm-dir-a/manager.sock");
  age_tree("torch-shm-dir-a", 3600 * kSecond);
  dir_.write("tmp/torchelastic_young/attempt_0/0/error.json", "{}");
  age_tree("torchelastic_young", kSecond);
  dir_.write("tmp/torchelastic_old/attempt_0/0/error.json", std::string(2048, 'e'));
  age_tree("torchelastic_old", 3600 * kSecond);
  // The torchrun shim's own folder, its agent SIGKILLed outside aftermath.
  dir_.write("tmp/aftermath-torchrun-x1/none_ab/attempt_0/0/stderr.log", std::string(100, 'l'));
  age_tree("aftermath-torchrun-x1", 3600 * kSecond);
  dir_.write("tmp/results.csv", "a,b\n");  // not residue: never listed
  InspectReport r = inspect_machine(opts_);
  EXPECT_EQ(r.tmp_dir, tmp_);
  ASSERT_EQ(r.tmp.size(), 6u);
  const auto* shim = find_tmp(r, "aftermath-torchrun-x1");
  ASSERT_NE(shim, nullptr);
  EXPECT_EQ(shim->kind, TmpKind::TorchrunShim);
  EXPECT_TRUE(shim->leftover);
  EXPECT_EQ(find_tmp(r, "results.csv"), nullptr);
  const auto* gone = find_tmp(r, "pymp-gone");
  EXPECT_TRUE(gone->leftover);
  EXPECT_TRUE(gone->maker_gone);
  EXPECT_EQ(gone->kind, TmpKind::Pymp);
  EXPECT_EQ(gone->uid, ::getuid());
  EXPECT_EQ(gone->why, "leftover: its maker is gone (listener-1 no longer bound), nobody holds it");
  const auto* held = find_tmp(r, "pymp-held");
  EXPECT_FALSE(held->leftover);
  EXPECT_EQ(held->held_by, std::vector<int>{100});
  EXPECT_EQ(held->why, "in use by 100");
  EXPECT_FALSE(find_tmp(r, "torch-shm-dir-a")->leftover);
  EXPECT_NE(find_tmp(r, "torch-shm-dir-a")->why.find("a socket under it is bound"),
            std::string::npos);
  EXPECT_FALSE(find_tmp(r, "torchelastic_young")->leftover);
  EXPECT_NE(find_tmp(r, "torchelastic_young")->why.find("young"), std::string::npos);
  const auto* old = find_tmp(r, "torchelastic_old");
  EXPECT_TRUE(old->leftover);
  EXPECT_EQ(old->bytes, 2048);
  EXPECT_EQ(old->why, "leftover: nobody holds it, older than 30s");
  ASSERT_EQ(r.problems.size(), 3u) << ::testing::PrintToString(r.problems);
  EXPECT_NE(
      ::testing::PrintToString(r.problems).find("aftermath-torchrun-x1 (torchrun-shim, 100 B"),
      std::string::npos)
      << ::testing::PrintToString(r.problems);
  EXPECT_NE(::testing::PrintToString(r.problems).find(tmp_ + "/pymp-gone (pymp, 0 B, uid "),
            std::string::npos);
  EXPECT_NE(::testing::PrintToString(r.problems).find("torchelastic_old (torchelastic, 2.0 KiB"),
            std::string::npos);
  std::string table = inspect_table(r);
  EXPECT_NE(table.find(tmp_ + " (pymp-*, torch-shm-dir-*, torchelastic_*, aftermath-torchrun-*)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("LEFTOVER leftover: its maker is gone"), std::string::npos) << table;
  auto j = inspect_json(r);
  EXPECT_EQ(j["tmp"].size(), 6u);
  EXPECT_EQ(j["roots"]["tmp"], tmp_);
  // "" looks nowhere.
  opts_.tmp_dir = "";
  EXPECT_TRUE(inspect_machine(opts_).tmp.empty());
}

// Residue held only by a leftover process goes once reap has ended it.
TEST_F(HygieneTmpFake, ResidueHeldOnlyByLeftoversIsFreedByReap) {
  proc_.add(1, 0, "init", 'S', 0);
  proc_.add(100, 1, "python3", 'S', 1000);  // an orphan holding a GPU: a leftover
  proc_.fd(100, 3, "/dev/nvidia0");
  socket_file(tmp_ + "/pymp-of-leftover/listener-1");
  bound(79, tmp_ + "/pymp-of-leftover/listener-1");
  proc_.fd(100, 4, "socket:[79]");
  InspectReport r = inspect_machine(opts_);
  const auto* t = find_tmp(r, "pymp-of-leftover");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->leftover);
  EXPECT_TRUE(t->freed_by_reap);
  EXPECT_EQ(t->why, "leftover once leftover process(es) 100 are gone");
}

// What could not be inspected is named, with why, where it could change a
// verdict; and only listed (JSON) where it could not.
TEST(HygieneUninspected, NamedWithWhyWhereItMatters) {
  ProcInfo init;
  init.pid = 1;
  init.comm = "process_api";
  init.uid = 0;
  InspectReport clean;
  Caller root{0, true, true};
  Uninspected u = judge_uninspected(init, false, clean, root);
  EXPECT_EQ(u.pid, 1);
  EXPECT_EQ(u.comm, "process_api");
  EXPECT_FALSE(u.matters) << "init is never a leftover, and no verdict rests on what it uses";
  EXPECT_EQ(u.why, "refused even to root with CAP_SYS_PTRACE: a security module guards it");

  InspectReport leaky;
  HygieneShm seg;
  seg.name = "torch_999_1_0";
  seg.leftover = true;
  leaky.shm = {seg};
  u = judge_uninspected(init, false, leaky, root);
  EXPECT_TRUE(u.matters);
  EXPECT_EQ(u.matters_why, "the leftover entries above assume it maps and holds none of them");
  InspectReport leaky_tmp;
  HygieneTmp t;
  t.leftover = true;
  leaky_tmp.tmp = {t};
  EXPECT_TRUE(judge_uninspected(init, false, leaky_tmp, root).matters);

  ProcInfo orphan = init;
  orphan.pid = 4242;
  orphan.uid = 2000;
  orphan.comm = "python3";
  u = judge_uninspected(orphan, true, clean, Caller{1000, false, false});
  EXPECT_TRUE(u.matters);
  EXPECT_EQ(u.why, "owned by uid 2000 (run as root to see other users')");
  EXPECT_NE(u.matters_why.find("orphan"), std::string::npos);
  EXPECT_EQ(
      judge_uninspected(orphan, false, clean, Caller{0, true, false}).why,
      "refused: this process lacks CAP_SYS_PTRACE and that one holds capabilities it does not");
}

// On this machine: nothing uninspected is noted unless it matters, and what
// is noted names its pid.
TEST(HygieneUninspected, TheRealMachinesNotesNameTheProcess) {
  TempDir dir("aftermath-hygiene-real");
  fs::create_directories(dir / "shm");
  HygieneOptions o;
  o.shm_dir = dir / "shm";
  o.device_pattern = dir / "dev/nvidia*";
  o.cgroup_dir = "";
  InspectReport r = inspect_machine(o);
  for (const auto& n : r.notes)
    EXPECT_EQ(n.find("could not be inspected: permission denied"), std::string::npos) << n;
  int noted = 0;
  for (const auto& u : r.uninspected) {
    bool found = false;
    for (const auto& n : r.notes)
      found |= n.rfind("pid " + std::to_string(u.pid) + " (" + u.comm, 0) == 0;
    EXPECT_EQ(found, u.matters) << u.pid << " " << u.comm << ": " << u.matters_why;
    noted += u.matters;
  }
  EXPECT_LE(noted, 5);
}

TEST_F(HygieneFake, OrphanWithoutHoldingsIsNotALeftover) {
  proc_.add(100, 1, "sleep", 'S', 1000);
  proc_.add(101, 100, "child", 'S', 1000);
  proc_.fd(101, 3, "/dev/nvidia0");  // held below a non-holding orphan
  auto r = inspect_machine(opts_);
  EXPECT_TRUE(r.clean()) << ::testing::PrintToString(r.problems);
  ASSERT_NE(find(r, 101), nullptr);
  EXPECT_FALSE(find(r, 101)->leftover);
}

TEST_F(HygieneFake, CleanMachine) {
  proc_.add(1, 0, "init", 'S', 0);
  FakeNvml nvml({{FakeNvml::gpu(0, 500)}});
  opts_.nvml = &nvml;
  auto r = inspect_machine(opts_);
  EXPECT_TRUE(r.clean());
  EXPECT_NE(inspect_table(r).find("CLEAN: nothing left behind"), std::string::npos);
  EXPECT_TRUE(inspect_json(r)["clean"].get<bool>());
}

TEST_F(HygieneFake, FaultCgroupsOfAGoneHarnessAreLeftovers) {
  proc_.add(1, 0, "init", 'S', 0);
  proc_.add(300, 1, "aftermath", 'S', 0);                           // a harness still running
  dir_.write("cg/aftermath-4242-0-f0-p100/cgroup.procs", "100\n");  // its harness is gone
  dir_.write("cg/aftermath-4243-3-f1-p7/cgroup.procs", "");
  dir_.write("cg/aftermath-300-1-f0-p5/cgroup.procs", "5\n");
  dir_.write("cg/system.slice/cgroup.procs", "");
  dir_.write("cg/aftermath-x-0/cgroup.procs", "");
  opts_.cgroup_dir = dir_ / "cg";
  auto r = inspect_machine(opts_);
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
  EXPECT_NE(inspect_table(r).find("aftermath-4243-3-f1-p7  LEFTOVER leftover: aftermath pid 4243"),
            std::string::npos)
      << inspect_table(r);
  EXPECT_EQ(inspect_json(r)["cgroups"].size(), 3u);
  EXPECT_EQ(inspect_json(r)["roots"]["cgroup"], dir_ / "cg");
  // "" looks nowhere.
  opts_.cgroup_dir = "";
  EXPECT_TRUE(inspect_machine(opts_).cgroups.empty());
}

TEST_F(HygieneFake, NoDriverIsNotedNotFailed) {
  FakeNvml nvml = FakeNvml::unavailable("no NVIDIA driver: cannot load libnvidia-ml.so.1");
  ScriptedProbe probe(ProbeReport{"no usable NVIDIA driver", {}});
  opts_.nvml = &nvml;
  opts_.probe = &probe;
  auto r = inspect_machine(opts_);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.gpu_unavailable, "no NVIDIA driver: cannot load libnvidia-ml.so.1");
  EXPECT_EQ(r.probe_unavailable, "no usable NVIDIA driver");
  EXPECT_NE(inspect_table(r).find("not inspected: no NVIDIA driver"), std::string::npos);
}

// --require-gpu: a GPU runner's step must not pass blind. The GPUs not
// inspected become a problem naming why; GPUs that were inspected, clean,
// stay clean.
TEST_F(HygieneFake, RequireGpuFailsWhenTheGpusCouldNotBeInspected) {
  FakeNvml none = FakeNvml::unavailable("no NVIDIA driver: cannot load libnvidia-ml.so.1");
  opts_.nvml = &none;
  opts_.require_gpu = true;
  auto blind = inspect_machine(opts_);
  ASSERT_FALSE(blind.clean()) << inspect_table(blind);
  EXPECT_EQ(blind.problems, std::vector<std::string>{"GPU not inspected (--require-gpu): no NVIDIA "
                                                     "driver: cannot load libnvidia-ml.so.1"});
  EXPECT_NE(inspect_table(blind).find("NOT CLEAN: 1 problem(s)"), std::string::npos);
  EXPECT_EQ(inspect_json(blind)["clean"], false);
  // NVML not consulted at all is as blind.
  opts_.nvml = nullptr;
  EXPECT_FALSE(inspect_machine(opts_).clean());

  FakeNvml one({{FakeNvml::gpu(0, 500)}});
  opts_.nvml = &one;
  auto seen = inspect_machine(opts_);
  EXPECT_TRUE(seen.clean()) << inspect_table(seen);
}

TEST_F(HygieneFake, BadDevicePatternIsAProblem) {
  opts_.device_pattern = "re:([";
  auto r = inspect_machine(opts_);
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
  InspectReport r = inspect_machine(o);
  // Negative control: without this test as an orphan parent, nothing is orphaned.
  o.orphan_parents = {1};
  InspectReport control = inspect_machine(o);
  const pid_t holder = p.holder, zombie = p.zombie;
  testing::take_down(p);

  EXPECT_FALSE(r.clean());
  const auto* h = find(r, holder);
  ASSERT_NE(h, nullptr) << inspect_table(r);
  EXPECT_TRUE(h->orphan);
  EXPECT_TRUE(h->leftover);
  EXPECT_EQ(h->devices, (std::vector<std::string>{dir / "dev/nvidia0"}));
  EXPECT_EQ(h->shm, (std::vector<std::string>{"torch_1_7_0"}));
  EXPECT_EQ(h->proc.uid, ::getuid());
  const auto* z = find(r, zombie);
  ASSERT_NE(z, nullptr) << inspect_table(r);
  EXPECT_TRUE(z->zombie());
  EXPECT_EQ(z->proc.ppid, holder);
  EXPECT_EQ(find_shm(r, "torch_1_7_0")->mapped_by, (std::vector<pid_t>{holder}));

  EXPECT_TRUE(control.clean()) << inspect_table(control);
  ASSERT_NE(find(control, holder), nullptr);
  EXPECT_FALSE(find(control, holder)->leftover);
}

}  // namespace
}  // namespace aftermath
