// Unit tests for harness/hygiene/reap (`aftermath reap`): the plan on
// hand-made reports (order, what is never touched), and reaping for real:
// orphans, zombies and /dev/shm entries planted by the test, reaped, then
// verified gone. Only processes this test started are ever signalled; the
// /dev/shm used is a scratch folder.
#include "harness/hygiene/reap.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "harness/inject/cgroup.h"
#include "reports/inspect.h"
#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;
using testing::Planted;
using testing::SubreaperScope;
using testing::TempDir;

HygieneProcess proc(int pid, int ppid, bool leftover, int depth = 0, unsigned uid = 1000) {
  HygieneProcess p;
  p.proc.pid = pid;
  p.proc.ppid = ppid;
  p.proc.uid = uid;
  p.proc.comm = "p" + std::to_string(pid);
  p.proc.state = 'S';
  p.leftover = leftover;
  p.depth = depth;
  p.proc.start_ticks = 1000 + pid;
  p.why = leftover ? "leftover" : "in use: its parent is alive";
  return p;
}

const ReapStep* step_for(const ReapPlan& plan, int pid) {
  for (const auto& s : plan.steps)
    if (s.kind == ReapStep::Kind::Terminate && s.pid == pid) return &s;
  return nullptr;
}

TEST(ReapPlan, ChildrenBeforeParentsAndNothingElse) {
  InspectReport r;
  r.shm_dir = "/dev/shm";
  r.processes = {proc(100, 1, true, 0), proc(101, 100, true, 1), proc(102, 101, true, 2),
                 proc(200, 150, false), proc(1, 0, true)};
  HygieneProcess z = proc(103, 100, true, 1);
  z.proc.state = 'Z';
  r.processes.push_back(z);
  HygieneProcess z2 = proc(300, 250, false);
  z2.proc.state = 'Z';
  r.processes.push_back(z2);
  ReapOptions o;
  o.uid = 1000;
  auto plan = plan_reap(r, o);
  std::vector<int> order;
  for (const auto& s : plan.steps) order.push_back(s.pid);
  EXPECT_EQ(order, (std::vector<int>{102, 101, 100})) << "deepest first; never pid 1";
  EXPECT_EQ(step_for(plan, 100)->start_ticks, 1100u);
  std::string untouched = ::testing::PrintToString(plan.untouched);
  EXPECT_EQ(plan.in_use,
            std::vector<std::string>{"pid 200 (p200, uid 1000): in use: its parent is alive"});
  EXPECT_EQ(untouched.find("pid 200"), std::string::npos)
      << "listed once, as in use: " << untouched;
  EXPECT_NE(untouched.find("pid 103 (p103, uid 1000): zombie; it is reaped once its parent 100"),
            std::string::npos)
      << untouched;
  EXPECT_NE(untouched.find("parent 250 is not a leftover this check listed"), std::string::npos)
      << untouched;
}

TEST(ReapPlan, OnlyYoursUnlessAllUsers) {
  InspectReport r;
  r.processes = {proc(100, 1, true, 0, 1000), proc(400, 1, true, 0, 2000)};
  HygieneShm theirs;
  theirs.name = "torch_5_1_0";
  theirs.uid = 2000;
  theirs.leftover = true;
  r.shm = {theirs};
  ReapOptions o;
  o.uid = 1000;
  auto plan = plan_reap(r, o);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].pid, 100);
  EXPECT_EQ(plan.untouched.size(), 2u);
  o.all_users = true;
  EXPECT_EQ(plan_reap(r, o).steps.size(), 3u);
}

TEST(ReapPlan, SegmentsUsedByLeftoversWaitForThem) {
  InspectReport r;
  r.processes = {proc(100, 1, true)};
  HygieneShm freed;
  freed.name = "torch_100_1_0";
  freed.uid = 1000;
  freed.freed_by_reap = true;
  freed.creator_pid = 100;
  freed.creator = CreatorState::Alive;
  freed.mapped_by = {100};
  HygieneShm blocked = freed;
  blocked.name = "torch_100_2_0";
  blocked.mapped_by = {100, 555};  // 555 is not being terminated
  HygieneShm in_use;
  in_use.name = "torch_555_1_0";
  in_use.uid = 1000;
  r.shm = {freed, blocked, in_use};
  ReapOptions o;
  o.uid = 1000;
  auto plan = plan_reap(r, o);
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].kind, ReapStep::Kind::Terminate) << "processes go first";
  EXPECT_EQ(plan.steps[1].name, "torch_100_1_0");
  EXPECT_TRUE(plan.steps[1].after_processes);
  EXPECT_NE(::testing::PrintToString(plan.untouched).find("torch_100_2_0"), std::string::npos);
  EXPECT_NE(format_reap_plan(plan, false).find("remove torch_100_1_0 (once its users are gone)"),
            std::string::npos);
}

