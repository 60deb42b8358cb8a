// Unit tests for the process table snapshot (harness/observe/process_index):
// status parsing, pids across PID namespace levels, ancestors, the job's and
// orphan rule, on a fake /proc and on this process's own.
#include "harness/observe/process_index.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

using testing::FakeProc;
using testing::TempDir;

TEST(ProcessIndexStatus, UidAndNspid) {
  std::string status = "Name:\tpython3\nUid:\t1000\t1001\t1002\t1003\nNSpid:\t9100\t4100\t7\n";
  EXPECT_EQ(parse_status_uid(status), 1000u);
  EXPECT_FALSE(parse_status_uid("Name:\tx\n"));
  ProcInfo p;
  p.nspid = parse_status_nspid(status);
  EXPECT_EQ(p.pid_at(0), 9100);
  EXPECT_EQ(p.pid_at(2), 7);
  EXPECT_EQ(p.pid_at(3), 0);
}

TEST(ProcessIndexStatus, AUidThatIsNotANumberIsNone) {
  EXPECT_EQ(parse_status_uid("Uid:\tabc\t1\n"), std::nullopt);
  EXPECT_EQ(parse_status_uid("Uid:\n"), std::nullopt);
  EXPECT_EQ(parse_status_uid("Name:\tUid: 5\n"), std::nullopt);  // only at a line's start
  EXPECT_EQ(parse_status_uid("Name:\tx\nUid:   0\t0\n"), 0u);
  EXPECT_EQ(parse_status_uid("Uid:\t4294967295\n"), 4294967295u);
  EXPECT_EQ(parse_status_uid("Uid:\t4294967296\n"), std::nullopt);  // out of range
}

TEST(ProcessIndexInfo, PidAtLevelsOutsideTheChainIsZero) {
  ProcInfo p;
  p.pid = 9100;
  p.nspid = {9100, 7};
  EXPECT_EQ(p.pid_at(-1), 0);
  EXPECT_EQ(p.pid_at(1), 7);
  EXPECT_EQ(p.pid_at(2), 0);
}

TEST(ProcessIndexInfo, ZombieAndDeadStatesAreZombies) {
  ProcInfo p;
  for (char s : {'Z', 'X'}) {
    p.state = s;
    EXPECT_TRUE(p.zombie()) << s;
  }
  for (char s : {'R', 'S', 'D', 'T', 't', 'I', '?'}) {
    p.state = s;
    EXPECT_FALSE(p.zombie()) << s;
  }
}

class ProcessIndexFake : public ::testing::Test {
 protected:
  TempDir dir_{"aftermath-process-index"};
  FakeProc proc_{dir_};
};

TEST_F(ProcessIndexFake, AncestorsAndLevels) {
  proc_.add(1, 0, "init");
  proc_.add(10, 1, "a", 'S', 0, {10, 1});
  proc_.add(11, 10, "b", 'S', 0, {11, 2});
  proc_.add(20, 1, "c", 'S', 0, {20, 1});
  auto idx = ProcessIndex::scan(ProcReader(proc_.root()));
  EXPECT_EQ(idx.ancestors(11), (std::vector<int>{10, 1}));
  EXPECT_EQ(idx.find_at_level(2, 1)->pid, 11);
  EXPECT_EQ(idx.find_at_level(1, 1), nullptr) << "pid 1 at level 1 exists in two namespaces";
  EXPECT_EQ(idx.find_at_level(20, 0)->pid, 20);
}

TEST_F(ProcessIndexFake, ScanReadsStatAndStatus) {
  proc_.add(42, 7, "python3", 'D', 1234, {42, 5}, 98765);
  auto idx = ProcessIndex::scan(ProcReader(proc_.root()));
  const ProcInfo* p = idx.get(42);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->ppid, 7);
  EXPECT_EQ(p->state, 'D');
  EXPECT_EQ(p->comm, "python3");
  EXPECT_EQ(p->uid, 1234u);
  EXPECT_EQ(p->start_ticks, 98765u);
  EXPECT_EQ(p->nspid, (std::vector<int>{42, 5}));
  EXPECT_EQ(idx.get(43), nullptr);
  EXPECT_EQ(idx.all().size(), 1u);
}

