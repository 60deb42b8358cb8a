// Unit tests for harness/supervise/tmp_watch (the job's temp dir over a run):
// a planted temp dir and a fake /proc stand in for the machine; entries
// appear between start() and finish() as a job's would.
#include "harness/supervise/tmp_watch.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;
using testing::FakeProc;
using testing::TempDir;

class TmpWatch : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(tmp_);
    d_.write("proc/net/unix", "Num       RefCount Protocol Flags    Type St Inode Path\n");
    o_.dir = tmp_;
    o_.proc_root = proc_.root();
  }
  // tmp/NAME/listener-1, a socket bound there by `pid` (its fd `fd`, socket inode `inode`).
  void bound_by(int pid, int fd, std::uint64_t inode, const std::string& name) {
    d_.write("tmp/" + name + "/listener-1", "");
    bind_socket(inode, tmp_ + "/" + name + "/listener-1");
    proc_.fd(pid, fd, "socket:[" + std::to_string(inode) + "]");
  }
  void bind_socket(std::uint64_t inode, const std::string& path) {
    std::ofstream(proc_.root() + "/net/unix", std::ios::app)
        << "0000000000000000: 00000002 00000000 00010000 0001 01 " << inode << " " << path << "\n";
  }
  // The job's processes, as last known and as now: `live`.
  static JobLookup pids(std::vector<int> live) {
    return JobLookup{.present = [live](bool) { return live; }, .whose = {}};
  }
  static const obs::TmpLeft* left(const std::vector<Observation>& v, const std::string& path) {
    for (const auto& o : v)
      if (const auto* l = o.as<obs::TmpLeft>(); l && l->path == path) return l;
    return nullptr;
  }
  static const obs::TmpReclaim* reclaimed(const std::vector<Observation>& v,
                                          const std::string& path) {
    for (const auto& o : v)
      if (const auto* r = o.as<obs::TmpReclaim>(); r && r->path == path) return r;
    return nullptr;
  }
  TempDir d_{"aftermath-tmpwatch"};
  FakeProc proc_{d_};
  std::string tmp_ = d_ / "tmp";
  TmpDirWatch::Options o_;
};

TEST_F(TmpWatch, ResidueTheJobLeftIsRecordedThenRemovedAndOtherEntriesOnlyReported) {
  d_.write("tmp/pymp-before/listener-1", "");  // there before launch: never the job's
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  d_.write("tmp/pymp-left/listener-2", std::string(10, 'x'));
  d_.write("tmp/torch-shm-dir-x/manager.sock", "");
  d_.write("tmp/torchelastic_y/attempt_0/0/error.json", std::string(5, 'e'));
  d_.write("tmp/results.csv", std::string(3, 'r'));  // a job's output, perhaps
  w.poll(100 * kMilli, pids({}));
  auto out = w.finish(kSecond);
  EXPECT_FALSE(left(out, tmp_ + "/pymp-before"));
  const auto* p = left(out, tmp_ + "/pymp-left");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->residue, TmpKind::Pymp);
  EXPECT_EQ(p->bytes, 10);
  EXPECT_EQ(p->owner, ::getuid());
  EXPECT_EQ(p->held_outside_by, 0);
  EXPECT_EQ(left(out, tmp_ + "/torch-shm-dir-x")->residue, TmpKind::TorchShmDir);
  EXPECT_EQ(left(out, tmp_ + "/torchelastic_y")->bytes, 5);
  EXPECT_EQ(left(out, tmp_ + "/results.csv")->residue, TmpKind::Other);
  for (const char* n : {"pymp-left", "torch-shm-dir-x"}) {
    EXPECT_TRUE(reclaimed(out, tmp_ + "/" + n)) << n;
    EXPECT_FALSE(fs::exists(tmp_ + "/" + n)) << n;
  }
  // torchrun's log folder is its design, not residue: with nowhere to move
  // it (no logs_dir), it stays.
  EXPECT_FALSE(reclaimed(out, tmp_ + "/torchelastic_y"));
  EXPECT_TRUE(fs::exists(tmp_ + "/torchelastic_y/attempt_0/0/error.json"));
  EXPECT_FALSE(reclaimed(out, tmp_ + "/results.csv"));
  EXPECT_TRUE(fs::exists(tmp_ + "/results.csv")) << "only known residue is removed";
  EXPECT_TRUE(fs::exists(tmp_ + "/pymp-before"));
  EXPECT_TRUE(w.finish(2 * kSecond).empty()) << "finish() once";
}