TEST(ReapPlan, FaultCgroupsGoOnceTheirProcessesAre) {
  InspectReport r;
  r.processes = {proc(100, 1, true)};
  auto cg = [](std::string dir, std::vector<int> members, bool leftover, unsigned uid = 1000) {
    HygieneCgroup g;
    g.dir = std::move(dir);
    g.members = std::move(members);
    g.leftover = leftover;
    g.uid = uid;
    g.why = leftover ? "leftover" : "in use";
    return g;
  };
  r.cgroups = {
      cg("/cg/aftermath-1-0-f0-p9", {}, true), cg("/cg/aftermath-1-1-f0-p100", {100}, true),
      cg("/cg/aftermath-1-2-f0-p555", {555}, true), cg("/cg/aftermath-2-0-f0-p3", {3}, false),
      cg("/cg/aftermath-1-3-f0-p8", {}, true, 0)};
  ReapOptions o;
  o.uid = 1000;
  auto plan = plan_reap(r, o);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].kind, ReapStep::Kind::Terminate);
  EXPECT_EQ(plan.steps[1].kind, ReapStep::Kind::RemoveCgroup);
  EXPECT_EQ(plan.steps[1].name, "/cg/aftermath-1-0-f0-p9");
  EXPECT_FALSE(plan.steps[1].after_processes);
  EXPECT_EQ(plan.steps[2].name, "/cg/aftermath-1-1-f0-p100");
  EXPECT_TRUE(plan.steps[2].after_processes);
  std::string untouched = ::testing::PrintToString(plan.untouched);
  EXPECT_NE(
      untouched.find("/cg/aftermath-1-2-f0-p555: holds processes reap does not terminate (555)"),
      std::string::npos)
      << untouched;
  EXPECT_NE(untouched.find("/cg/aftermath-1-3-f0-p8: not yours (uid 0)"), std::string::npos)
      << untouched;
  EXPECT_NE(format_reap_plan(plan, false)
                .find("remove cgroup /cg/aftermath-1-1-f0-p100 (once its processes are gone)"),
            std::string::npos);
  EXPECT_EQ(reap_plan_json(plan)["steps"][1]["kind"], "remove_cgroup");
}

TEST(ReapPlan, TempDirResidueGoesWhenNobodyElseHoldsIt) {
  InspectReport r;
  r.tmp_dir = "/scratch/tmp";
  r.processes = {proc(100, 1, true)};
  auto tmp = [](std::string name, bool leftover, unsigned uid, std::vector<int> held = {}) {
    HygieneTmp t;
    t.name = std::move(name);
    t.kind = classify_tmp_name(t.name);
    t.leftover = leftover;
    t.freed_by_reap = !leftover && !held.empty();
    t.held_by = std::move(held);
    t.uid = uid;
    t.inode = 77;
    t.why = leftover ? "leftover" : "in use";
    return t;
  };
  r.tmp = {tmp("pymp-gone", true, 1000), tmp("torch-shm-dir-x", true, 0),
           tmp("pymp-of-leftover", false, 1000, {100}), tmp("pymp-shared", false, 1000, {100, 555}),
           tmp("torchelastic_live", false, 1000)};
  r.tmp.back().freed_by_reap = false;
  ReapOptions o;
  o.uid = 1000;
  auto plan = plan_reap(r, o);
  ASSERT_EQ(plan.steps.size(), 3u) << format_reap_plan(plan, false);
  EXPECT_EQ(plan.steps[0].kind, ReapStep::Kind::Terminate);
  EXPECT_EQ(plan.steps[1].kind, ReapStep::Kind::RemoveTmp);
  EXPECT_EQ(plan.steps[1].name, "/scratch/tmp/pymp-gone");
  EXPECT_EQ(plan.steps[1].inode, 77u);
  EXPECT_FALSE(plan.steps[1].after_processes);
  EXPECT_EQ(plan.steps[2].name, "/scratch/tmp/pymp-of-leftover");
  EXPECT_TRUE(plan.steps[2].after_processes);
  std::string untouched = ::testing::PrintToString(plan.untouched);
  EXPECT_NE(untouched.find("/scratch/tmp/torch-shm-dir-x: not yours (uid 0)"), std::string::npos)
      << untouched;
  EXPECT_NE(untouched.find("/scratch/tmp/pymp-shared: held by processes reap does not terminate"),
            std::string::npos)
      << untouched;
  EXPECT_EQ(untouched.find("torchelastic_live"), std::string::npos)
      << "in use: not reap's business";
  EXPECT_NE(
      format_reap_plan(plan, false).find("remove /scratch/tmp/pymp-gone and everything in it"),
      std::string::npos);
  EXPECT_EQ(reap_plan_json(plan)["steps"][1]["kind"], "remove_tmp");
}

