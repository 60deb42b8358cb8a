// Multi-node runs for real: a Slurm cluster of network namespaces on this
// machine (scripts/local-cluster.sh), `aftermath run` inside an allocation
// (salloc -N2), one agent per node started by srun, torchrun's c10d
// rendezvous across the nodes. Skipped, with the reason, where such a cluster
// cannot be made (not root, no Slurm, no network namespaces).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "harness/os/find_program.h"
#include "tests/e2e/e2e_util.h"
#include "tests/support/local_cluster.h"

namespace {

using namespace std::chrono_literals;
using aftermath::testing::LocalCluster;
using ::testing::HasSubstr;

using aftermath::testing::cluster_unavailable;

// `salloc -N<nodes> aftermath run --out DIR/out ARGS...` against cluster c,
// the coordinator listening on this machine's address in the cluster.
e2e::Run salloc_run(const e2e::TempDir& dir, const LocalCluster& c, int nodes,
                    std::vector<std::string> args, std::chrono::milliseconds deadline) {
  std::vector<std::string> argv{aftermath::find_program("salloc").value_or("salloc"),
                                "-N" + std::to_string(nodes),
                                "--quiet",
                                e2e::bin("aftermath"),
                                "run",
                                "--out",
                                dir / "out"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = c.env();
  env.push_back("AFTERMATH_COORDINATOR_ADDR=" + c.host_addr());
  return e2e::run_with_reports(dir, argv, deadline, env);
}

const nlohmann::json* scenario(const e2e::Run& r, const std::string& name) {
  for (const auto& s : r.result["scenarios"])
    if (s["name"] == name) return &s;
  return nullptr;
}

// What node `node`'s ranks wrote to stderr (their per-process logs).
std::string ranks_stderr(const nlohmann::json& sc, int node) {
  std::string text;
  for (const auto& p : sc["processes"])
    if (p["node"] == node && p["role"] == "rank" && p.contains("logs") &&
        p["logs"].contains("stderr"))
      text += e2e::slurp(sc["out_dir"].get<std::string>() + "/" +
                         p["logs"]["stderr"].get<std::string>());
  return text;
}

// What the temp dir the nodes share still holds, each entry with what every
// scenario's timeline says of it (who left it, who took it): "" when empty.
std::string tmp_left_story(const e2e::TempDir& dir, const e2e::Run& r) {
  std::string left = e2e::residue_listing(dir / "tmp");
  if (left.empty()) return left;
  std::string story = left;
  std::istringstream names(left);
  std::set<int> holders;
  for (std::string name; std::getline(names, name);)
    for (const auto& sc : r.result["scenarios"])
      for (const auto& o : sc["timeline"])
        if (o.dump().find(name) != std::string::npos) {
          story += "  " + sc["name"].get<std::string>() + ": " + o.dump() + "\n";
          if (o.value("held_outside_by", 0) > 0) holders.insert(o["held_outside_by"].get<int>());
        }
  // Who a holder outside the job is, if it still runs: its parent and
  // command line.
  for (int pid : holders) {
    std::string stat = e2e::slurp("/proc/" + std::to_string(pid) + "/stat");
    std::string cmd = e2e::slurp("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    story += "  holder " + std::to_string(pid) +
             (stat.empty() ? std::string(" is gone") : " now: " + stat + " cmdline: " + cmd) + "\n";
  }
  return story;
}

std::string node_check(const nlohmann::json& node, const std::string& name) {
  for (const auto& c : node["checks"])
    if (c["name"] == name) return c["status"];
  return "";
}

// What a failed expectation on a node's check prints: the check, whole.
std::string node_check_dump(const nlohmann::json& node, const std::string& name) {
  for (const auto& c : node["checks"])
    if (c["name"] == name) return c.dump();
  return "no check " + name;
}

// Each test on its own 2-node cluster, with Python and PyTorch, in its own
// folder; skipped with the reason where either cannot be had.
class MultiNode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cluster_unavailable().empty()) GTEST_SKIP() << cluster_unavailable();
    if (!e2e::torch_unavailable().empty()) GTEST_SKIP() << e2e::torch_unavailable();
    cluster_ = std::make_unique<LocalCluster>(2);
    ASSERT_TRUE(cluster_->ok()) << cluster_->error();
  }
  const LocalCluster& cluster() const { return *cluster_; }
  std::unique_ptr<LocalCluster> cluster_;
  e2e::TempDir dir;
};

