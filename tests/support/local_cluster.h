// A real Slurm cluster on this machine for one test: scripts/local-cluster.sh
// brings up N nodes, each a network namespace with its own address and
// hostname (node0, node1, ...) and a slurmd, under a name no other test
// shares (tests run side by side); srun, salloc and sbatch run from the test's
// own process with env() on top of its environment. The destructor takes the
// cluster down (daemons, job steps, namespaces, interfaces, state dir) and
// fails the test if something stays.
//
// Everything the script does runs as a child with a deadline: a script that
// overruns it is SIGTERMed (its own trap tears down what it made), then
// SIGKILLed; nothing here waits without one.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/children.h"

#ifndef AFTERMATH_SOURCE_DIR
#error "local_cluster.h needs AFTERMATH_SOURCE_DIR (the checkout holding scripts/local-cluster.sh)"
#endif

namespace aftermath::testing {

class LocalCluster {
 public:
  struct Node {
    std::string hostname;  // as Slurm and the node's tasks know it: node0, node1, ...
    std::string addr;      // its IPv4 address on the cluster's network
  };
  // What a command of the script gave: its exit code (-1: killed at its
  // deadline, or could not start) and its stdout and stderr together.
  struct ScriptRun {
    int exit_code = -1;
    std::string output;
  };

  static std::string script() { return AFTERMATH_SOURCE_DIR "/scripts/local-cluster.sh"; }

  // Why no cluster can be made here ("not root", "no slurmd on PATH",
  // "'ip netns add' is not permitted here", ...); empty when one can.
  static std::string unavailable() {
    ScriptRun r = run_script({"check"}, std::chrono::seconds(20));
    if (r.exit_code == 0) return "";
    std::string why = trim(r.output);
    return why.empty()
               ? "scripts/local-cluster.sh check failed (exit " + std::to_string(r.exit_code) + ")"
               : why;
  }

  // Runs `scripts/local-cluster.sh ARGS...`, waiting at most `deadline`.
  static ScriptRun run_script(const std::vector<std::string>& args,
                              std::chrono::milliseconds deadline) {
    std::vector<std::string> argv{"/bin/bash", script()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, deadline);
  }

  // Brings up `nodes` nodes under a fresh name. ok() tells whether it is up;
  // error() why not (the script's one-line message). `up` waits for every
  // node to be idle (30 s at most); this waits for the script 60 s at most.
  explicit LocalCluster(int nodes) : name_(fresh_name()) {
    auto start = std::chrono::steady_clock::now();
    ScriptRun r = run_script({"up", name_, std::to_string(nodes)}, std::chrono::seconds(60));
    up_time_ = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (r.exit_code != 0) {
      error_ = "up " + name_ + " (exit " + std::to_string(r.exit_code) + "): " + trim(r.output);
      down(nullptr);  // whatever a killed script left
      return;
    }
    ScriptRun e = run_script({"env", name_}, std::chrono::seconds(20));
    std::map<std::string, std::string> vars = parse_exports(e.output);
    if (e.exit_code != 0 || !vars.count("SLURM_CONF")) {
      error_ = "env " + name_ + ": " + trim(e.output);
      return;
    }
    for (const auto& [k, v] : vars) env_.push_back(k + "=" + v);
    state_dir_ = vars["AFTERMATH_CLUSTER_DIR"];
    slurm_conf_ = vars["SLURM_CONF"];
    host_addr_ = vars["AFTERMATH_CLUSTER_HOST_ADDR"];
    host_ifname_ = vars["AFTERMATH_CLUSTER_HOST_IFNAME"];
    node_ifname_ = vars["AFTERMATH_CLUSTER_NODE_IFNAME"];
    std::istringstream hs(vars["AFTERMATH_CLUSTER_NODES"]),
        as(vars["AFTERMATH_CLUSTER_NODE_ADDRS"]);
    for (Node n; hs >> n.hostname && as >> n.addr;) nodes_.push_back(n);
    up_ = static_cast<int>(nodes_.size()) == nodes;
    if (!up_)
      error_ = "env " + name_ + ": " + std::to_string(nodes_.size()) + " nodes, not " +
               std::to_string(nodes);
  }

  // Takes the cluster down unless down() did; a failure fails the test.
  ~LocalCluster() {
    std::string why;
    if (!down_ && !down(&why))
      ADD_FAILURE() << "local cluster " << name_ << ": down failed: " << why;
  }
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // Takes it down now (60 s at most): true when nothing of it is left, else
  // false with the script's message in *why. Idempotent.
  bool down(std::string* why) {
    if (down_) return true;
    ScriptRun r = run_script({"down", name_}, std::chrono::seconds(60));
    // "no cluster NAME here": a failed up that cleaned up after itself.
    down_ = r.exit_code == 0 || r.output.find("no cluster " + name_ + " here") != std::string::npos;
    if (!down_ && why) *why = "exit " + std::to_string(r.exit_code) + ": " + trim(r.output);
    return down_;
  }

