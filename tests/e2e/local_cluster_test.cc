// End-to-end: the local Slurm cluster the multi-node scenarios run on
// (scripts/local-cluster.sh, tests/support/local_cluster.h). srun from this
// machine reaches every node; each node is its own host on the network (its
// hostname, its address, names that resolve); clusters side by side do not
// collide; down leaves nothing; a real torchrun job all-reduces across nodes.
// Each test skips, with the reason, where no cluster can be made (not root,
// no Slurm, no network namespaces).
#include "tests/support/local_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "e2e_util.h"

using namespace std::chrono_literals;
using aftermath::testing::LocalCluster;
using e2e::TempDir;

namespace {

// Why no cluster can be made here ("" when one can), asked once per binary.
using aftermath::testing::cluster_unavailable;

// The absolute path of `prog` on PATH ("" when absent): posix_spawn takes paths.
std::string on_path(const std::string& prog) {
  const char* path = ::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && ::access((d + "/" + prog).c_str(), X_OK) == 0) return d + "/" + prog;
  return "";
}

struct Cmd {
  int exit_code = -1;  // -1: killed at its deadline
  std::string out, err;
  std::chrono::milliseconds took{0};
};

// Runs argv (argv[0] looked up on PATH) with `env` on top of this process's
// environment, at most `deadline`; its output goes to dir/tag.{out,err}.
Cmd run(const TempDir& dir, const std::string& tag, std::vector<std::string> argv,
        const std::vector<std::string>& env, std::chrono::milliseconds deadline) {
  if (argv[0].find('/') == std::string::npos) argv[0] = on_path(argv[0]);
  auto start = std::chrono::steady_clock::now();
  e2e::Child c = e2e::spawn(argv, dir / (tag + ".out"), dir / (tag + ".err"), env);
  Cmd r;
  if (c.pid <= 0) return r;
  int status = e2e::wait_for(c, deadline);
  r.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  if (status >= 0 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = e2e::slurp(dir / (tag + ".out"));
  r.err = e2e::slurp(dir / (tag + ".err"));
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  return lines;
}

// The network namespaces named for cluster `name` (under /run/netns).
std::vector<std::string> netns_of(const std::string& name) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/run/netns", ec))
    if (e.path().filename().string().rfind("aftermath-" + name + "-", 0) == 0)
      found.push_back(e.path().filename());
  return found;
}

// Pids of live processes in the network namespace `pid` is in, but `pid`.
std::vector<pid_t> others_in_netns_of(pid_t pid) {
  std::vector<pid_t> found;
  std::error_code ec;
  std::string mine = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec);
  if (ec) return found;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    std::string n = e.path().filename();
    if (n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) == pid) continue;
    std::error_code ec2;
    if (std::filesystem::read_symlink(e.path() / "ns/net", ec2) == mine && e2e::alive(std::stoi(n)))
      found.push_back(std::stoi(n));
  }
  return found;
}

// "10.A.B" of an address 10.A.B.C.
std::string net_of(const std::string& addr) { return addr.substr(0, addr.rfind('.')); }

class LocalClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cluster_unavailable().empty()) GTEST_SKIP() << cluster_unavailable();
  }
  TempDir dir;

  // `srun ARGS...` against cluster c, from this process.
  Cmd srun(const LocalCluster& c, const std::string& tag, std::vector<std::string> args,
           std::chrono::milliseconds deadline = 30s, std::vector<std::string> env = {}) {
    args.insert(args.begin(), "srun");
    env.insert(env.begin(), c.env().begin(), c.env().end());
    return run(dir, tag, args, env, deadline);
  }
};