// ---- for real

class ReapReal : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "shm");
    fs::create_directories(dir_ / "dev");
    dir_.write("dev/nvidia0", "");
    opts_.shm_dir = dir_ / "shm";
    opts_.device_pattern = dir_ / "dev/nvidia*";
    opts_.shm_min_age = 0;
    opts_.orphan_parents = {1, ::getpid()};
    opts_.cgroup_dir = "";  // this machine's fault cgroups are not these tests'
    reap_.uid = ::getuid();
    reap_.term_timeout = 2 * kSecond;
    reap_.kill_timeout = 5 * kSecond;
  }
  void TearDown() override {
    for (auto& p : planted_) testing::take_down(p);
  }
  // A pid that is certainly gone: a child of ours, reaped.
  pid_t dead_pid() {
    pid_t c = ::fork();
    if (c == 0) ::_exit(0);
    EXPECT_TRUE(testing::reap_child(c, 5 * kSecond));
    return c;
  }
  Planted& plant(testing::HolderSpec spec) {
    planted_.push_back(testing::plant_holder(spec));
    EXPECT_GT(planted_.back().holder, 0);
    return planted_.back();
  }

  TempDir dir_{"aftermath-reap"};
  HygieneOptions opts_;
  ReapOptions reap_;
  SubreaperScope subreaper_;
  std::vector<Planted> planted_;
};

TEST_F(ReapReal, KillsTheOrphanRemovesItsSegmentsAndVerifies) {
  pid_t dead = dead_pid();
  std::string gone_creator = "torch_" + std::to_string(dead) + "_1_0";  // creator dead, unused
  std::string mapped = "torch_" + std::to_string(dead) + "_2_0";        // mapped by the orphan
  dir_.write("shm/" + gone_creator, std::string(8192, 'x'));
  dir_.write("shm/" + mapped, std::string(4096, 'x'));
  dir_.write("shm/sem.mp-test", std::string(32, 'x'));
  Planted& p = plant({.open_path = dir_ / "dev/nvidia0",
                      .map_path = dir_ / ("shm/" + mapped),
                      .orphan = true,
                      .zombie_child = true});
  const pid_t holder = p.holder;

  InspectReport before = inspect_machine(opts_);
  ASSERT_FALSE(before.clean());
  ReapPlan plan = plan_reap(before, reap_);
  ASSERT_NE(step_for(plan, holder), nullptr) << format_reap_plan(plan, false);
  EXPECT_EQ(plan.steps.size(), 4u) << format_reap_plan(plan, false);

  // The plan alone (what --dry-run and a missing --yes show) touches nothing.
  EXPECT_TRUE(testing::alive(holder));
  EXPECT_TRUE(fs::exists(dir_ / ("shm/" + gone_creator)));

  ReapResult done = execute_reap(plan, opts_, reap_);
  std::string text = format_reap_plan(done.plan, true);
  EXPECT_NE(text.find("terminated by SIGTERM"), std::string::npos) << text;
  for (const auto& s : done.plan.steps) EXPECT_TRUE(s.done) << text;
  EXPECT_FALSE(testing::alive(holder));
  EXPECT_FALSE(fs::exists(dir_ / ("shm/" + gone_creator)));
  EXPECT_FALSE(fs::exists(dir_ / ("shm/" + mapped))) << "freed once its orphan was gone";
  EXPECT_FALSE(fs::exists(dir_ / "shm/sem.mp-test"));
  EXPECT_TRUE(fs::exists(dir_ / "dev/nvidia0")) << "device files are never removed";
  EXPECT_TRUE(done.after.clean()) << inspect_table(done.after);
}