// The multinode-cpu suite is run by the four tests below
// (each well inside a test's time); a scenario added to it needs a test.
TEST(MultiNodeSuite, TheSuiteIsTheScenariosTestedHere) {
  std::vector<std::string> files;
  std::istringstream in(e2e::slurp(e2e::src("scenarios/multinode-cpu.suite")));
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') files.push_back(line);
  EXPECT_EQ(
      files,
      (std::vector<std::string>{
          "multinode-clean.yaml", "multinode-node-loss.yaml", "multinode-node-kill-no-cut.yaml",
          "multinode-partition-heals.yaml", "multinode-node-loss-16-workers.yaml",
          "multinode-agent-kill.yaml", "multinode-torchrun-agent-sigterm.yaml",
          "multinode-scancel-loader-workers.yaml", "multinode-scancel-reparented-workers.yaml",
          "multinode-scancel-tied-workers.yaml"}));
}

// A clean run and a lost node: every verdict as written, and what each run shows.
TEST_F(MultiNode, ACleanRunAndANodeLoss) {
  // Not under salloc: --slurm asks for the allocation itself.
  std::vector<std::string> env = cluster().env();
  env.push_back("AFTERMATH_COORDINATOR_ADDR=" + cluster().host_addr());
  env.push_back("SLURM_JOB_ID=");
  e2e::Run r = e2e::aftermath(
      dir,
      {"run", "--slurm", "--out", dir / "out", e2e::src("scenarios/multinode-clean.yaml"),
       e2e::src("scenarios/multinode-node-loss.yaml")},
      e2e::kRunLimit, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("aftermath run --slurm: asking Slurm for 2 node(s): "));

  // A clean run: both nodes' agents report to the end, each node runs its
  // torchrun agent and two ranks (0, 1 on node0; 2, 3 on node1), every
  // check passes (or skips: no GPU) on each node.
  const nlohmann::json* clean = scenario(r, "multinode-clean");
  ASSERT_NE(clean, nullptr) << r.out;
  EXPECT_EQ((*clean)["verdict"], "pass") << (*clean)["verdict_reason"];
  ASSERT_EQ((*clean)["nodes"].size(), 2u);
  std::set<std::string> addresses;
  for (const auto& n : (*clean)["nodes"]) {
    EXPECT_EQ(n["agent"], "done");
    EXPECT_EQ(n["host"], "node" + std::to_string(n["index"].get<int>()));
    addresses.insert(n["address"].get<std::string>());
    EXPECT_EQ(n["verdict"], "pass") << n["verdict_reason"];
    // One kernel, one monotonic clock: the estimate is near 0 and its bound
    // is half a round trip on the cluster's network.
    EXPECT_LE(std::abs(n["clock"]["offset_ms"].get<double>()),
              n["clock"]["uncertainty_ms"].get<double>() + 1.0);
    EXPECT_LT(n["clock"]["uncertainty_ms"].get<double>(), 500.0);
    EXPECT_EQ(n["clock"]["samples"], 8);
  }
  EXPECT_EQ(addresses.size(), 2u);
  std::map<int, std::set<int>> ranks_on;
  for (const auto& p : (*clean)["processes"])
    if (p["role"] == "rank") ranks_on[p["node"].get<int>()].insert(p["rank"].get<int>());
  EXPECT_EQ(ranks_on, (std::map<int, std::set<int>>{{0, {0, 1}}, {1, {2, 3}}}));
  // The timeline is one, on the coordinator's clock, in order.
  double last = -1;
  std::set<int> nodes_seen;
  for (const auto& o : (*clean)["timeline"]) {
    EXPECT_GE(o["t_ms"].get<double>(), last);
    last = o["t_ms"].get<double>();
    nodes_seen.insert(o["node"].get<int>());
  }
  EXPECT_EQ(nodes_seen, (std::set<int>{0, 1}));

  // Node loss mid-step: node 1's processes die in one go with its network
  // cut, so node 0's ranks hear nothing and hang in their all_reduce.
  const nlohmann::json* loss = scenario(r, "multinode-node-loss");
  ASSERT_NE(loss, nullptr) << r.out;
  EXPECT_EQ((*loss)["verdict"], "xfail") << (*loss)["verdict_reason"];
  EXPECT_EQ((*loss)["nodes"][1]["agent"], "done") << "the cut spares the agent's own link";
  ASSERT_EQ((*loss)["faults"].size(), 1u);
  const auto& fault = (*loss)["faults"][0];
  EXPECT_EQ(fault["status"], "injected") << fault["reason"];
  EXPECT_THAT(fault["reason"].get<std::string>(),
              HasSubstr("network cut, then SIGKILL to 3 process(es)"));
  double sent = fault["sent_ms"];
  double first_death = 1e18, last_death = 0;
  for (const auto& p : (*loss)["processes"]) {
    if (p["node"] != 1) continue;
    EXPECT_EQ(p["outcome"]["signal"], "SIGKILL") << p["cmdline"];
    first_death = std::min(first_death, p["exited_ms"].get<double>());
    last_death = std::max(last_death, p["exited_ms"].get<double>());
  }
  EXPECT_GE(first_death, sent);
  EXPECT_LT(last_death - sent, 1000.0) << "node 1's processes die together";
  const auto& n0 = (*loss)["nodes"][0];
  const auto& n1 = (*loss)["nodes"][1];
  EXPECT_EQ(node_check(n0, "no_hang"), "fail") << node_check_dump(n0, "no_hang");
  EXPECT_EQ(node_check(n1, "no_hang"), "pass") << node_check_dump(n1, "no_hang");
  EXPECT_EQ(node_check(n1, "all_exited"), "pass") << node_check_dump(n1, "all_exited");
  // The survivors never saw their peers' sockets close: the cut held.
  double stalled = (*loss)["top"]["stalled_since_ms"].is_number()
                       ? (*loss)["top"]["stalled_since_ms"].get<double>()
                       : -1;
  EXPECT_GT(stalled, 0);
  std::string node0_ranks = ranks_stderr(*loss, 0);
  EXPECT_THAT(node0_ranks,
              HasSubstr("dist_job: rank 0/4"));  // the logs are there, and say nothing of a peer
  EXPECT_THAT(node0_ranks,
              ::testing::Not(::testing::ContainsRegex("Connection (reset|closed) by peer")));
  std::cout << "[ measure  ] node loss: node 1 dead " << (last_death - sent)
            << " ms after the fault; node 0 "
            << "stalled from " << stalled << " ms (fault at " << sent << " ms)\n";

  // Nothing of either run is left.
  std::vector<int> pids;
  for (const auto* s : {clean, loss})
    for (const auto& p : (*s)["processes"]) pids.push_back(p["pid"]);
  EXPECT_TRUE(e2e::all_gone_within(pids, 10s));
  EXPECT_EQ(tmp_left_story(dir, r), "");
}

