// Unit tests for harness/observe/proc: the /proc parsers on literal file
// contents, ProcReader on a fake procfs tree, descendants() on hand-made
// tables, and one look at the real /proc.
#include "harness/observe/proc.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace aftermath {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

// A realistic stat line (52 fields, as on a 5.x/6.x kernel) for `comm`.
std::string stat_line(int pid, const std::string& comm, char state, int ppid,
                      unsigned long long starttime = 87272, int threads = 1) {
  return std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid) +
         " 6405 5286 0 -1 4194304 98 0 0 0 11 7 0 0 20 0 " + std::to_string(threads) + " 0 " +
         std::to_string(starttime) +
         " 3133440 389 18446744073709551615 94671618342912 94671618362793 140722541965120 0 0 0 0 "
         "0 0"
         " 0 0 0 17 1 0 0 0 0 0 94671618378800 94671618380416 94672434958336 140722541968002"
         " 140722541968022 140722541968022 140722541969387 0\n";
}

// ---------------------------------------------------------------- parse_proc_stat

TEST(ParseProcStat, RealLine) {
  auto st = parse_proc_stat(
      "6409 (cat) R 6405 6405 5286 0 -1 4194304 98 0 0 0 12 34 0 0 20 0 3 0 87272 3133440 389 "
      "18446744073709551615 94671618342912 94671618362793 140722541965120 0 0 0 0 0 0 0 0 0 17 1 0 "
      "0 0 "
      "0 0 94671618378800 94671618380416 94672434958336 140722541968002 140722541968022 "
      "140722541968022 140722541969387 0\n");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->pid, 6409);
  EXPECT_EQ(st->comm, "cat");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 6405);
  EXPECT_EQ(st->pgrp, 6405);
  EXPECT_EQ(st->session, 5286);
  EXPECT_EQ(st->utime, 12u);
  EXPECT_EQ(st->stime, 34u);
  EXPECT_EQ(st->num_threads, 3);
  EXPECT_EQ(st->starttime, 87272u);
  EXPECT_EQ(st->rss_pages, 389);
}

TEST(ParseProcStat, CommWithSpacesAndParentheses) {
  auto st = parse_proc_stat(stat_line(4242, "my (weird) prog", 'S', 17, 999));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->comm, "my (weird) prog");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 17);
  EXPECT_EQ(st->starttime, 999u);
}

TEST(ParseProcStat, CommThatLooksLikeFields) {
  // A comm may itself contain ") R 1 ": only the last ')' ends it.
  auto st = parse_proc_stat(stat_line(77, "x) R 1 (y", 'Z', 5));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "x) R 1 (y");
  EXPECT_EQ(st->state, 'Z');
  EXPECT_EQ(st->ppid, 5);
}

TEST(ParseProcStat, EmptyCommAndNoTrailingNewline) {
  auto line = stat_line(8, "", 'D', 2, 5, 4);
  line.pop_back();
  auto st = parse_proc_stat(line);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "");
  EXPECT_EQ(st->state, 'D');
  EXPECT_EQ(st->num_threads, 4);
}

TEST(ParseProcStat, KernelThreadWithPpidZero) {
  auto st = parse_proc_stat(stat_line(2, "kthreadd", 'S', 0, 1));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->ppid, 0);
}

TEST(ParseProcStat, MalformedIsNullopt) {
  std::string good = stat_line(100, "ok", 'S', 1);
  // Cut after the 23rd field: rss (field 24) is missing.
  std::string truncated =
      "100 (ok) S 1 6405 5286 0 -1 4194304 98 0 0 0 11 7 0 0 20 0 1 0 87272 3133440";
  std::vector<std::string> bad = {
      "",
      "\n",
      "garbage",
      "100 ok S 1",                                                    // no parentheses
      "100 (ok S 1 2 3",                                               // no closing parenthesis
      "100 )ok( S 1 2 3",                                              // closing before opening
      "(ok) S 1 6405 5286 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 6 7",      // no pid
      "abc (ok) S 1 6405 5286 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 6 7",  // pid not a number
      truncated,
      "100 (ok)",
      "100 (ok) SS 1 6405 5286 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 6 7",    // state not one letter
      "100 (ok) S x 6405 5286 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 6 7",     // ppid not a number
      "100 (ok) S 1 6405 5286 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 late 6 7",  // starttime not a number
  };
  ASSERT_TRUE(parse_proc_stat(good).has_value());
  for (const auto& b : bad) EXPECT_EQ(parse_proc_stat(b), std::nullopt) << "\"" << b << "\"";
}

