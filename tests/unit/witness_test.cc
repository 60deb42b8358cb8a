// The witness: the job processes a lost agent had seen alive, planted here as
// real children of the test; a survivor is named and killed, a process that
// went is not, and a pid the kernel gave to another process is not the job's.
#include "harness/cluster/witness.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/observe/proc.h"
#include "harness/os/spawn.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;

std::uint64_t StartTicks(pid_t pid) {
  auto text = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return 0;
  auto st = parse_proc_stat(*text);
  return st ? st->starttime : 0;
}

// A child that sleeps until killed; reaped by the destructor.
struct Sleeper {
  pid_t pid = -1;
  Sleeper() {
    SpawnOptions so;
    so.argv = {"/bin/sleep", "300"};
    so.die_with_parent = true;
    pid = spawn(so).value_or(-1);
  }
  ~Sleeper() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // The wait status once it is gone (the witness killed it).
  int Reap() {
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

TEST(Witness, ASurvivorIsNamedAndKilled) {
  Sleeper s;
  ASSERT_GT(s.pid, 0);
  WitnessReport r = witness({{s.pid, StartTicks(s.pid), "worker"}}, 100 * kMilli);
  EXPECT_EQ(r.checked, 1);
  ASSERT_EQ(r.survivors.size(), 1u);
  EXPECT_EQ(r.survivors[0].process.pid, s.pid);
  EXPECT_EQ(r.survivors[0].process.role, "worker");
  EXPECT_EQ(r.survivors[0].comm, "sleep");
  EXPECT_TRUE(r.survivors[0].killed);
  EXPECT_GE(r.waited, 100 * kMilli);
  int status = s.Reap();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(Witness, AProcessThatWentIsNoSurvivorAndNothingIsWaitedFor) {
  Sleeper s;
  ASSERT_GT(s.pid, 0);
  std::uint64_t ticks = StartTicks(s.pid);
  ::kill(s.pid, SIGKILL);
  s.Reap();
  WitnessReport r = witness({{s.pid, ticks, "rank"}}, 30 * kSecond);
  EXPECT_TRUE(r.survivors.empty());
  EXPECT_LT(r.waited, 30 * kSecond);
}

TEST(Witness, APidWithAnotherStartTimeIsAnotherProcess) {
  Sleeper s;
  ASSERT_GT(s.pid, 0);
  WitnessReport r = witness({{s.pid, StartTicks(s.pid) + 1, "rank"}}, 10 * kMilli);
  EXPECT_TRUE(r.survivors.empty());
  EXPECT_EQ(::kill(s.pid, 0), 0);  // left alone
}

TEST(Witness, ArgumentsAndReportsRoundTrip) {
  auto p = parse_witness_arg("123:456:worker");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pid, 123);
  EXPECT_EQ(p->start_ticks, 456u);
  EXPECT_EQ(p->role, "worker");
  EXPECT_EQ(witness_arg(*p), "123:456:worker");
  EXPECT_TRUE(parse_witness_arg("7:8"));
  for (const char* bad : {"", "x:1", "1", "1:", "-1:2", "1:y:z"})
    EXPECT_FALSE(parse_witness_arg(bad)) << bad;
  EXPECT_THAT(parse_witness_arg("x").error().what, HasSubstr("PID:START_TICKS"));

  WitnessReport r;
  r.checked = 3;
  r.host = "node1";
  r.waited = 5 * kMilli;
  WitnessSurvivor s;
  s.process = {42, 99, "worker"};
  s.comm = "python3";
  s.state = 'S';
  s.ppid = 1;
  s.killed = true;
  r.survivors.push_back(s);
  auto back = witness_report_from(to_json(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->checked, 3);
  EXPECT_EQ(back->host, "node1");
  EXPECT_EQ(back->waited, 5 * kMilli);
  ASSERT_EQ(back->survivors.size(), 1u);
  EXPECT_EQ(back->survivors[0].process.pid, 42);
  EXPECT_EQ(back->survivors[0].comm, "python3");
  EXPECT_TRUE(back->survivors[0].killed);
  EXPECT_FALSE(witness_report_from(nlohmann::json::parse("{\"x\":1}")));
}

}  // namespace
}  // namespace aftermath