// torchrun's logs (its ranks' error files) go with the run's other logs,
// and the temp dir is left as it was.
TEST_F(TmpWatch, TorchrunsLogFolderIsMovedIntoTheRunsLogs) {
  o_.logs_dir = d_ / "out/logs";
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  d_.write("tmp/torchelastic_z/none_ab/attempt_0/1/error.json", "{\"message\": \"x\"}");
  auto out = w.finish(kSecond);
  ASSERT_NE(left(out, tmp_ + "/torchelastic_z"), nullptr);
  const auto* moved = reclaimed(out, tmp_ + "/torchelastic_z");
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->moved_to, o_.logs_dir + "/torchelastic_z");
  EXPECT_FALSE(fs::exists(tmp_ + "/torchelastic_z"));
  EXPECT_TRUE(fs::exists(o_.logs_dir + "/torchelastic_z/none_ab/attempt_0/1/error.json"));
}

TEST_F(TmpWatch, KeepLeaksKeepsTheResidue) {
  o_.keep_leaks = true;
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  d_.write("tmp/pymp-kept/listener-1", "");
  auto out = w.finish(kSecond);
  ASSERT_NE(left(out, tmp_ + "/pymp-kept"), nullptr);
  EXPECT_FALSE(reclaimed(out, tmp_ + "/pymp-kept"));
  EXPECT_TRUE(fs::exists(tmp_ + "/pymp-kept"));
}

// Runs side by side share the dir: what a process outside the job holds at
// the end, or held while the job ran, is neither removed nor blamed.
TEST_F(TmpWatch, ResidueHeldOutsideTheJobIsNeitherRemovedNorBlamed) {
  proc_.add(500, 1, "python3");  // a neighbour's process
  proc_.add(42, 1, "python3");   // one of the job's
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  // Held by the neighbour at the end (an open file under it).
  d_.write("tmp/pymp-now/f", "");
  proc_.fd(500, 3, tmp_ + "/pymp-now/f");
  // Bound by the neighbour while the job ran; its process is gone by the end.
  bound_by(500, 4, 901, "pymp-then");
  // Held by the job while it ran; nobody at the end.
  bound_by(42, 3, 902, "pymp-job");
  w.poll(100 * kMilli, pids({42}));
  // Everyone lets go.
  fs::remove(proc_.root() + "/500/fd/4");
  fs::remove(proc_.root() + "/42/fd/3");
  d_.write("proc/net/unix", "Num       RefCount Protocol Flags    Type St Inode Path\n");
  auto out = w.finish(kSecond);
  EXPECT_EQ(left(out, tmp_ + "/pymp-now")->held_outside_by, 500);
  EXPECT_EQ(left(out, tmp_ + "/pymp-then")->held_outside_by, 500);
  EXPECT_EQ(left(out, tmp_ + "/pymp-job")->held_outside_by, 0);
  EXPECT_TRUE(fs::exists(tmp_ + "/pymp-now"));
  EXPECT_TRUE(fs::exists(tmp_ + "/pymp-then"));
  EXPECT_FALSE(fs::exists(tmp_ + "/pymp-job"));
  EXPECT_FALSE(reclaimed(out, tmp_ + "/pymp-now"));
  EXPECT_TRUE(reclaimed(out, tmp_ + "/pymp-job"));
}

// A job process too new for the job's list as last known (a DataLoader
// worker binding its resource_sharer listener as it hands over its first
// batch) is asked about again with the newcomers: the entry is the job's,
// removed at the end, not a neighbour's left in place.
TEST_F(TmpWatch, AHolderTooNewForTheJobsListIsAskedAboutAgain) {
  proc_.add(77, 1, "python3");   // the job's, forked since the list was made
  proc_.add(500, 1, "python3");  // a neighbour's
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  bound_by(77, 3, 903, "pymp-new");
  bound_by(500, 3, 904, "pymp-other");
  int fresh_asks = 0;
  w.poll(100 * kMilli, JobLookup{.present =
                                     [&](bool fresh) {
                                       fresh_asks += fresh;
                                       return fresh ? std::vector<int>{77} : std::vector<int>{};
                                     },
                                 .whose = {}});
  EXPECT_EQ(fresh_asks, 1) << "asked again once, for both entries";
  fs::remove(proc_.root() + "/77/fd/3");
  fs::remove(proc_.root() + "/500/fd/3");
  d_.write("proc/net/unix", "Num       RefCount Protocol Flags    Type St Inode Path\n");
  auto out = w.finish(kSecond);
  ASSERT_NE(left(out, tmp_ + "/pymp-new"), nullptr);
  EXPECT_EQ(left(out, tmp_ + "/pymp-new")->held_outside_by, 0);
  EXPECT_TRUE(reclaimed(out, tmp_ + "/pymp-new"));
  EXPECT_FALSE(fs::exists(tmp_ + "/pymp-new"));
  EXPECT_EQ(left(out, tmp_ + "/pymp-other")->held_outside_by, 500);
  EXPECT_TRUE(fs::exists(tmp_ + "/pymp-other"));
}