// A process that went between the stat and status reads is left out, not
// listed half-read.
TEST_F(ProcessIndexFake, AProcessWithoutStatusIsSkipped) {
  proc_.add(42, 1, "stays");
  proc_.add(43, 1, "going");
  std::filesystem::remove(proc_.root() + "/43/status");
  auto idx = ProcessIndex::scan(ProcReader(proc_.root()));
  EXPECT_NE(idx.get(42), nullptr);
  EXPECT_EQ(idx.get(43), nullptr);
  EXPECT_EQ(read_proc_info(ProcReader(proc_.root()), 43), std::nullopt);
  EXPECT_EQ(read_proc_info(ProcReader(proc_.root()), 44), std::nullopt);  // never there
  auto stays = read_proc_info(ProcReader(proc_.root()), 42);
  ASSERT_TRUE(stays.has_value());
  EXPECT_EQ(stays->comm, "stays");
}

// A kernel without NSpid (before 4.1): the chain is the pid alone.
TEST_F(ProcessIndexFake, NoNspidLineMeansThePidAlone) {
  proc_.add(42, 1, "old");
  std::ofstream(proc_.root() + "/42/status") << "Name:\told\nUid:\t5\t5\t5\t5\n";
  auto idx = ProcessIndex::scan(ProcReader(proc_.root()));
  ASSERT_NE(idx.get(42), nullptr);
  EXPECT_EQ(idx.get(42)->nspid, (std::vector<int>{42}));
  EXPECT_EQ(idx.get(42)->uid, 5u);
}

TEST(ProcessIndexAdd, AnEmptyChainBecomesThePidAndALaterAddReplaces) {
  ProcessIndex idx;
  ProcInfo p;
  p.pid = 5;
  p.comm = "first";
  idx.add(p);
  EXPECT_EQ(idx.get(5)->nspid, (std::vector<int>{5}));
  EXPECT_EQ(idx.find_at_level(5, 0), idx.get(5));
  p.comm = "second";
  idx.add(p);
  EXPECT_EQ(idx.all().size(), 1u);
  EXPECT_EQ(idx.get(5)->comm, "second");
}

TEST(ProcessIndexAncestors, StopAtAMissingParentAndAtALoop) {
  ProcessIndex idx;
  auto add = [&](int pid, int ppid) {
    ProcInfo p;
    p.pid = pid;
    p.ppid = ppid;
    idx.add(p);
  };
  add(30, 20);  // 20 is not in the index
  EXPECT_EQ(idx.ancestors(30), (std::vector<int>{20}));
  add(40, 41);  // a parent loop, as a torn scan can leave
  add(41, 40);
  EXPECT_EQ(idx.ancestors(40), (std::vector<int>{41}));
  add(1, 0);
  add(2, 1);
  EXPECT_EQ(idx.ancestors(2), (std::vector<int>{1}));  // pid 0 is not listed
  EXPECT_TRUE(idx.ancestors(99).empty());
}

TEST(ProcessIndexJobRef, TheJobByItsPidsAtItsLevelAndOrphansByTheirParent) {
  ProcInfo p;
  p.pid = 200;
  p.ppid = 150;
  p.nspid = {200, 3};
  JobRef job;
  job.pids = {3};
  job.pid_level = 1;
  EXPECT_TRUE(job.contains(p));
  job.pid_level = 0;
  EXPECT_FALSE(job.contains(p));  // 3 is not its pid at level 0
  EXPECT_FALSE(job.orphan(p));
  p.ppid = 1;
  EXPECT_TRUE(job.orphan(p));  // re-parented to init
  job.orphan_parents = {150};
  EXPECT_FALSE(job.orphan(p));
  p.ppid = 150;
  EXPECT_TRUE(job.orphan(p));  // re-parented to the job's reaper
}

TEST(ProcessIndexReal, ThisProcessIsInTheIndexWithItsParent) {
  auto idx = ProcessIndex::scan(ProcReader("/proc"));
  const ProcInfo* self = idx.get(::getpid());
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->ppid, ::getppid());
  EXPECT_EQ(self->uid, ::getuid());
  EXPECT_FALSE(self->zombie());
  auto ancestors = idx.ancestors(::getpid());
  ASSERT_FALSE(ancestors.empty());
  EXPECT_EQ(ancestors.front(), ::getppid());
}

}  // namespace
}  // namespace aftermath
