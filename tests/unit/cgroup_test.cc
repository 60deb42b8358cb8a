// Host OOM by the kernel's OOM killer: where fault cgroups go, on planted
// /proc and cgroup trees for each layout (v1, v2, hybrid, containers, a
// configured cgroup); what is written when one is made (planted v2 tree);
// and, where this machine has a memory cgroup we may use, the real thing: a
// child limited to 16 MiB of new charges is killed by the kernel when it
// touches 256 MiB, and the cgroup counts the kill.
#include "harness/inject/cgroup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/children.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using aftermath::testing::slurp;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;
using testing_children::readable_within;
using testing_children::reap_within;

// A planted machine: /proc/self/{cgroup,mountinfo} under proc/, cgroup
// mounts under cg/.
struct Planted {
  TempDir t{"aftermath-cgroup"};
  std::string proc() const { return t.path() + "/proc"; }
  std::string cg(const std::string& rel = "") const { return t.path() + "/cg" + rel; }
  void self(const std::string& cgroup, const std::string& mountinfo) const {
    t.write("proc/self/cgroup", cgroup);
    t.write("proc/self/mountinfo", mountinfo);
  }
  // One mountinfo line for a cgroup mount at cg<at>.
  std::string mount(const std::string& at, const std::string& fstype, const std::string& super,
                    const std::string& root = "/") const {
    return "40 31 0:30 " + root + " " + cg(at) + " rw,relatime - " + fstype + " cgroup " + super +
           "\n";
  }
};

const char kTmpfs[] = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n";

// --- where ---------------------------------------------------------------------------------

TEST(CgroupHome, V1MemoryIsOurOwnMemoryCgroup) {
  Planted p;
  p.self("9:name=systemd:/\n4:memory:/ci/job7\n3:cpuset:/\n0::/\n",
         kTmpfs + p.mount("/memory", "cgroup", "rw,memory") + p.mount("/cpu", "cgroup", "rw,cpu") +
             p.mount("/unified", "cgroup2", "rw"));
  p.t.write("cg/memory/ci/job7/memory.limit_in_bytes", "9223372036854771712\n");
  auto r = find_memory_cgroup_home(p.proc(), "");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->version, 1);
  EXPECT_EQ(r->dir, p.cg("/memory/ci/job7"));
}

TEST(CgroupHome, V1InAContainerStripsTheMountRoot) {
  // The hierarchy is mounted from /ci/job7: our path is relative to the
  // hierarchy's root, the mount shows only the part below its root.
  Planted p;
  p.self("4:memory:/ci/job7/inner\n0::/\n", p.mount("/memory", "cgroup", "rw,memory", "/ci/job7"));
  p.t.write("cg/memory/inner/memory.limit_in_bytes", "max\n");
  auto r = find_memory_cgroup_home(p.proc(), "");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->dir, p.cg("/memory/inner"));
}

TEST(CgroupHome, V1WithoutItsMountOrDirectory) {
  Planted p;
  p.self("4:memory:/a\n", p.mount("/cpu", "cgroup", "rw,cpu"));
  auto r = find_memory_cgroup_home(p.proc(), "");
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error().what, "memory is on cgroup v1, but its hierarchy is not mounted here");
  p.self("4:memory:/a\n", p.mount("/memory", "cgroup", "rw,memory"));
  r = find_memory_cgroup_home(p.proc(), "");
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error().what,
            "memory is on cgroup v1, but " + p.cg("/memory/a") + " is not its cgroup directory");
}

TEST(CgroupHome, V1WinsOverAHybridUnifiedMountWithoutMemory) {
  // This machine's layout: memory on v1, a v2 hierarchy holding only hugetlb.
  Planted p;
  p.self("4:memory:/x\n0::/\n",
         p.mount("/memory", "cgroup", "rw,memory") + p.mount("/unified", "cgroup2", "rw"));
  p.t.write("cg/memory/x/memory.limit_in_bytes", "1\n");
  p.t.write("cg/unified/cgroup.controllers", "hugetlb\n");
  auto r = find_memory_cgroup_home(p.proc(), "");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->version, 1);
}