// Bug: the pid is taken as the text before "(" minus one character, assuming
// exactly one space; with no space, "1234(x) ..." parses as pid 123 instead
// of being rejected as malformed.
TEST(ParseProcStat, NoSpaceBeforeCommIsMalformed) {
  EXPECT_EQ(parse_proc_stat("1234(x) S 1 6405 5286 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 6 7"),
            std::nullopt);
}

// ---------------------------------------------------------------- parse_status_nspid

TEST(ParseStatusNspid, SingleNamespace) {
  std::string status =
      "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t6410\nNgid:\t0\nPid:\t6410\n"
      "PPid:\t6405\nNStgid:\t6410\nNSpid:\t6410\nNSpgid:\t6405\nNSsid:\t5286\nVmPeak:\t  5000 kB\n";
  EXPECT_EQ(parse_status_nspid(status), std::vector<int>{6410});
}

TEST(ParseStatusNspid, NestedNamespacesOutermostFirst) {
  EXPECT_EQ(parse_status_nspid("Name:\tx\nNStgid:\t1234\t7\nNSpid:\t1234\t7\nNSpgid:\t1230\t1\n"),
            (std::vector<int>{1234, 7}));
  EXPECT_EQ(parse_status_nspid("NSpid:\t1234\t7"),
            (std::vector<int>{1234, 7}));  // first line, no '\n'
  EXPECT_EQ(parse_status_nspid("Pid:\t9\nNSpid:\t900\t40\t1\n"), (std::vector<int>{900, 40, 1}));
}

TEST(ParseStatusNspid, NotConfusedByNeighbouringLines) {
  // NStgid / NSpgid / NSsid are not NSpid.
  EXPECT_EQ(parse_status_nspid("NStgid:\t5\t6\nNSpgid:\t5\t6\nNSsid:\t5\t6\n"), std::vector<int>{});
}

TEST(ParseStatusNspid, AbsentLineIsEmpty) {
  EXPECT_TRUE(parse_status_nspid("Name:\tcat\nPid:\t6410\nPPid:\t1\n").empty());
  EXPECT_TRUE(parse_status_nspid("").empty());
}

// ---------------------------------------------------------------- parse_cmdline

TEST(ParseCmdline, NulSeparatedWithTrailingNul) {
  EXPECT_EQ(parse_cmdline("python3\0-c\0print(1)\0"s), "python3 -c print(1)");
}

TEST(ParseCmdline, WithoutTrailingNul) {
  EXPECT_EQ(parse_cmdline("sleep\0"
                          "10"s),
            "sleep 10");
  EXPECT_EQ(parse_cmdline("single"s), "single");
}

TEST(ParseCmdline, EmptyAndOnlyNul) {
  EXPECT_EQ(parse_cmdline(""), "");
  EXPECT_EQ(parse_cmdline("\0"s), "");
}

TEST(ParseCmdline, EmptyArgumentInTheMiddleIsKept) {
  EXPECT_EQ(parse_cmdline("a\0\0b\0"s), "a  b");
}

// The nanoseconds on a CPU, waiting for one, and the times given one.
TEST(ParseSchedstat, RanWaitedAndSlices) {
  auto s = parse_schedstat("565164 363669 2\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ran_ns, 565164u);
  EXPECT_EQ(s->waited_ns, 363669u);
  EXPECT_EQ(s->slices, 2u);
  s = parse_schedstat("18446744073709551615 9 1");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ran_ns, 18446744073709551615u);
  EXPECT_EQ(s->waited_ns, 9u);
  for (const char* bad : {"", "565164\n", "565164 363669\n", "565164 -3 2\n", "565164 12x 2\n"})
    EXPECT_EQ(parse_schedstat(bad), std::nullopt) << bad;
}