// The same moment with node 1's processes SIGKILLed and its network up: node
// 0's ranks notice at once; its torchrun agent exits after them (PyTorch
// 2.13), or hangs in its exit barrier (1.13); and a 5 s partition that heals:
// the job runs to its end.
TEST_F(MultiNode, AKillWithoutTheCutAndAPartitionThatHeals) {
  e2e::Run r = salloc_run(dir, cluster(), 2,
                          {e2e::src("scenarios/multinode-node-kill-no-cut.yaml"),
                           e2e::src("scenarios/multinode-partition-heals.yaml")},
                          e2e::kRunLimit);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  const nlohmann::json* kill = scenario(r, "multinode-node-kill-no-cut");
  ASSERT_NE(kill, nullptr) << r.out;
  EXPECT_EQ((*kill)["verdict"], "xfail") << (*kill)["verdict_reason"];
  // Node 0's ranks saw the reset and exited by themselves (their status goes
  // to their parent, torchrun's agent).
  const bool exit_barrier_hangs = !e2e::torch_at_least(*kill, 2, 13);
  int node0_ranks = 0;
  double ranks_gone = 0;
  for (const auto& p : (*kill)["processes"]) {
    if (p["node"] != 0) continue;
    ASSERT_TRUE(p["exited_ms"].is_number()) << p.dump();
    if (p["role"] == "rank") {
      ++node0_ranks;
      ranks_gone = std::max(ranks_gone, p["exited_ms"].get<double>());
    }
  }
  EXPECT_EQ(node0_ranks, 2);
  for (const auto& p : (*kill)["processes"]) {
    if (p["node"] != 0 || p["role"] != "launcher") continue;
    EXPECT_GT(p["exited_ms"].get<double>(), ranks_gone) << p.dump();
    if (exit_barrier_hangs) {
      // It stayed in its exit barrier until the teardown killed it.
      EXPECT_EQ(p["outcome"]["signal"], "SIGKILL") << p.dump();
      EXPECT_LE(ranks_gone, (*kill)["top"]["stalled_since_ms"].get<double>() + 1.0);
    } else {
      EXPECT_EQ(p["outcome"]["text"], "exited(1)") << p.dump();  // by itself
    }
  }
  std::string ranks_err = ranks_stderr(*kill, 0);
  // A reset or a close, as the killed peer had unread data or not.
  EXPECT_THAT(ranks_err, ::testing::ContainsRegex("Connection (reset|closed) by peer"))
      << ranks_err;
  std::string reason = e2e::check(r, "no_hang")["reason"];
  if (exit_barrier_hangs)
    EXPECT_THAT(reason, HasSubstr("node0: hang"));
  else
    EXPECT_EQ(e2e::check(r, "no_hang")["status"], "pass") << reason;

  const nlohmann::json* part = scenario(r, "multinode-partition-heals");
  ASSERT_NE(part, nullptr) << r.out;
  EXPECT_EQ((*part)["verdict"], "pass") << (*part)["verdict_reason"];
  const auto& fault = (*part)["faults"][0];
  EXPECT_EQ(fault["status"], "injected") << fault.dump();
  bool healed = false;
  for (const auto& o : (*part)["timeline"])
    if (o["kind"] == "note" &&
        o.value("text", "").find("the partition healed") != std::string::npos) {
      healed = true;
      EXPECT_GE(o["t_ms"].get<double>() - fault["sent_ms"].get<double>(), 5000.0);
    }
  EXPECT_TRUE(healed);
  std::cout << "[ measure  ] partition 5 s: the job ended "
            << (*part)["timings_ms"]["to_job_exit_ms"].get<double>() << " ms after the cut\n";
  EXPECT_EQ(tmp_left_story(dir, r), "");
}