  bool ok() const { return up_; }
  const std::string& error() const { return error_; }
  const std::string& name() const { return name_; }
  // How long `up` took, start to every node idle.
  std::chrono::milliseconds up_time() const { return up_time_; }

  const std::string& state_dir() const { return state_dir_; }
  const std::string& slurm_conf() const { return slurm_conf_; }
  // This machine's address on the cluster's network: where a coordinator
  // here listens for the nodes.
  const std::string& host_addr() const { return host_addr_; }
  // This machine's end of the link to the cluster (an interface name).
  const std::string& host_ifname() const { return host_ifname_; }
  // The nodes' interface name, inside each node (GLOO_SOCKET_IFNAME).
  const std::string& node_ifname() const { return node_ifname_; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  const std::vector<Node>& nodes() const { return nodes_; }

  // "SLURM_CONF=..." and the AFTERMATH_CLUSTER_* variables (`env NAME`): on
  // top of a child's environment, srun/salloc/sbatch reach this cluster.
  const std::vector<std::string>& env() const { return env_; }

  // The daemons' pids, as `up` recorded them (state_dir()/pids/*).
  std::vector<pid_t> daemon_pids() const {
    std::vector<pid_t> pids;
    for (const char* role : {"slurmctld"}) read_pid(state_dir_ + "/pids/" + role, pids);
    for (const auto& n : nodes_) read_pid(state_dir_ + "/pids/slurmd-" + n.hostname, pids);
    return pids;
  }

 private:
  // "t<pid>-<count>-<random>": unique among this process's clusters, other
  // test processes', and an earlier run's leftovers with a reused pid.
  static std::string fresh_name() {
    static std::atomic<int> count{0};
    std::random_device rd;
    char rnd[8];
    std::snprintf(rnd, sizeof rnd, "%04x", static_cast<unsigned>(rd() & 0xffff));
    return "t" + std::to_string(::getpid()) + "-" + std::to_string(++count) + "-" + rnd;
  }

  static std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  // `export K=V` / `export K="V W"` lines.
  static std::map<std::string, std::string> parse_exports(const std::string& text) {
    std::map<std::string, std::string> vars;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("export ", 0) != 0) continue;
      auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string v = line.substr(eq + 1);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      vars[line.substr(7, eq - 7)] = v;
    }
    return vars;
  }

  static void read_pid(const std::string& file, std::vector<pid_t>& out) {
    std::ifstream f(file);
    long pid = 0;
    if (f >> pid && pid > 0) out.push_back(static_cast<pid_t>(pid));
  }

  // argv[0] (an absolute path) with stdout and stderr into one pipe, read
  // until EOF or the deadline; past it SIGTERM (the script's trap cleans up),
  // 20 s more, then SIGKILL.
  static ScriptRun run(const std::vector<std::string>& argv, std::chrono::milliseconds deadline) {
    ScriptRun r;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return r;
    std::vector<std::string> args = argv;
    std::vector<char*> cargv = testing_children::exec_argv(args);
    pid_t pid = ::fork();
    if (pid == 0) {  // between fork and exec: no allocation
      int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) ::dup2(devnull, 0);
      ::dup2(p[1], 1);
      ::dup2(p[1], 2);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    ::close(p[1]);
    testing_children::OwnedChild child(pid);
    auto end = std::chrono::steady_clock::now() + deadline;
    bool eof = false;
    while (!eof) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0 ||
          !testing_children::readable_within(p[0], static_cast<int>(left.count())))
        break;
      char buf[4096];
      ssize_t n = ::read(p[0], buf, sizeof buf);
      if (n > 0) r.output.append(buf, static_cast<size_t>(n));
      eof = n == 0 || (n < 0 && errno != EINTR);
    }
    ::close(p[0]);
    if (!eof && child.pid() > 0) {
      ::kill(child.pid(), SIGTERM);  // ours and unreaped: the pid is still its own
      r.output += "\n(killed at its deadline of " + std::to_string(deadline.count()) + " ms)";
      child.reap_within(20000);
      return r;
    }
    int status = child.reap_within(10000);
    if (status >= 0 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    return r;
  }

  std::string name_;
  bool up_ = false;
  bool down_ = false;
  std::string error_;
  std::chrono::milliseconds up_time_{0};
  std::string state_dir_, slurm_conf_, host_addr_, host_ifname_, node_ifname_;
  std::vector<Node> nodes_;
  std::vector<std::string> env_;
};

// LocalCluster::unavailable(), asked once per test process.
inline const std::string& cluster_unavailable() {
  static const std::string why = LocalCluster::unavailable();
  return why;
}

}  // namespace aftermath::testing