TEST_F(ReapReal, EscalatesToSigkillForAHolderThatIgnoresSigterm) {
  Planted& p = plant({.open_path = dir_ / "dev/nvidia0", .orphan = true, .ignore_term = true});
  const pid_t holder = p.holder;
  reap_.term_timeout = 300 * kMilli;
  auto plan = plan_reap(inspect_machine(opts_), reap_);
  Nanos t0 = monotonic_now();
  auto done = execute_reap(plan, opts_, reap_);
  Nanos took = monotonic_now() - t0;
  const ReapStep* s = step_for(done.plan, holder);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->result.find("SIGKILL"), std::string::npos) << s->result;
  EXPECT_TRUE(s->done);
  EXPECT_GE(took, 300 * kMilli);
  EXPECT_LT(took, 5 * kSecond);
  EXPECT_FALSE(testing::alive(holder));
  EXPECT_TRUE(done.after.clean()) << inspect_table(done.after);
}

TEST_F(ReapReal, NeverTouchesAHolderWhoseParentIsAlive) {
  Planted& p = plant({.open_path = dir_ / "dev/nvidia0", .orphan = false});
  const pid_t holder = p.holder;
  auto before = inspect_machine(opts_);
  EXPECT_TRUE(before.clean()) << inspect_table(before);
  auto plan = plan_reap(before, reap_);
  EXPECT_TRUE(plan.steps.empty());
  auto done = execute_reap(plan, opts_, reap_);
  EXPECT_TRUE(testing::alive(holder));
  EXPECT_NE(::testing::PrintToString(plan.in_use).find("in use: its parent"), std::string::npos);
}

TEST_F(ReapReal, RefusesAPidWhoseStartTimeChanged) {
  Planted& p = plant({.open_path = dir_ / "dev/nvidia0", .orphan = true});
  const pid_t holder = p.holder;
  auto plan = plan_reap(inspect_machine(opts_), reap_);
  ASSERT_EQ(plan.steps.size(), 1u);
  plan.steps[0].start_ticks += 1;  // as if the pid had been reused since the check
  auto done = execute_reap(plan, opts_, reap_);
  EXPECT_NE(done.plan.steps[0].result.find("refused"), std::string::npos)
      << done.plan.steps[0].result;
  EXPECT_FALSE(done.plan.steps[0].done);
  EXPECT_TRUE(testing::alive(holder));
  EXPECT_FALSE(done.after.clean());
}

TEST_F(ReapReal, KeepsASegmentSomeoneStartedToUse) {
  // Planned while unused, mapped by a live process before removal: kept.
  pid_t dead = dead_pid();
  std::string name = "torch_" + std::to_string(dead) + "_3_0";
  dir_.write("shm/" + name, std::string(4096, 'x'));
  auto plan = plan_reap(inspect_machine(opts_), reap_);
  ASSERT_EQ(plan.steps.size(), 1u);
  plant({.map_path = dir_ / ("shm/" + name), .orphan = false});
  auto done = execute_reap(plan, opts_, reap_);
  EXPECT_NE(done.plan.steps[0].result.find("kept: still used by"), std::string::npos)
      << done.plan.steps[0].result;
  EXPECT_TRUE(fs::exists(dir_ / ("shm/" + name)));
}

// A fault cgroup left by a harness that is gone (a real memory cgroup, where
// this machine has a home for them) is found and removed; one with a live
// process of ours in it is left alone.
TEST_F(ReapReal, RemovesTheFaultCgroupOfAGoneHarness) {
  auto home = find_memory_cgroup_home();
  if (!home) GTEST_SKIP() << "no memory cgroup to use here: " << home.error().what;
  pid_t dead = dead_pid();
  std::string stale = home->dir + "/aftermath-" + std::to_string(dead) + "-0-f0-p1";
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0) << stale << ": " << std::strerror(errno);
  // A second one, still holding a sleeping child of ours.
  std::string busy = home->dir + "/aftermath-" + std::to_string(dead) + "-1-f0-p2";
  ASSERT_EQ(::mkdir(busy.c_str(), 0755), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::ofstream(busy + "/cgroup.procs") << child;
  opts_.cgroup_dir = home->dir;
  auto before = inspect_machine(opts_);
  int leftovers = 0;
  for (const auto& g : before.cgroups)
    leftovers += g.leftover && g.dir.find(std::to_string(dead)) != std::string::npos;
  std::string seen;
  for (const auto& g : before.cgroups) seen += g.dir + " (" + g.why + ")\n";
  EXPECT_EQ(leftovers, 2) << seen << "/proc/" << dead
                          << (fs::exists("/proc/" + std::to_string(dead)) ? " exists" : " is gone");
  auto plan = plan_reap(before, reap_);
  auto done = execute_reap(plan, opts_, reap_);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(busy));
  bool removed = false;
  for (const auto& s : done.plan.steps)
    if (s.kind == ReapStep::Kind::RemoveCgroup && s.name == stale)
      removed = s.done && s.result == "removed";
  EXPECT_TRUE(removed) << format_reap_plan(done.plan, true);
  EXPECT_NE(::testing::PrintToString(done.plan.untouched)
                .find(busy + ": holds processes reap does not terminate"),
            std::string::npos);
  ::kill(child, SIGKILL);
  EXPECT_TRUE(testing::reap_child(child, 5 * kSecond));
  EXPECT_TRUE(remove_cgroup_dir(busy, 5 * kSecond));
  EXPECT_FALSE(fs::exists(busy));
}