// A node lost while both run 16 DataLoader workers in file_system mode: the
// survivor hangs with its workers; the lost node keeps its /dev/shm batches.
TEST_F(MultiNode, ANodeLossUnder16FileSystemWorkers) {
  e2e::Run r =
      salloc_run(dir, cluster(), 2, {e2e::src("scenarios/multinode-node-loss-16-workers.yaml")},
                 e2e::kRunLimit);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json& sc = r.result["scenarios"][0];
  EXPECT_EQ(sc["verdict"], "xfail") << sc["verdict_reason"];
  std::map<std::pair<int, std::string>, int> count;
  for (const auto& p : sc["processes"])
    ++count[{p["node"].get<int>(), p["role"].get<std::string>()}];
  EXPECT_EQ((count[{0, "worker"}]), 16);
  EXPECT_EQ((count[{1, "worker"}]), 16);
  const auto& n0 = sc["nodes"][0];
  const auto& n1 = sc["nodes"][1];
  EXPECT_EQ(node_check(n0, "no_hang"), "fail") << node_check_dump(n0, "no_hang");
  EXPECT_EQ(node_check(n0, "shm_clean"), "pass") << node_check_dump(n0, "shm_clean");
  EXPECT_EQ(node_check(n1, "shm_clean"), "fail") << node_check_dump(n1, "shm_clean");
  EXPECT_EQ(node_check(n1, "tmp_clean"), "fail") << node_check_dump(n1, "tmp_clean");
  EXPECT_EQ(node_check(n1, "no_hang"), "pass") << node_check_dump(n1, "no_hang");
  // The harness reclaimed what node 1 left: nothing stays in the temp dir.
  EXPECT_EQ(tmp_left_story(dir, r), "");
}