TEST(CgroupHome, V2TheNearestAncestorThatGivesItsChildrenMemory) {
  // A systemd service: its own cgroup holds processes; the slice above
  // enables memory for its children.
  Planted p;
  p.self("0::/system.slice/ci.service\n", p.mount("", "cgroup2", "rw,nsdelegate"));
  p.t.write("cg/cgroup.controllers", "cpu io memory pids\n");
  p.t.write("cg/cgroup.subtree_control", "cpu io memory pids\n");
  p.t.write("cg/system.slice/cgroup.controllers", "cpu io memory pids\n");
  p.t.write("cg/system.slice/cgroup.subtree_control", "io memory pids\n");
  p.t.write("cg/system.slice/ci.service/cgroup.controllers", "io memory pids\n");
  p.t.write("cg/system.slice/ci.service/cgroup.subtree_control", "");
  auto r = find_memory_cgroup_home(p.proc(), "");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(r->dir, p.cg("/system.slice"));
}

TEST(CgroupHome, V2TheRootMayEnableMemoryItself) {
  Planted p;
  p.self("0::/\n", p.mount("", "cgroup2", "rw"));
  p.t.write("cg/cgroup.controllers", "cpu memory pids\n");
  p.t.write("cg/cgroup.subtree_control", "");
  auto r = find_memory_cgroup_home(p.proc(), "");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->dir, p.cg());
}

TEST(CgroupHome, V2NoAncestorEnablesMemory) {
  Planted p;
  p.self("0::/a/b\n", p.mount("", "cgroup2", "rw"));
  p.t.write("cg/cgroup.controllers", "memory\n");
  p.t.write("cg/cgroup.subtree_control", "cpu\n");
  p.t.write("cg/a/cgroup.subtree_control", "cpu\n");
  p.t.write("cg/a/b/cgroup.controllers", "cpu memory\n");
  auto r = find_memory_cgroup_home(p.proc(), "");
  EXPECT_FALSE(r);
  EXPECT_THAT(r.error().what, HasSubstr("no cgroup from " + p.cg("/a/b") + " up enables memory"));
  EXPECT_THAT(r.error().what, HasSubstr("AFTERMATH_CGROUP"));
}

TEST(CgroupHome, V2WithoutTheMemoryController) {
  Planted p;
  p.self("0::/x\n", p.mount("", "cgroup2", "rw"));
  p.t.write("cg/x/cgroup.controllers", "cpuset cpu io pids\n");
  auto r = find_memory_cgroup_home(p.proc(), "");
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error().what, "the memory controller is not available in " + p.cg("/x") +
                                " (cgroup.controllers: cpuset cpu io pids)");
}

TEST(CgroupHome, MountPointsWithBlanksAreUnescaped) {
  Planted p;
  p.t.write("cg/my cgroups/x/memory.limit_in_bytes", "1\n");
  p.self("4:memory:/x\n",
         "40 31 0:30 / " + p.cg("/my\\040cgroups") + " rw - cgroup cgroup rw,memory\n");
  auto r = find_memory_cgroup_home(p.proc(), "");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->dir, p.cg("/my cgroups/x"));
}

TEST(CgroupHome, NothingToRead) {
  Planted p;
  auto r = find_memory_cgroup_home(p.proc(), "");
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error().what, "cannot read " + p.proc() + "/self/cgroup or mountinfo");
  p.self("3:cpu,cpuacct:/\n1:name=systemd:/\n", kTmpfs);
  r = find_memory_cgroup_home(p.proc(), "");
  EXPECT_EQ(r.error().what, "this process is in no memory cgroup (neither v1 nor v2)");
}