// ---------------------------------------------------------------- ProcReader on a fake tree

class ProcOnAFakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aftermath_proc_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }

  void write(const std::string& rel, const std::string& contents) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << contents;
  }
  // A process dir with stat, cmdline and status.
  void add_proc(int pid, const std::string& comm, int ppid, const std::string& cmdline_raw,
                const std::string& nspid_line) {
    std::string d = std::to_string(pid);
    write(d + "/stat", stat_line(pid, comm, 'S', ppid, 1000 + pid));
    write(d + "/cmdline", cmdline_raw);
    write(d + "/status", "Name:\t" + comm + "\nPid:\t" + std::to_string(pid) + "\n" + nspid_line +
                             "Threads:\t1\n");
  }

  std::string root_;
};

TEST_F(ProcOnAFakeRoot, ScanReadsEveryProcessDirAndSkipsTheRest) {
  add_proc(1, "init", 0, "/sbin/init\0"s, "NSpid:\t1\n");
  add_proc(100, "launcher", 1,
           "torchrun\0--nproc\0"
           "2\0"s,
           "NSpid:\t100\t1\n");
  add_proc(101, "python (rank 0)", 100, "python\0train.py\0"s, "NSpid:\t101\t2\n");
  // Non-numeric entries, even with a valid stat inside, are not processes.
  write("self/stat", stat_line(999, "self", 'R', 1));
  write("12abc/stat", stat_line(998, "mixed", 'R', 1));
  write("sys/kernel/pid_max", "4194304\n");
  write("uptime", "1.0 2.0\n");
  // A pid dir with a malformed stat, one that vanished (no stat), and a plain file.
  write("102/stat", "102 (broken) S\n");
  fs::create_directories(fs::path(root_) / "103");
  write("104", "not a directory");

  ProcReader r(root_);
  EXPECT_EQ(r.root(), root_);
  auto table = r.scan();
  std::vector<int> pids;
  for (const auto& [pid, st] : table) pids.push_back(pid);
  EXPECT_EQ(pids, (std::vector<int>{1, 100, 101}));
  EXPECT_EQ(table.at(101).comm, "python (rank 0)");
  EXPECT_EQ(table.at(101).ppid, 100);
  EXPECT_EQ(table.at(101).starttime, 1101u);
  EXPECT_EQ(table.at(100).ppid, 1);
  EXPECT_EQ(table.at(1).ppid, 0);
}

TEST_F(ProcOnAFakeRoot, PerPidReaders) {
  add_proc(100, "launcher", 1,
           "torchrun\0--nproc\0"
           "2\0"s,
           "NSpid:\t100\t1\n");
  add_proc(101, "python", 100, ""s, "");  // a zombie: empty cmdline, no NSpid line
  write("102/stat", "102 (broken) S\n");

  ProcReader r(root_);
  auto st = r.stat(100);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "launcher");
  EXPECT_EQ(st->ppid, 1);
  EXPECT_EQ(r.cmdline(100), "torchrun --nproc 2");
  EXPECT_EQ(r.nspid(100), (std::vector<int>{100, 1}));

  EXPECT_EQ(r.cmdline(101), "");
  EXPECT_TRUE(r.nspid(101).empty());

  write("100/schedstat", "2500000 1250000 40\n");
  ASSERT_TRUE(r.schedstat(100));
  EXPECT_EQ(r.schedstat(100)->waited_ns, 1250000u);
  EXPECT_EQ(r.schedstat(555), std::nullopt);  // absent (or no CONFIG_SCHED_INFO)

  EXPECT_EQ(r.stat(102), std::nullopt);  // malformed
  EXPECT_EQ(r.stat(555), std::nullopt);  // absent
  EXPECT_EQ(r.cmdline(555), "");
  EXPECT_TRUE(r.nspid(555).empty());
}

TEST_F(ProcOnAFakeRoot, MissingRootScansEmpty) {
  ProcReader r(root_ + "/does-not-exist");
  EXPECT_TRUE(r.scan().empty());
  EXPECT_EQ(r.stat(1), std::nullopt);
}