// Node 1's agent SIGKILLed mid-step: its job part dies with it (the witness
// the coordinator starts there finds none of it), node 0 sees a crash. And
// node 1's torchrun stopped with SIGTERM (pytorch #150916): node 0 re-forms
// alone and finishes.
TEST_F(MultiNode, AnAgentKilledAndATorchrunAgentStopped) {
  e2e::Run r = salloc_run(dir, cluster(), 2,
                          {e2e::src("scenarios/multinode-agent-kill.yaml"),
                           e2e::src("scenarios/multinode-torchrun-agent-sigterm.yaml")},
                          200s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  const nlohmann::json* kill = scenario(r, "multinode-agent-kill");
  ASSERT_NE(kill, nullptr) << r.out;
  EXPECT_EQ((*kill)["verdict"], "xfail") << (*kill)["verdict_reason"];
  const auto& n1 = (*kill)["nodes"][1];
  EXPECT_EQ(n1["agent"], "lost");
  EXPECT_EQ(n1["verdict"], "pass") << n1["verdict_reason"];
  EXPECT_EQ(node_check(n1, "died_with_agent"), "pass") << node_check_dump(n1, "died_with_agent");
  const auto& fault = (*kill)["faults"][0];
  EXPECT_EQ(fault["status"], "injected") << fault.dump();
  // What node 1 streamed before its agent died: its launcher and two ranks,
  // each checked by the witness.
  int node1 = 0;
  for (const auto& p : (*kill)["processes"]) node1 += p["node"] == 1;
  EXPECT_EQ(node1, 3);
  nlohmann::json witness = nlohmann::json::parse(
      e2e::slurp((*kill)["out_dir"].get<std::string>() + "/node1/witness.json"), nullptr, false);
  EXPECT_EQ(witness["checked"], 3) << witness.dump();
  EXPECT_EQ(witness["survivors"].size(), 0u) << witness.dump();
  // Node 0: its agent exits after its ranks (2.13), or hangs in its exit barrier (1.13).
  EXPECT_EQ(node_check((*kill)["nodes"][0], "no_hang"),
            e2e::torch_at_least(*kill, 2, 13) ? "pass" : "fail");
  std::cout << "[ measure  ] agent_kill: node 1's agent lost "
            << n1["lost_ms"].get<double>() - fault["sent_ms"].get<double>()
            << " ms after the fault; the witness waited "
            << witness["waited_ns"].get<double>() / 1e6 << " ms\n";

  const nlohmann::json* term = scenario(r, "multinode-torchrun-agent-sigterm");
  ASSERT_NE(term, nullptr) << r.out;
  EXPECT_EQ((*term)["verdict"], "xfail") << (*term)["verdict_reason"];
  const auto& t0 = (*term)["nodes"][0];
  // Node 0 re-forms alone and finishes (exit 0; 8 runs of 8 on 2.13). Should
  // a 2.x generation still count on node 1 until its 3 restarts ran out, its
  // agent exits 1 (pytorch #150916's report): either way nothing is left, no
  // hang.
  if (!e2e::torch_at_least(*term, 2, 13)) {
    EXPECT_EQ(node_check(t0, "job_exit"), "pass") << node_check_dump(t0, "job_exit");
  }
  std::cout << "[ measure  ] torchrun SIGTERM on node 1: node 0's job_exit "
            << node_check(t0, "job_exit") << "\n";
  EXPECT_EQ(node_check(t0, "all_exited"), "pass") << node_check_dump(t0, "all_exited");
  EXPECT_EQ(node_check(t0, "no_hang"), "pass") << node_check_dump(t0, "no_hang");
  EXPECT_EQ(node_check((*term)["nodes"][1], "job_exit"), "fail");
  // Node 0's agent restarted its ranks, two at a time: once (1.13, and 8
  // runs of 8 on 2.13), at most 3 times (--max_restarts 3).
  int node0_ranks = 0;
  for (const auto& p : (*term)["processes"]) node0_ranks += p["node"] == 0 && p["role"] == "rank";
  EXPECT_GE(node0_ranks, 4);
  EXPECT_LE(node0_ranks, 8);
  EXPECT_EQ(node0_ranks % 2, 0);
  std::cout << "[ measure  ] torchrun SIGTERM on node 1: every node's processes gone "
            << (*term)["timings_ms"]["to_all_gone_ms"].get<double>() << " ms after it\n";
  // What each node's job left in the temp dir the nodes share here is that
  // node's: the kernel says who made each entry, so node 0 takes nothing of
  // node 1's. Node 1's agent was lost with its run, and with it the run that
  // would have moved its torchrun's log folder into its logs: that folder
  // alone is left (on a real cluster, in node 1's own /tmp), and this test
  // removes it.
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir / "tmp"))
    if (!e2e::is_compile_cache(e.path().filename().string()))
      left.push_back(e.path().filename().string());
  ASSERT_LE(left.size(), 1u) << e2e::listing(dir / "tmp");
  for (const auto& name : left) {
    EXPECT_EQ(name.rfind("torchelastic_", 0), 0u) << name;
    for (const auto& e : (*kill)["timeline"]) {
      if (e["kind"] != "tmp_reclaim") continue;
      EXPECT_NE(e["path"].get<std::string>(), dir / ("tmp/" + name)) << "taken by node 0";
    }
    std::filesystem::remove_all(dir / ("tmp/" + name));
  }
}