TEST(CgroupHome, AConfiguredCgroupIsTakenAsItIs) {
  Planted p;
  p.t.write("cg/delegated/cgroup.controllers", "cpu memory\n");
  auto r = find_memory_cgroup_home(p.proc(), p.cg("/delegated"));
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(r->dir, p.cg("/delegated"));

  p.t.write("cg/v1/memory.limit_in_bytes", "1\n");
  r = find_memory_cgroup_home(p.proc(), p.cg("/v1"));
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->version, 1);

  p.t.write("cg/nomem/cgroup.controllers", "cpu pids\n");
  r = find_memory_cgroup_home(p.proc(), p.cg("/nomem"));
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error().what, "AFTERMATH_CGROUP=" + p.cg("/nomem") +
                                " has no memory controller (cgroup.controllers: cpu pids)");

  r = find_memory_cgroup_home(p.proc(), p.cg("/absent"));
  EXPECT_EQ(r.error().what, "AFTERMATH_CGROUP=" + p.cg("/absent") + " is not a directory");

  fs::create_directories(p.cg("/plain"));
  r = find_memory_cgroup_home(p.proc(), p.cg("/plain"));
  EXPECT_THAT(r.error().what, HasSubstr("is not a memory cgroup"));
}

TEST(CgroupHome, TheEnvironmentNamesIt) {
  Planted p;
  p.t.write("cg/fromenv/cgroup.controllers", "memory\n");
  ::setenv("AFTERMATH_CGROUP", p.cg("/fromenv").c_str(), 1);
  auto r = find_memory_cgroup_home(p.proc(), "");
  ::unsetenv("AFTERMATH_CGROUP");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->dir, p.cg("/fromenv"));
}

// --- what is written ------------------------------------------------------------------------

TEST(MemoryCgroup, V2EnablesMemoryLimitsAndMovesOnAPlantedTree) {
  Planted p;
  p.t.write("cg/home/cgroup.subtree_control", "cpu\n");
  auto made = MemoryCgroup::create(CgroupHome{2, p.cg("/home")}, "f0", 16 << 20);
  ASSERT_TRUE(made) << made.error().what;
  auto& cg = *made;
  EXPECT_EQ(cg->dir(), p.cg("/home/f0"));
  EXPECT_EQ(slurp(p.cg("/home/cgroup.subtree_control")), "+memory");
  EXPECT_EQ(slurp(p.cg("/home/f0/memory.max")), "16777216");
  EXPECT_TRUE(cg->add(4242));
  EXPECT_EQ(slurp(p.cg("/home/f0/cgroup.procs")), "4242");
  EXPECT_EQ(cg->oom_kills(), std::nullopt);  // no memory.events yet
  p.t.write("cg/home/f0/memory.events",
            "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n");
  EXPECT_EQ(cg->oom_kills(), 1);
  // A planted folder is not a cgroup: it holds files, so rmdir says why.
  Status closed = cg->close(0);
  ASSERT_FALSE(closed);
  EXPECT_THAT(closed.error().what, HasSubstr("rmdir " + p.cg("/home/f0")));
}

