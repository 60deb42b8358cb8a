// Unit tests for role inference (harness/observe/roles.h) on hand-made
// evidence, and for the /proc parsers it reads (SigCgt, environ). The
// signal masks are the ones read from python3-torch 1.13's processes.
#include "harness/observe/roles.h"

#include <gtest/gtest.h>

#include "harness/observe/proc.h"

namespace aftermath {
namespace {

// SigCgt of a DataLoader worker and of its main process (python3-torch 1.13).
constexpr std::uint64_t kWorkerMask = 0x1000044c2;
constexpr std::uint64_t kLoaderMainMask = 0x100010002;  // SIGINT, SIGCHLD
constexpr std::uint64_t kPlainPython = 0x2;             // SIGINT only

TEST(Roles, LoaderWorkerHandlersAreTheSignature) {
  EXPECT_TRUE(has_loader_worker_handlers(kWorkerMask));
  EXPECT_FALSE(has_loader_worker_handlers(kLoaderMainMask));
  EXPECT_FALSE(has_loader_worker_handlers(kPlainPython));
  // faulthandler catches SIGSEGV, SIGFPE, SIGABRT, SIGBUS, SIGILL, never SIGTERM.
  constexpr std::uint64_t kFaulthandler = (1 << 10) | (1 << 7) | (1 << 5) | (1 << 6) | (1 << 3) | 2;
  EXPECT_FALSE(has_loader_worker_handlers(kFaulthandler));
}

TEST(Roles, HelpersByNameAndCommandLine) {
  EXPECT_TRUE(is_helper_process("torch_shm_manag", ""));
  EXPECT_TRUE(is_helper_process("", "/usr/lib/python3/dist-packages/torch/bin/torch_shm_manager"));
  EXPECT_TRUE(is_helper_process(
      "python3", "/usr/bin/python3 -c from multiprocessing.resource_tracker import main;main(15)"));
  EXPECT_TRUE(is_helper_process(
      "python3", "/usr/bin/python3 -c from multiprocessing.forkserver import main; main(3, 4)"));
  EXPECT_FALSE(is_helper_process("python3", "/usr/bin/python3 train.py"));
}

TEST(Roles, TorchrunAgentInItsForms) {
  EXPECT_TRUE(is_torchrun_agent("/usr/bin/python3 /usr/bin/torchrun --nproc_per_node 2 train.py"));
  EXPECT_TRUE(is_torchrun_agent("torchrun --standalone train.py"));
  EXPECT_TRUE(
      is_torchrun_agent("/usr/bin/python3 -m torch.distributed.run --nproc_per_node 2 t.py"));
  EXPECT_TRUE(is_torchrun_agent("python3 -m torch.distributed.launch t.py"));
  EXPECT_TRUE(is_torchrun_agent(
      "/usr/bin/python3 /src/fixtures/python/torchrun_shim.py --nproc_per_node 2 t.py"));
  EXPECT_FALSE(is_torchrun_agent("/usr/bin/python3 train.py --log torchrun.txt"));
}

TEST(Roles, TorchrunPollIntervalFromItsCommandLineElseTheRunningTorchsDefault) {
  // 1.13's default (5 s), then 2.4's and later (0.1 s): the caller's.
  EXPECT_EQ(launcher_poll_interval("torchrun --nproc_per_node 2 t.py", 5 * kSecond), 5 * kSecond);
  EXPECT_EQ(launcher_poll_interval("torchrun --nproc_per_node 2 t.py", 100 * kMilli), 100 * kMilli);
  EXPECT_EQ(launcher_poll_interval("torchrun --monitor_interval 0.5 t.py", 100 * kMilli),
            500 * kMilli);
  EXPECT_EQ(launcher_poll_interval("torchrun --monitor-interval=2 t.py", 100 * kMilli),
            2 * kSecond);
  EXPECT_EQ(launcher_poll_interval("/usr/bin/python3 train.py", 5 * kSecond), std::nullopt);
}

TEST(Roles, RankFromRankInTheEnvironmentButNotForItsChildren) {
  RoleEvidence rank;
  rank.cmdline = "/usr/bin/python3 -u train.py";
  rank.env_rank = 1;
  RoleParent agent;
  agent.role = Role::Launcher;
  auto r = infer_role(rank, &agent);
  EXPECT_EQ(r.role, Role::Rank);
  EXPECT_EQ(r.rank, 1);
  EXPECT_TRUE(r.final);
  EXPECT_EQ(r.why, "RANK=1 in its environment");
  // Its children inherit RANK=1: not ranks of their own.
  RoleParent rank_parent;
  rank_parent.role = Role::Rank;
  rank_parent.rank = 1;
  rank_parent.env_rank = 1;
  RoleEvidence child = rank;
  auto c = infer_role(child, &rank_parent);
  EXPECT_EQ(c.role, Role::Unknown);
  EXPECT_FALSE(c.final);
  // ... until it shows a DataLoader worker's handlers.
  child.caught = kWorkerMask;
  auto w = infer_role(child, &rank_parent);
  EXPECT_EQ(w.role, Role::Worker);
  EXPECT_EQ(w.rank, 1);
  EXPECT_TRUE(w.final);
}

TEST(Roles, WorkersOfASingleProcessJobBelongToRankZero) {
  RoleEvidence w;
  w.cmdline = "/usr/bin/python3 train.py";
  w.caught = kWorkerMask;
  RoleParent top;
  top.role = Role::Launcher;
  top.is_top = true;
  auto r = infer_role(w, &top);
  EXPECT_EQ(r.role, Role::Worker);
  EXPECT_EQ(r.rank, 0);
  // A parent of unknown rank: the worker is known, its rank not yet.
  RoleParent unknown;
  auto u = infer_role(w, &unknown);
  EXPECT_EQ(u.role, Role::Worker);
  EXPECT_EQ(u.rank, -1);
  EXPECT_FALSE(u.final);
}

TEST(Roles, SpawnChildrenOfTheTopAreProvisionalRanks) {
  RoleEvidence c;
  c.cmdline =
      "/usr/bin/python3 -c from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=16, "
      "pipe_handle=18) --multiprocessing-fork";
  c.caught = kPlainPython;
  RoleParent top;
  top.role = Role::Launcher;
  top.is_top = true;
  auto r = infer_role(c, &top);
  EXPECT_EQ(r.role, Role::Rank);
  EXPECT_TRUE(r.rank_by_spawn_order);
  EXPECT_FALSE(r.final);
  // A spawn-context DataLoader worker of the top shows its handlers later.
  c.caught = kWorkerMask;
  EXPECT_EQ(infer_role(c, &top).role, Role::Worker);
  // Not a child of the top: nothing to say.
  RoleParent other;
  other.role = Role::Rank;
  other.rank = 0;
  c.caught = kPlainPython;
  EXPECT_EQ(infer_role(c, &other).role, Role::Unknown);
}

TEST(Roles, HelpersTopAndAgentComeFirst) {
  RoleEvidence mgr;
  mgr.comm = "torch_shm_manag";
  mgr.caught = kWorkerMask;  // inherited handlers never make a helper a worker
  EXPECT_EQ(infer_role(mgr, nullptr).role, Role::Helper);
  RoleEvidence top;
  top.is_top = true;
  top.env_rank = 0;
  EXPECT_EQ(infer_role(top, nullptr).role, Role::Launcher);
  RoleEvidence agent;
  agent.cmdline = "/usr/bin/python3 /usr/bin/torchrun --nproc_per_node 2 t.py";
  EXPECT_EQ(infer_role(agent, nullptr).role, Role::Launcher);
  // Its fork, seen before the exec into the rank, is not a second agent.
  RoleParent the_agent;
  the_agent.role = Role::Launcher;
  the_agent.cmdline = agent.cmdline;
  auto fork = infer_role(agent, &the_agent);
  EXPECT_EQ(fork.role, Role::Unknown);
  EXPECT_FALSE(fork.final);
  // Nor, with the agent's handlers (faulthandler's SIGILL, SIGABRT, SIGBUS,
  // SIGFPE, SIGSEGV and its SIGTERM; read from 1.13's agent), a DataLoader
  // worker of rank 0 when the agent is the job's top: a fault on worker:0/1
  // once hit rank 1 so, between its fork and its exec.
  constexpr std::uint64_t kAgentMask = 0x1000044ef;
  ASSERT_TRUE(has_loader_worker_handlers(kAgentMask));
  agent.caught = kAgentMask;
  the_agent.is_top = true;
  fork = infer_role(agent, &the_agent);
  EXPECT_EQ(fork.role, Role::Unknown);
  EXPECT_FALSE(fork.final);
  EXPECT_EQ(fork.rank, -1);
}

TEST(ProcParsers, SigCgtAndEnviron) {
  EXPECT_EQ(
      parse_status_sigcgt("Name:\tpython3\nSigBlk:\t0000000000000000\nSigCgt:\t00000001000044c2\n"),
      kWorkerMask);
  EXPECT_EQ(parse_status_sigcgt("Name:\tpython3\n"), std::nullopt);
  EXPECT_EQ(parse_status_sigcgt("SigCgt:\tzz\n"), std::nullopt);
  const char* status =
      "SigPnd:\t0000000000000000\nSigIgn:\t0000000000000006\nSigCgt:\t0000000000000001\n";
  EXPECT_EQ(parse_status_sigmask(status, "SigIgn"), 0x6u);  // SIGINT and SIGQUIT
  EXPECT_EQ(parse_status_sigmask(status, "SigCgt"), 0x1u);
  EXPECT_EQ(parse_status_sigmask(status, "SigBlk"), std::nullopt);
  static const char kEnv[] = "PATH=/bin\0RANK=3\0LOCAL_RANK=1\0";
  std::string env(kEnv, sizeof kEnv - 1);
  EXPECT_EQ(parse_environ_value(env, "RANK"), "3");
  EXPECT_EQ(parse_environ_value(env, "LOCAL_RANK"), "1");
  EXPECT_EQ(parse_environ_value(env, "WORLD_SIZE"), std::nullopt);
  EXPECT_EQ(parse_rank_value("12"), 12);
  EXPECT_EQ(parse_rank_value("-1"), std::nullopt);
  EXPECT_EQ(parse_rank_value(""), std::nullopt);
}

}  // namespace
}  // namespace aftermath