// The roles step_tree.py's processes wrote a SIGTERM for in `log`.
std::set<std::string> sigtermed(const std::string& log) {
  std::set<std::string> roles;
  std::istringstream in(e2e::slurp(log));
  for (std::string role, pid, what; in >> role;) {
    std::string rest;
    std::getline(in, rest);
    if (rest.find("SIGTERM") != std::string::npos) roles.insert(role);
  }
  return roles;
}

// The scancel fault against Slurm itself: the same process tree (one child
// reparented away) cancelled with `scancel --signal=TERM` on a real step,
// and with `scancel` `signal: SIGTERM` under aftermath. Both reach the task
// and its attached children, never the reparented one.
TEST_F(MultiNode, ScancelReachesWhatSlurmReaches) {
  const std::string program = e2e::src("tests/data/programs/step_tree.py");
  const std::string slurm_log = dir / "slurm.log";
  const std::string script = "srun " + e2e::python() + " " + program + " " + slurm_log +
                             " & P=$!; "
                             "for i in $(seq 600); do grep -q ready " +
                             slurm_log +
                             " 2>/dev/null && break; sleep 0.05; done; "
                             "scancel --signal=TERM $SLURM_JOB_ID.0; wait $P";
  e2e::Child c = e2e::spawn({aftermath::find_program("salloc").value_or("salloc"), "-N1", "--quiet",
                             "/bin/bash", "-c", script},
                            dir / "salloc.out", dir / "salloc.err", cluster().env());
  // srun returns once every process holding its output is gone: the
  // reparented one too (it ends by itself 3 s after it was reparented).
  ASSERT_GE(e2e::wait_for(c, 60s), 0) << e2e::slurp(dir / "salloc.err");
  ASSERT_THAT(e2e::slurp(slurm_log), HasSubstr("ready")) << e2e::slurp(dir / "salloc.err");
  const std::set<std::string> attached{"R", "W1a", "W1b"};
  EXPECT_EQ(sigtermed(slurm_log), attached) << e2e::slurp(slurm_log);

  const std::string model_log = dir / "model.log";
  const std::string yaml = dir / "scancel-tree.yaml";
  std::ofstream(yaml)
      << ("name: scancel-tree\ndescription: the tree under scancel --signal=TERM\ntags: [slurm]\n"
          "job: {command: " +
          e2e::python() + ", args: [" + program + ", " + model_log +
          "]}\n"
          "faults: [{action: scancel, signal: SIGTERM, at: {when: {processes: 4}}}]\n"
          "timeouts: {job: 30s}\n");
  e2e::Run r = e2e::aftermath(dir, {"run", "--out", dir / "out", yaml}, 60s);
  ASSERT_FALSE(r.result.is_null()) << r.out << r.err;
  const auto& fault = r.result["scenarios"][0]["faults"][0];
  EXPECT_EQ(fault["status"], "injected") << fault.dump();
  EXPECT_EQ(fault["pids"].size(), 3u) << fault.dump();
  EXPECT_EQ(sigtermed(model_log), attached) << e2e::slurp(model_log);
  // The reparented one is said to be out of the step's reach.
  std::string notes;
  for (const auto& o : r.result["scenarios"][0]["timeline"])
    if (o["kind"] == "note") notes += o["text"].get<std::string>() + "\n";
  EXPECT_THAT(
      notes,
      HasSubstr("scancel: 1 job process(es) outside the step's tree (reparented) not signalled"));
}