TEST_F(ProcOnAFakeRoot, ReadSmallFile) {
  write("f", "hello\0world"s);
  EXPECT_EQ(read_small_file(root_ + "/f"), "hello\0world"s);
  std::string big(20000, 'x');  // more than one read() buffer
  write("big", big);
  EXPECT_EQ(read_small_file(root_ + "/big"), big);
  write("empty", "");
  EXPECT_EQ(read_small_file(root_ + "/empty"), "");
  EXPECT_EQ(read_small_file(root_ + "/missing"), std::nullopt);
}

// ---------------------------------------------------------------- newcomers

TEST_F(ProcOnAFakeRoot, NewcomersWithoutChildrenFilesStatOnlyUnknownPids) {
  add_proc(1, "init", 0, "", "");
  add_proc(10, "reaper", 1, "", "");
  add_proc(11, "top", 10, "", "");
  add_proc(12, "worker", 11, "", "");  // new
  add_proc(13, "helper", 12, "", "");  // new, below a new one
  add_proc(20, "other", 1, "", "");    // not the job's
  add_proc(30, "other-child", 20, "", "");
  ProcReader r(root_);
  std::set<int> foreign;
  auto got = r.newcomers(10, {{11, 1}}, &foreign);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got.at(12).first.comm, "worker");
  EXPECT_EQ(got.at(12).second, 2);
  EXPECT_EQ(got.at(13).second, 3);
  EXPECT_EQ(foreign, (std::set<int>{1, 20, 30}));
  // A known foreign pid is not read again: a stat that now claims the job
  // would be believed if it were.
  write("20/stat", stat_line(20, "other", 'S', 11, 1020));
  EXPECT_TRUE(r.newcomers(10, {{11, 1}, {12, 2}, {13, 3}}, &foreign).empty());
  // Once it has left the table, the pid is looked at afresh (reuse).
  fs::remove_all(fs::path(root_) / "20");
  EXPECT_TRUE(r.newcomers(10, {{11, 1}, {12, 2}, {13, 3}}, &foreign).empty());
  EXPECT_FALSE(foreign.count(20));
  add_proc(20, "reused", 11, "", "");
  got = r.newcomers(10, {{11, 1}, {12, 2}, {13, 3}}, &foreign);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at(20).first.comm, "reused");
  EXPECT_EQ(got.at(20).second, 2);
}

TEST_F(ProcOnAFakeRoot, NewcomersThroughChildrenFiles) {
  add_proc(10, "reaper", 1, "", "");
  add_proc(11, "top", 10, "", "");
  add_proc(12, "worker", 11, "", "");
  add_proc(13, "helper", 12, "", "");
  add_proc(20, "other", 1, "", "");  // never looked at: no children file names it
  write("10/task/10/children", "11 ");
  write("11/task/11/children", "");
  write("11/task/15/children", "12 ");  // a child belongs to the thread that forked it
  write("12/task/12/children", "13");
  write("13/task/13/children", "");
  ProcReader r(root_);
  std::set<int> foreign;
  auto got = r.newcomers(10, {{11, 1}}, &foreign);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got.at(12).second, 2);
  EXPECT_EQ(got.at(13).second, 3);
  EXPECT_TRUE(foreign.empty());
}

TEST_F(ProcOnAFakeRoot, NewcomersFromAnnouncedCandidates) {
  add_proc(10, "reaper", 1, "", "");
  add_proc(11, "top", 10, "", "");
  add_proc(12, "worker", 11, "", "");
  add_proc(13, "helper", 12, "", "");
  add_proc(20, "other", 1, "", "");
  ProcReader r(root_);
  // Children before parents, an absent pid, one outside the job: only the
  // job's, at their depths.
  std::vector<int> candidates{13, 12, 40, 20};
  auto got = r.newcomers(10, {{11, 1}}, nullptr, &candidates);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got.at(12).second, 2);
  EXPECT_EQ(got.at(13).second, 3);
}

// ---------------------------------------------------------------- descendants

