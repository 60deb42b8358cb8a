// The reaper link: records split across reads, the reaper's command line,
// the words on containment, and the plumbing of start / EOF / exit against
// a real program standing in for the reaper.
#include "harness/supervise/reaper_link.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "harness/core/types.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;

reaper::Record record(reaper::Msg type, int pid, int a, int b = 0) {
  return reaper::Record{type, pid, a, b, 1234};
}

TEST(RecordStream, WholeRecordsOnlyWhateverTheReadsLookLike) {
  reaper::Record in[2] = {record(reaper::Msg::TopStarted, 4100, 2),
                          record(reaper::Msg::Reaped, 3, 9)};
  const char* bytes = reinterpret_cast<const char*>(in);
  RecordStream s;
  s.append(bytes, 10);
  EXPECT_FALSE(s.next());  // not a whole record yet
  s.append(bytes + 10, sizeof in - 10 - 4);
  auto first = s.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->type, reaper::Msg::TopStarted);
  EXPECT_EQ(first->pid, 4100);
  EXPECT_EQ(first->a, 2);
  EXPECT_EQ(first->t_ns, 1234);
  EXPECT_FALSE(s.next());
  s.append(bytes + sizeof in - 4, 4);
  auto second = s.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->type, reaper::Msg::Reaped);
  EXPECT_EQ(second->a, 9);
  EXPECT_EQ(s.buffered(), 0u);
}

TEST(ReaperArgs, PipesOutputContainmentSignalsCwdThenTheJob) {
  ReaperLaunch l;
  l.stdout_path = "/out/stdout.log";
  l.stderr_path = "/out/stderr.log";
  l.containment = "auto";
  l.shm = "private";
  l.ignored_signals = 0x1001;
  l.cwd = "/work";
  l.argv = {"python3", "-c", "pass"};
  EXPECT_EQ(reaper_args(l, 5, 6),
            (std::vector<std::string>{
                "--events",        "5",        "--lifeline",        "6",         "--stdout",
                "/out/stdout.log", "--stderr", "/out/stderr.log",   "--contain", "auto",
                "--shm",           "private",  "--ignored-signals", "1001",      "--cwd",
                "/work",           "--",       "python3",           "-c",        "pass"}));
  l.cwd.clear();
  auto args = reaper_args(l, 5, 6);
  EXPECT_EQ(std::find(args.begin(), args.end(), "--cwd"), args.end());
}

TEST(ReaperWords, ContainmentAndWhyNot) {
  EXPECT_EQ(job_containment(reaper::Containment::PidNamespace), JobContainment::PidNamespace);
  EXPECT_EQ(job_containment(reaper::Containment::UserPidNamespace),
            JobContainment::UserPidNamespace);
  EXPECT_EQ(job_containment(reaper::Containment::Subreaper), JobContainment::Subreaper);
  EXPECT_EQ(to_string(JobContainment::UserPidNamespace), "user+pid-namespace");
  EXPECT_EQ(parse_job_containment("subreaper"), JobContainment::Subreaper);
  EXPECT_FALSE(parse_job_containment("namespace"));
  EXPECT_THAT(subreaper_note(EPERM),
              ::testing::StartsWith(std::string("no PID namespace (") + std::strerror(EPERM) +
                                    "): the job is held"));
  EXPECT_THAT(subreaper_note(0), ::testing::StartsWith("subreaper requested: "));
  EXPECT_EQ(
      proc_view_note(record(reaper::Msg::ProcView, 0, EPERM,
                            static_cast<int>(reaper::ProcViewStep::ProcMount))),
      "the job sees the host's /proc (mount of a procfs for its PID namespace refused: EPERM)");
  EXPECT_EQ(proc_view_note(record(reaper::Msg::ProcView, 0, 0, 0)),
            "the job sees the host's /proc (the reaper was told to leave /proc alone)");
}

TEST(ReaperLink, AMissingReaperIsAnErrorAndNothingStarts) {
  boost::asio::io_context ctx;
  ReaperLink link(ctx);
  ReaperLaunch l;
  l.reaper_path = "/nonexistent/aftermath-reaper";
  l.argv = {"true"};
  Status st = link.start(l, [](const reaper::Record&) {});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().what, "reaper not found or not executable: /nonexistent/aftermath-reaper");
  EXPECT_EQ(link.pid(), 0);
}

TEST(ReaperLink, AReaperThatExitsGivesEofAndItsExit) {
  // /bin/true stands in: it ignores its arguments, writes no record and exits.
  boost::asio::io_context ctx;
  ReaperLink link(ctx);
  ReaperLaunch l;
  l.reaper_path = "/bin/true";
  l.argv = {"true"};
  l.env = {{"PATH", "/bin"}};
  int records = 0;
  ASSERT_TRUE(link.start(l, [&](const reaper::Record&) { ++records; }));
  EXPECT_GT(link.pid(), 0);
  bool exited = false;
  link.async_wait([&] { exited = true; });
  Nanos until = monotonic_now() + 10 * kSecond;
  while (!(exited && link.eof()) && monotonic_now() < until)
    ctx.run_one_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(exited);
  EXPECT_TRUE(link.eof());
  EXPECT_EQ(records, 0);
}

}  // namespace
}  // namespace aftermath