// scancel on a job with DataLoader workers, three ways (every verdict as
// written): the whole job cancelled; a rank killed first, its workers
// reparented out of Slurm's reach; the same with workers tied to their rank.
TEST_F(MultiNode, ScancelWithDataLoaderWorkers) {
  e2e::Run r = salloc_run(dir, cluster(), 2,
                          {e2e::src("scenarios/multinode-scancel-loader-workers.yaml"),
                           e2e::src("scenarios/multinode-scancel-reparented-workers.yaml"),
                           e2e::src("scenarios/multinode-scancel-tied-workers.yaml")},
                          240s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json* all = scenario(r, "multinode-scancel-loader-workers");
  const nlohmann::json* reparented = scenario(r, "multinode-scancel-reparented-workers");
  const nlohmann::json* tied = scenario(r, "multinode-scancel-tied-workers");
  ASSERT_TRUE(all && reparented && tied) << r.out;
  for (const auto* sc : {all, reparented, tied})
    EXPECT_EQ((*sc)["verdict"], "xfail") << (*sc)["verdict_reason"];
  // The whole job: torchrun, the rank, 4 workers and their 4 managers per node.
  EXPECT_EQ((*all)["faults"][0]["pids"].size(), 10u) << (*all)["faults"][0].dump();
  for (int n : {0, 1}) EXPECT_EQ(node_check((*all)["nodes"][n], "shm_clean"), "fail");
  // A rank killed first: on node 1 the cancel finds torchrun alone, the
  // reparented workers go on until their own watchdog ends them.
  EXPECT_EQ((*reparented)["faults"][1]["pids"].size(), 1u) << (*reparented)["faults"][1].dump();
  EXPECT_EQ(node_check((*reparented)["nodes"][1], "no_orphans"), "fail");
  EXPECT_EQ(node_check((*tied)["nodes"][1], "no_orphans"), "pass");
  EXPECT_EQ(node_check((*tied)["nodes"][1], "all_exited"), "pass");
  EXPECT_EQ(tmp_left_story(dir, r), "");
}

// A fault of node 1 triggered by a point on node 0: node 0 arms the point
// too and passes its hit on, through the coordinator, to node 1.
TEST_F(MultiNode, AFaultOfOneNodeTriggeredByAPointOnAnother) {
  const std::string yaml = dir / "cross.yaml";
  std::ofstream(yaml)
      << ("name: cross-node-trigger\n"
          "description: node 1 lost at rank 0's 10th step (rank 0 lives on node 0)\n"
          "tags: [multinode]\nrequires: [python-torch]\nnodes: 2\n"
          "job:\n  command: ${PYTHON}\n"
          "  args: [-m, torch.distributed.run"
          ", --nnodes, '2', --nproc_per_node, '1', --rdzv_backend, c10d, --rdzv_endpoint,"
          " '${AFTERMATH_HEAD}:29400', --rdzv_id, cross, " +
          e2e::src("fixtures/python/dist_job.py") +
          ", --launch, none, --steps, '1000', --step-time, 20ms]\n"
          "faults:\n  - {action: node_loss, target: 'node:1', at: {point: step, labels: {rank: 0}, "
          "hit: 10}}\n"
          "timeouts: {job: 90s}\nchecks: {no_hang: {stall: 5s}}\n");
  e2e::Run r = salloc_run(dir, cluster(), 2, {yaml}, e2e::kRunLimit);
  ASSERT_FALSE(r.result.is_null()) << r.out << r.err;
  const nlohmann::json& sc = r.result["scenarios"][0];
  const auto& fault = sc["faults"][0];
  EXPECT_EQ(fault["status"], "injected") << fault.dump();
  EXPECT_THAT(fault["reason"].get<std::string>(), HasSubstr("triggered on node 0")) << fault.dump();
  EXPECT_EQ(fault["hit"], 10);
  EXPECT_EQ(node_check(sc["nodes"][0], "no_hang"), "fail");
  // From the point on node 0 to the fault on node 1, on the merged clock.
  double point_ms = -1;
  for (const auto& o : sc["timeline"])
    if (o["kind"] == "point" && o.value("node", -1) == 0 && o.value("hit", 0) == 10)
      point_ms = o["t_ms"];
  ASSERT_GE(point_ms, 0) << "node 0's point is on the merged timeline";
  double latency = fault["sent_ms"].get<double>() - point_ms;
  EXPECT_GT(latency, 0);
  std::cout << "[ measure  ] cross-node trigger: node 1's fault " << latency
            << " ms after node 0's point\n";
  EXPECT_EQ(tmp_left_story(dir, r), "");
}

// Outside an allocation, or asking for more nodes than it has: one error
// naming the file, exit 2, nothing launched.
TEST(MultiNodeSuite, WithoutAFittingAllocationNothingIsLaunched) {
  e2e::TempDir dir;
  std::string file = e2e::src("scenarios/multinode-clean.yaml");
  e2e::Run r = e2e::aftermath(dir, {"run", "--out", dir / "out", file}, 30s,
                              {"SLURM_JOB_ID=", "SLURM_JOB_NUM_NODES=", "SLURM_NNODES="});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(
      r.err,
      HasSubstr(file + ": nodes: 2 runs through Slurm and this is not inside an allocation"));
  EXPECT_THAT(r.err, HasSubstr("nothing was launched"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));

  e2e::Run small = e2e::aftermath(dir, {"run", "--out", dir / "out", file}, 30s,
                                  {"SLURM_JOB_ID=77", "SLURM_JOB_NUM_NODES=1"});
  EXPECT_EQ(small.exit_code, 2) << small.out << small.err;
  EXPECT_THAT(small.err, HasSubstr("nodes: 2 but Slurm job 77 has 1 node(s)"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));

  // --slurm with no Slurm to ask: said, nothing launched.
  e2e::Run none = e2e::aftermath(dir, {"run", "--slurm", "--out", dir / "out", file}, 60s,
                                 {"SLURM_JOB_ID=", "SLURM_CONF=" + (dir / "no-slurm.conf")});
  EXPECT_EQ(none.exit_code, 2) << none.out << none.err;
  EXPECT_THAT(none.err, HasSubstr("aftermath run --slurm: $SLURM_CONF names " +
                                  (dir / "no-slurm.conf") + ", which does not exist"));
  EXPECT_THAT(none.err, HasSubstr("nothing was launched"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

}  // namespace