// One task per node, each run where srun put it: under the node's hostname,
// with the node's address (not this machine's), and the cluster's names
// resolving there. srun runs here, on this machine, with only the cluster's
// environment: its I/O comes back over the cluster's network.
TEST_F(LocalClusterTest, SrunFromThisMachineRunsATaskOnEachNode) {
  LocalCluster c(2);
  ASSERT_TRUE(c.ok()) << c.error();
  RecordProperty("up_ms", std::to_string(c.up_time().count()));
  ASSERT_EQ(c.node_count(), 2);
  EXPECT_EQ(c.nodes()[0].hostname, "node0");
  EXPECT_EQ(c.nodes()[1].hostname, "node1");

  Cmd r = srun(c, "srun",
               {"-N2", "--ntasks-per-node=1", "/bin/sh", "-c",
                "echo $SLURM_NODEID $(hostname) $(hostname -I) $(getent hosts node0 node1 | cut "
                "-d' ' -f1)"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<int, std::vector<std::string>>
      by_node;  // node id -> hostname, own address, node0's, node1's
  for (const auto& line : lines_of(r.out)) {
    std::istringstream in(line);
    int id = -1;
    std::vector<std::string> words;
    in >> id;
    for (std::string w; in >> w;) words.push_back(w);
    by_node[id] = words;
  }
  ASSERT_EQ(by_node.size(), 2u) << r.out;
  for (int i = 0; i < 2; ++i) {
    const auto& w = by_node[i];
    ASSERT_EQ(w.size(), 4u) << "node " << i << ": " << r.out;
    EXPECT_EQ(w[0], c.nodes()[i].hostname);
    EXPECT_EQ(w[1], c.nodes()[i].addr) << "the task's only address is its node's";
    EXPECT_NE(w[1], c.host_addr());
    EXPECT_EQ(w[2], c.nodes()[0].addr);
    EXPECT_EQ(w[3], c.nodes()[1].addr);
  }
  EXPECT_NE(c.nodes()[0].addr, c.nodes()[1].addr);
}

// Two clusters brought up at the same moment (as ctest runs tests): distinct
// names, subnets and state, and each one's srun lands on its own nodes.
TEST_F(LocalClusterTest, TwoClustersSideBySide) {
  std::optional<LocalCluster> a, b;
  std::thread ta([&] { a.emplace(2); }), tb([&] { b.emplace(2); });
  ta.join();
  tb.join();
  ASSERT_TRUE(a->ok()) << a->error();
  ASSERT_TRUE(b->ok()) << b->error();
  EXPECT_NE(a->name(), b->name());
  EXPECT_NE(net_of(a->host_addr()), net_of(b->host_addr()));
  EXPECT_NE(a->state_dir(), b->state_dir());
  EXPECT_NE(a->host_ifname(), b->host_ifname());

  for (LocalCluster* c : {&*a, &*b}) {
    Cmd r = srun(*c, c->name(), {"-N2", "--ntasks-per-node=1", "hostname", "-I"});
    ASSERT_EQ(r.exit_code, 0) << c->name() << ": " << r.err;
    std::set<std::string> got, want{c->nodes()[0].addr, c->nodes()[1].addr};
    for (const auto& l : lines_of(r.out)) got.insert(l.substr(0, l.find(' ')));
    EXPECT_EQ(got, want) << c->name() << ": " << r.out;
  }
}

// down ends the daemons (by the pids up recorded), a job step still running
// on the nodes, and removes the namespaces, this machine's interface and
// address, and the state dir.
TEST_F(LocalClusterTest, DownLeavesNothing) {
  LocalCluster c(2);
  ASSERT_TRUE(c.ok()) << c.error();
  // A step left running on both nodes: its tasks print their pids, then sleep.
  e2e::Child step = e2e::spawn({on_path("srun"), "-N2", "--ntasks-per-node=1", "/bin/sh", "-c",
                                "echo task $$; exec sleep 300"},
                               dir / "step.out", dir / "step.err", c.env());
  ASSERT_GT(step.pid, 0);
  ASSERT_TRUE(e2e::wait_lines(dir / "step.out", 2, 30s)) << e2e::slurp(dir / "step.err");
  std::vector<int> tasks = e2e::read_pids(dir / "step.out");
  std::vector<pid_t> daemons = c.daemon_pids();
  ASSERT_EQ(daemons.size(), 3u);  // slurmctld, 2 slurmd
  for (int p : tasks) ASSERT_TRUE(e2e::alive(p)) << "task " << p;
  for (pid_t p : daemons) ASSERT_TRUE(e2e::alive(p)) << "daemon " << p;
  ASSERT_EQ(netns_of(c.name()).size(), 3u);
  ASSERT_TRUE(std::filesystem::exists("/sys/class/net/" + c.host_ifname()));
  ASSERT_TRUE(std::filesystem::exists(c.state_dir()));
  std::string state_dir = c.state_dir();

  auto start = std::chrono::steady_clock::now();
  std::string why;
  ASSERT_TRUE(c.down(&why)) << why;
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  RecordProperty("down_ms", std::to_string(took.count()));
  std::cout << "[ measure  ] up " << c.up_time().count() << " ms, down (a step running) "
            << took.count() << " ms\n";

  for (pid_t p : daemons) EXPECT_FALSE(e2e::alive(p)) << "daemon " << p;
  for (int p : tasks) EXPECT_FALSE(e2e::alive(p)) << "task " << p;
  EXPECT_TRUE(netns_of(c.name()).empty());
  EXPECT_FALSE(std::filesystem::exists("/sys/class/net/" + c.host_ifname()));
  EXPECT_FALSE(std::filesystem::exists(state_dir));
  EXPECT_FALSE(std::filesystem::exists("/run/aftermath-cluster/" + c.name()));
  Cmd addrs = run(dir, "addrs", {"ip", "-4", "-o", "addr", "show"}, {}, 10s);
  EXPECT_EQ(addrs.out.find(c.host_addr() + "/"), std::string::npos) << addrs.out;
  // srun, ours, lost its cluster and waits on: ended here.
  e2e::wait_for(step, 0ms);
}

// up refuses a name already up (the cluster goes on working) and bad input,
// each with one message; down of an unknown name says so.
TEST_F(LocalClusterTest, RefusesANameUpAndBadInput) {
  LocalCluster c(1);
  ASSERT_TRUE(c.ok()) << c.error();
  auto again = LocalCluster::run_script({"up", c.name(), "1"}, 60s);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("cluster " + c.name() + " is already up"), std::string::npos)
      << again.output;
  Cmd r = srun(c, "srun", {"-N1", "hostname"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "node0\n");

  auto bad_name = LocalCluster::run_script({"up", "Bad_Name", "2"}, 20s);
  EXPECT_EQ(bad_name.exit_code, 1);
  EXPECT_NE(bad_name.output.find("bad NAME 'Bad_Name'"), std::string::npos) << bad_name.output;
  auto bad_n = LocalCluster::run_script({"up", c.name() + "-x", "0"}, 20s);
  EXPECT_EQ(bad_n.exit_code, 1);
  EXPECT_NE(bad_n.output.find("bad N '0'"), std::string::npos) << bad_n.output;
  EXPECT_TRUE(netns_of(c.name() + "-x").empty());
  auto unknown = LocalCluster::run_script({"down", c.name() + "-y"}, 20s);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("no cluster " + c.name() + "-y here"), std::string::npos)
      << unknown.output;
}

// The subnet a name hashes to is skipped when an address here overlaps it:
// the same name, brought up again with that subnet taken, gets another.
TEST_F(LocalClusterTest, SubnetInUseIsSkipped) {
  std::string name, first;
  {
    LocalCluster c(1);
    ASSERT_TRUE(c.ok()) << c.error();
    name = c.name();
    first = net_of(c.host_addr());
  }
  // Plant an address in that subnet, on a veth pair of this test's own.
  std::string planted = "amt" + std::to_string(::getpid() % 1000000);
  Cmd add =
      run(dir, "add", {"ip", "link", "add", planted, "type", "veth", "peer", "name", planted + "p"},
          {}, 10s);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  struct Unplant {
    TempDir& d;
    std::string link;
    ~Unplant() { run(d, "del", {"ip", "link", "del", link}, {}, 10s); }
  } unplant{dir, planted};
  Cmd addr = run(dir, "addr", {"ip", "addr", "add", first + ".77/24", "dev", planted}, {}, 10s);
  ASSERT_EQ(addr.exit_code, 0) << addr.err;

  auto up = LocalCluster::run_script({"up", name, "1"}, 60s);
  auto env = LocalCluster::run_script({"env", name}, 20s);
  auto down = LocalCluster::run_script({"down", name}, 60s);
  ASSERT_EQ(up.exit_code, 0) << up.output;
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_NE(env.output.find("AFTERMATH_CLUSTER_HOST_ADDR=10."), std::string::npos) << env.output;
  EXPECT_EQ(env.output.find("AFTERMATH_CLUSTER_HOST_ADDR=" + first + ".1\n"), std::string::npos)
      << env.output;
}

// A real cross-node PyTorch job: srun starts one torchrun agent per node
// (c10d rendezvous on node0), 2 gloo ranks each over the node's interface;
// the all_reduce of the 4 ranks' numbers gives 0+1+2+3 everywhere. Nothing of
// it outlives the step, and torchrun's log folder goes with it.
TEST_F(LocalClusterTest, TorchrunAllReduceAcrossNodes) {
  if (!e2e::torch_unavailable().empty()) GTEST_SKIP() << e2e::torch_unavailable();
  LocalCluster c(2);
  ASSERT_TRUE(c.ok()) << c.error();
  std::string script = dir.write(
      "all_reduce.py",
      "import os, socket, torch, torch.distributed as dist\n"
      "dist.init_process_group('gloo')\n"
      "t = torch.tensor([float(dist.get_rank())])\n"
      "dist.all_reduce(t)\n"
      "line = 'rank %d of %d on %s sum %d\\n' % (dist.get_rank(), dist.get_world_size(),\n"
      "                                           socket.gethostname(), int(t.item()))\n"
      "os.write(1, line.encode())  # one write: the node's 2 ranks share a pipe\n"
      "dist.destroy_process_group()\n");
  std::filesystem::create_directories(dir / "tmp");
  // Plain torchrun of the project's PyTorch, its logs where we say (else it
  // leaves a torchelastic_* folder in $TMPDIR on every run, by design).
  Cmd r = srun(
      c, "torchrun",
      {"-N2", "--ntasks-per-node=1", "--kill-on-bad-exit=1", e2e::python(), "-m",
       "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "2", "--rdzv_backend", "c10d",
       "--rdzv_endpoint", c.nodes()[0].hostname + ":29400", "--rdzv_id", c.name(), "--log-dir",
       dir / "torchrun-logs", script},
      90s,
      {"GLOO_SOCKET_IFNAME=" + c.node_ifname(), "TMPDIR=" + dir / "tmp", "AFTERMATH_LOG_DIR="});
  RecordProperty("torchrun_ms", std::to_string(r.took.count()));
  std::cout << "[ measure  ] torchrun, 2 nodes x 2 gloo ranks, all_reduce: " << r.took.count()
            << " ms\n";
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  std::map<int, std::string> host_of_rank;
  for (const auto& line : lines_of(r.out)) {
    std::istringstream in(line);
    std::string w_rank, w_of, w_on, host, w_sum;
    int rank = -1, world = -1, sum = -1;
    if (!(in >> w_rank >> rank >> w_of >> world >> w_on >> host >> w_sum >> sum) ||
        w_rank != "rank")
      continue;
    EXPECT_EQ(world, 4) << line;
    EXPECT_EQ(sum, 0 + 1 + 2 + 3) << line;
    host_of_rank[rank] = host;
  }
  ASSERT_EQ(host_of_rank.size(), 4u) << r.out << r.err;
  std::map<std::string, int> ranks_on;
  for (const auto& [rank, host] : host_of_rank) ++ranks_on[host];
  EXPECT_EQ(ranks_on, (std::map<std::string, int>{{"node0", 2}, {"node1", 2}})) << r.out;

  // Nothing but slurmd stays on the nodes (slurmstepd ends just after srun).
  std::vector<pid_t> daemons = c.daemon_pids();
  ASSERT_EQ(daemons.size(), 3u);
  for (size_t i = 1; i < daemons.size(); ++i) {
    auto end = std::chrono::steady_clock::now() + 20s;
    while (!others_in_netns_of(daemons[i]).empty() && std::chrono::steady_clock::now() < end)
      ::poll(nullptr, 0, 50);
    EXPECT_TRUE(others_in_netns_of(daemons[i]).empty()) << "left on " << c.nodes()[i - 1].hostname;
  }
  EXPECT_EQ(e2e::residue_listing(dir / "tmp"), "") << "torchrun's temporary files stayed";
  EXPECT_FALSE(std::filesystem::is_empty(dir / "torchrun-logs"));
}

}  // namespace