std::map<int, ProcStat> table_of(const std::vector<std::pair<int, int>>& pid_ppid) {
  std::map<int, ProcStat> t;
  for (auto [pid, ppid] : pid_ppid) {
    ProcStat st;
    st.pid = pid;
    st.ppid = ppid;
    st.comm = "p" + std::to_string(pid);
    t[pid] = st;
  }
  return t;
}

TEST(Descendants, TreeWithDepths) {
  auto t = table_of({{1, 0},
                     {10, 1},     // the root
                     {11, 10},    // depth 1
                     {12, 10},    // depth 1
                     {13, 11},    // depth 2
                     {14, 13},    // depth 3
                     {15, 14}});  // depth 4
  auto d = descendants(t, 10);
  EXPECT_EQ(d, (std::map<int, int>{{11, 1}, {12, 1}, {13, 2}, {14, 3}, {15, 4}}));
}

TEST(Descendants, ReparentedToTheRootIsAChild) {
  // 16's parent died and it was re-parented to the root (a subreaper).
  auto t = table_of({{1, 0}, {10, 1}, {11, 10}, {13, 11}, {16, 10}, {17, 16}});
  auto d = descendants(t, 10);
  EXPECT_EQ(d, (std::map<int, int>{{11, 1}, {13, 2}, {16, 1}, {17, 2}}));
}

TEST(Descendants, UnrelatedProcessesExcluded) {
  auto t = table_of({{1, 0}, {2, 0}, {10, 1}, {11, 10}, {20, 1}, {21, 20}, {30, 2}, {31, 30}});
  auto d = descendants(t, 10);
  EXPECT_EQ(d, (std::map<int, int>{{11, 1}}));
  EXPECT_FALSE(d.count(10));  // not the root itself
  EXPECT_FALSE(d.count(1));
}

TEST(Descendants, RootAbsentFromTheTableStillFindsItsChildren) {
  // The top may already be gone from /proc while its children live.
  auto t = table_of({{1, 0}, {11, 10}, {12, 11}});
  EXPECT_EQ(descendants(t, 10), (std::map<int, int>{{11, 1}, {12, 2}}));
}

TEST(Descendants, LeafAndUnknownRootHaveNone) {
  auto t = table_of({{1, 0}, {10, 1}, {11, 10}});
  EXPECT_TRUE(descendants(t, 11).empty());
  EXPECT_TRUE(descendants(t, 4242).empty());
  EXPECT_TRUE(descendants({}, 1).empty());
}

// ---------------------------------------------------------------- the real /proc

TEST(ProcReaderReal, FindsThisProcessWithItsParent) {
  ProcReader r;
  EXPECT_EQ(r.root(), "/proc");
  auto table = r.scan();
  ASSERT_TRUE(table.count(getpid())) << "own pid " << getpid() << " not in /proc scan";
  const ProcStat& me = table.at(getpid());
  EXPECT_EQ(me.pid, getpid());
  EXPECT_EQ(me.ppid, getppid());
  EXPECT_EQ(me.state, 'R');  // it is running the scan
  EXPECT_GT(me.starttime, 0u);
  EXPECT_GE(me.num_threads, 1);

  auto st = r.stat(getpid());
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->ppid, getppid());
  EXPECT_EQ(st->starttime, me.starttime);
  EXPECT_FALSE(r.cmdline(getpid()).empty());

  auto d = descendants(table, getppid());
  ASSERT_TRUE(d.count(getpid()));
  EXPECT_EQ(d.at(getpid()), 1);
}

TEST(ReadLink, GivesWhatALinkPointsAtAsWritten) {
  std::string dir =
      std::filesystem::temp_directory_path() / ("read-link-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("/no/such target", dir + "/l");
  EXPECT_EQ(read_link(dir + "/l"), "/no/such target");  // dangling links still read
  EXPECT_EQ(read_link(dir + "/none"), std::nullopt);
  EXPECT_EQ(read_link(dir), std::nullopt);  // not a link
  std::filesystem::remove_all(dir);
  auto self = read_link("/proc/self/exe");
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->front(), '/');
}

}  // namespace
}  // namespace aftermath