// Two runs side by side each leave an entry nobody holds (mp.spawn's error
// file is written and closed): the kernel's word on who made each tells them
// apart, where holding cannot. A maker nobody knows (gone, and no run here
// had it) proves nothing: its entry is judged by its holders, as without
// the kernel's word (nobody held it: the job's).
TEST_F(TmpWatch, WhoMadeAnEntryDecidesWhoseItIs) {
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  auto made_by_child = [&](const std::string& name) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::ofstream(tmp_ + "/" + name) << "e";
      ::_exit(0);
    }
    ::waitpid(pid, nullptr, 0);
    return static_cast<int>(pid);
  };
  const int mine = made_by_child("pytorch-errorfile-mine.pickle");
  const int theirs = made_by_child("pytorch-errorfile-theirs.pickle");
  const int nobodys = made_by_child("pytorch-errorfile-nobodys.pickle");
  std::vector<int> asked;
  auto whose = [&](int pid) {
    asked.push_back(pid);
    if (pid == mine) return JobLookup::Whose::Job;
    return pid == theirs ? JobLookup::Whose::Outside : JobLookup::Whose::Unknown;
  };
  JobLookup job{.present = [](bool) { return std::vector<int>{}; }, .whose = whose};
  w.poll(100 * kMilli, job);
  auto out = w.finish(kSecond, job);
  if (asked.empty()) GTEST_SKIP() << "the kernel does not say who makes entries here (fanotify)";
  EXPECT_EQ(std::count(asked.begin(), asked.end(), mine), 1) << "settled once";
  EXPECT_EQ(std::count(asked.begin(), asked.end(), theirs), 1);
  EXPECT_GE(std::count(asked.begin(), asked.end(), nobodys), 2) << "asked again, later";
  EXPECT_EQ(left(out, tmp_ + "/pytorch-errorfile-mine.pickle")->held_outside_by, 0);
  EXPECT_TRUE(reclaimed(out, tmp_ + "/pytorch-errorfile-mine.pickle"));
  EXPECT_EQ(left(out, tmp_ + "/pytorch-errorfile-theirs.pickle")->held_outside_by, theirs);
  EXPECT_FALSE(reclaimed(out, tmp_ + "/pytorch-errorfile-theirs.pickle"));
  EXPECT_TRUE(fs::exists(tmp_ + "/pytorch-errorfile-theirs.pickle"));
  EXPECT_EQ(left(out, tmp_ + "/pytorch-errorfile-nobodys.pickle")->held_outside_by, 0);
  EXPECT_TRUE(reclaimed(out, tmp_ + "/pytorch-errorfile-nobodys.pickle"));
}

// An entry nobody holds yet is looked at again (after a backoff) until
// someone does.
TEST_F(TmpWatch, AnEntryIsLookedAtAgainUntilSomeoneHoldsIt) {
  proc_.add(500, 1, "python3");
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  const JobLookup none = pids({});
  d_.write("tmp/pymp-slow/listener-1", "");
  w.poll(0, none);  // noticed; nobody holds it yet
  bind_socket(901, tmp_ + "/pymp-slow/listener-1");
  proc_.fd(500, 4, "socket:[901]");
  w.poll(60 * kMilli, none);  // looked at again: the neighbour's
  fs::remove(proc_.root() + "/500/fd/4");
  d_.write("proc/net/unix", "Num       RefCount Protocol Flags    Type St Inode Path\n");
  auto out = w.finish(kSecond);
  EXPECT_EQ(left(out, tmp_ + "/pymp-slow")->held_outside_by, 500);
  EXPECT_TRUE(fs::exists(tmp_ + "/pymp-slow"));
}

// Negative control for the attribution: without the look while the job ran,
// the neighbour's residue would be blamed on the job and removed.
TEST_F(TmpWatch, WithoutALookWhileTheJobRunsANeighboursResidueIsTheJobs) {
  proc_.add(500, 1, "python3");
  TmpDirWatch w;
  ASSERT_TRUE(w.start(o_));
  bound_by(500, 4, 901, "pymp-then");
  fs::remove(proc_.root() + "/500/fd/4");
  d_.write("proc/net/unix", "Num       RefCount Protocol Flags    Type St Inode Path\n");
  auto out = w.finish(kSecond);
  EXPECT_EQ(left(out, tmp_ + "/pymp-then")->held_outside_by, 0);
}

TEST_F(TmpWatch, AnUnreadableDirIsSaidAndNothingElseHappens) {
  o_.dir = d_ / "missing";
  TmpDirWatch w;
  Status st = w.start(o_);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what.find("missing"), std::string::npos);
  EXPECT_FALSE(w.active());
  w.poll(0, pids({}));
  EXPECT_TRUE(w.finish(kSecond).empty());
}

}  // namespace
}  // namespace aftermath