// A segment named for a dead creator, fresh and unused, is a leftover at once
// (no shm_min_age wait), and reap removes it.
TEST_F(ReapReal, AFreshSegmentOfADeadCreatorIsReapedAtOnce) {
  opts_.shm_min_age = 30 * kSecond;
  pid_t dead = dead_pid();
  std::string name = "torch_" + std::to_string(dead) + "_1_0";
  dir_.write("shm/" + name, std::string(4096, 'x'));
  auto before = inspect_machine(opts_);
  ASSERT_FALSE(before.clean()) << inspect_table(before);
  auto done = execute_reap(plan_reap(before, reap_), opts_, reap_);
  EXPECT_FALSE(fs::exists(dir_ / ("shm/" + name)));
  EXPECT_TRUE(done.after.clean()) << inspect_table(done.after);
}

// Temp-dir residue: removed when its maker is gone and nobody holds it; kept
// while a live process holds it, or when one takes it up after the check.
TEST_F(ReapReal, RemovesTempDirResidueNobodyHolds) {
  fs::create_directories(dir_ / "tmp/pymp-gone");
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::string path = dir_ / "tmp/pymp-gone/listener-1";
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);  // its maker is gone: the socket file stays, unbound
  }
  dir_.write("tmp/pymp-gone/sub/f", "x");
  // The torchrun shim's folder, left by an agent killed outside aftermath.
  dir_.write("tmp/aftermath-torchrun-gone/none_ab/attempt_0/0/stderr.log", "x");
  dir_.write("tmp/pymp-held/f", "x");
  dir_.write("tmp/pymp-late/f", "x");
  dir_.write("tmp/keep.txt", "a job's output");
  opts_.tmp_dir = dir_ / "tmp";
  opts_.tmp_min_age = 0;  // pymp-late is judged by age: old enough at once
  plant({.open_path = dir_ / "tmp/pymp-held/f", .orphan = false});
  auto before = inspect_machine(opts_);
  auto plan = plan_reap(before, reap_);
  ASSERT_EQ(plan.steps.size(), 3u) << format_reap_plan(plan, false);
  // Someone takes pymp-late up between the check and the removal.
  plant({.open_path = dir_ / "tmp/pymp-late/f", .orphan = false});
  auto done = execute_reap(plan, opts_, reap_);
  std::string text = format_reap_plan(done.plan, true);
  EXPECT_FALSE(fs::exists(dir_ / "tmp/pymp-gone")) << text;
  EXPECT_FALSE(fs::exists(dir_ / "tmp/aftermath-torchrun-gone")) << text;
  EXPECT_TRUE(fs::exists(dir_ / "tmp/pymp-held"));
  EXPECT_TRUE(fs::exists(dir_ / "tmp/pymp-late")) << text;
  EXPECT_NE(text.find("kept: still held by"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(dir_ / "tmp/keep.txt")) << "only residue is ever removed";
}

TEST_F(ReapReal, NotYoursIsLeftAlone) {
  Planted& p = plant({.open_path = dir_ / "dev/nvidia0", .orphan = true});
  reap_.uid = ::getuid() + 1;
  auto plan = plan_reap(inspect_machine(opts_), reap_);
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_NE(::testing::PrintToString(plan.untouched).find("not yours"), std::string::npos);
  EXPECT_TRUE(testing::alive(p.holder));
}

}  // namespace
}  // namespace aftermath