TEST(MemoryCgroup, V1WritesTheLimitAndReadsOomControl) {
  Planted p;
  fs::create_directories(p.cg("/mem"));
  auto made = MemoryCgroup::create(CgroupHome{1, p.cg("/mem")}, "f1", 1 << 20);
  ASSERT_TRUE(made) << made.error().what;
  auto& cg = *made;
  EXPECT_EQ(slurp(p.cg("/mem/f1/memory.limit_in_bytes")), "1048576");
  p.t.write("cg/mem/f1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
  EXPECT_EQ(cg->oom_kills(), 3);
}

TEST(MemoryCgroup, AnExistingNameIsRefusedAndNothingIsLeft) {
  Planted p;
  fs::create_directories(p.cg("/mem/taken"));
  auto cg = MemoryCgroup::create(CgroupHome{1, p.cg("/mem")}, "taken", 1 << 20);
  ASSERT_FALSE(cg);
  EXPECT_THAT(cg.error().what, HasSubstr("mkdir " + p.cg("/mem/taken")));
}

TEST(MemoryCgroup, ParseOomKill) {
  EXPECT_EQ(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"), 0);
  EXPECT_EQ(parse_oom_kill("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n"), 2);
  EXPECT_EQ(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\n"), std::nullopt);  // before 4.13
}

TEST(MemoryCgroup, NamesAreFreshAndSayWhose) {
  std::string a = fault_cgroup_name(2, 77), b = fault_cgroup_name(2, 77);
  EXPECT_NE(a, b);
  EXPECT_THAT(a, HasSubstr("aftermath-" + std::to_string(::getpid()) + "-"));
  EXPECT_THAT(a, HasSubstr("-f2-p77"));
}

// --- the real thing -------------------------------------------------------------------------

// A child that waits for a byte on `go`, then touches `mb` MiB and exits 0.
pid_t toucher(int go_read, int mb) {
  pid_t pid = ::fork();
  if (pid == 0) {
    char c;
    if (::read(go_read, &c, 1) != 1) _exit(2);
    size_t bytes = size_t(mb) << 20;
    char* m = static_cast<char*>(::malloc(bytes));
    if (!m) _exit(3);
    ::memset(m, 1, bytes);
    _exit(m[bytes - 1] == 1 ? 0 : 4);
  }
  return pid;
}

// Runs a toucher of 256 MiB, limited to 16 MiB of new charges when
// `limited`; its wait status and the cgroup's kill count.
std::pair<int, std::optional<long long>> touch_256(const CgroupHome& home, bool limited) {
  int go[2];
  if (::pipe(go) != 0) return {-1, std::nullopt};
  pid_t pid = toucher(go[0], 256);
  ::close(go[0]);
  std::unique_ptr<MemoryCgroup> cg;
  if (limited) {
    auto made = MemoryCgroup::create(home, fault_cgroup_name(0, pid), 16 << 20);
    EXPECT_TRUE(made) << made.error().what;
    if (made) {
      cg = std::move(*made);
      EXPECT_TRUE(cg->add(pid));
    }
  }
  EXPECT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  int status = reap_within(pid, 30000);
  std::optional<long long> kills;
  if (cg) {
    kills = cg->oom_kills();
    std::string dir = cg->dir();
    EXPECT_TRUE(cg->close());
    EXPECT_FALSE(fs::exists(dir)) << dir;
  }
  return {status, kills};
}

TEST(MemoryCgroupReal, TheKernelKillsTheTargetAndCountsIt) {
  auto r = find_memory_cgroup_home();
  if (!r) GTEST_SKIP() << "no memory cgroup to use here: " << r.error().what;
  auto [status, kills] = touch_256(*r, true);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(kills, 1);
  // Negative control: the same child, not limited, touches its 256 MiB.
  auto [free_status, none] = touch_256(*r, false);
  EXPECT_TRUE(WIFEXITED(free_status) && WEXITSTATUS(free_status) == 0) << free_status;
  EXPECT_EQ(none, std::nullopt);
}

TEST(MemoryCgroupReal, CloseWaitsOutAMemberThatIsStillThere) {
  auto r = find_memory_cgroup_home();
  if (!r) GTEST_SKIP() << "no memory cgroup to use here: " << r.error().what;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  pid_t pid = toucher(go[0], 1);
  ::close(go[0]);
  auto made = MemoryCgroup::create(*r, fault_cgroup_name(1, pid), 64 << 20);
  ASSERT_TRUE(made) << made.error().what;
  auto& cg = *made;
  ASSERT_TRUE(cg->add(pid));
  // A live member: rmdir is refused until the deadline, and says so.
  Status busy = cg->close(50 * kMilli);
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().errnum, EBUSY);
  EXPECT_THAT(busy.error().what, HasSubstr(std::strerror(EBUSY)));
  EXPECT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  int status = reap_within(pid, 30000);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(cg->close());
}

}  // namespace
}  // namespace aftermath
