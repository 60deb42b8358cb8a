#include "harness/cluster/coordinator.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "harness/check/check_params.h"
#include "harness/cluster/link.h"
#include "harness/cluster/merge.h"
#include "harness/cluster/node_part.h"
#include "harness/cluster/protocol.h"
#include "harness/cluster/witness.h"
#include "harness/core/timeline_wire.h"
#include "harness/observe/python_probe.h"
#include "harness/os/find_program.h"
#include "harness/os/pidfd.h"
#include "harness/os/spawn.h"

namespace aftermath {

namespace {

using nlohmann::json;

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string random_token() {
  std::random_device rd;
  std::ostringstream s;
  s << std::hex << rd() << rd() << rd() << rd();
  return s.str();
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string tail_of(const std::string& path, size_t bytes = 2000) {
  std::ifstream f(path);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (s.size() > bytes) s = s.substr(s.size() - bytes);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// srun, running the agents; ended (SIGTERM, then SIGKILL) if it outstays.
class Step {
 public:
  Expected<pid_t> start(const std::vector<std::string>& argv, const std::string& log) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return sys_error("cannot write " + log);
    SpawnOptions so;
    so.argv = argv;
    so.stdout_fd = fd;
    so.stderr_fd = fd;
    so.die_with_parent = true;
    auto pid = spawn(so);
    ::close(fd);
    if (!pid) return pid.error();
    pid_ = *pid;
    (void)pidfd_open(pid_, pidfd_);
    return pid_;
  }
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      status_ = status;
      return false;
    }
    return true;
  }
  // Waits up to `grace` for srun to end, then ends it.
  void finish(Nanos grace) {
    Nanos deadline = monotonic_now() + grace;
    int sent = 0;
    while (running()) {
      if (monotonic_now() >= deadline) {
        if (sent == 2) break;
        if (pidfd_) (void)pidfd_signal(pidfd_.get(), sent == 0 ? SIGTERM : SIGKILL);
        ++sent;
        deadline = monotonic_now() + 10 * kSecond;
      }
      pollfd p{pidfd_ ? pidfd_.get() : -1, POLLIN, 0};
      ::poll(&p, 1, 50);
    }
    if (running() && pidfd_) {
      (void)pidfd_signal(pidfd_.get(), SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  int pidfd() const { return pidfd_ ? pidfd_.get() : -1; }
  ~Step() { finish(0); }

 private:
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  int status_ = 0;
};

struct Agent {
  Link link;
  NodeRun run;
  bool result = false;
  Nanos progress_relayed = -kSecond;  // when another node's progress was last passed on
};

// One node's progress, passed on to every other node still running (at most
// every 250 ms each, never waiting long on a slow link).
void relay_progress(std::vector<Agent>& agents, const Agent& from) {
  Nanos t = monotonic_now();
  for (auto& b : agents) {
    if (&b == &from || !b.link.open() || b.result || t - b.progress_relayed < 250 * kMilli)
      continue;
    b.progress_relayed = t;
    (void)b.link.send({{"type", "progress"}}, 100 * kMilli);
  }
}

// A point on one node matched a fault that belongs to another: that node is
// told to fire it (a node whose agent is gone cannot be).
void relay_trigger(const Scenario& sc, std::vector<Agent>& agents, const Agent& from,
                   const json& m) {
  size_t fault = m.value("fault", size_t(-1));
  if (fault >= sc.faults.size()) return;
  int owner = fault_owner(sc.faults[fault]);
  for (auto& b : agents) {
    if (b.run.index != owner || !b.link.open() || b.result) continue;
    (void)b.link.send({{"type", "fire"},
                       {"fault", fault},
                       {"from", from.run.index},
                       {"point", m.value("point", "")},
                       {"hit", m.value("hit", 0LL)}},
                      kSecond);
  }
}

json start_message(const Scenario& sc, const RunOptions& o, std::uint64_t seed,
                   const std::string& head, int node, const std::string& out_dir,
                   const std::map<std::string, std::string>& vars) {
  json v = json::object();
  for (const auto& [k, val] : vars) v[k] = val;
  v["AFTERMATH_HEAD"] = head;
  v["AFTERMATH_NODE"] = std::to_string(node);
  v["AFTERMATH_NODES"] = std::to_string(sc.nodes);
  json role_grace = json::object();
  for (const auto& [role, g] : sc.role_grace) role_grace[std::string(to_string(role))] = g;
  std::error_code ec;
  std::string dir =
      sc.file.empty() ? "" : std::filesystem::absolute(sc.file, ec).parent_path().string();
  return {{"type", "start"},
          {"scenario", sc.text},
          {"file", sc.file},
          {"scenario_dir", dir},
          {"vars", v},
          {"seed", seed},
          {"out_dir", out_dir},
          {"containment", o.contain.mode},
          {"shm", o.contain.shm},
          {"keep_leaks", o.contain.keep_leaks},
          {"grace", sc.grace},
          {"role_grace", role_grace},
          {"timeouts",
           {{"job", sc.timeouts.job},
            {"settle", sc.timeouts.settle},
            {"teardown", sc.timeouts.teardown}}}};
}

void take(Agent& a, const json& m, Nanos coordinator_origin) {
  std::string type = m.value("type", "");
  NodeRun& n = a.run;
  if (type == "obs") {
    if (auto ob = observation_from_wire(m.value("o", json::object())))
      n.timeline.add(std::move(*ob));
  } else if (type == "origin") {
    n.origin = m.value("t", Nanos{0});
  } else if (type == "result") {
    if (auto f = run_facts_from_wire(m.value("facts", json::object())))
      n.timeline.facts = std::move(*f);
    if (auto d = device_timeline_from_wire(m.value("device", json::object())))
      n.timeline.device = std::move(*d);
    // The node's own verdict; a word this build does not know is an error.
    n.verdict = parse_verdict(m.value("verdict", "")).value_or(Verdict::Error);
    n.verdict_reason = m.value("verdict_reason", "");
    n.error = m.value("error", "");
    for (const auto& i : m.value("faults", json::array()))
      if (i.is_number_unsigned()) n.fault_indices.push_back(i.get<size_t>());
    n.have_result = true;
    a.result = true;
    n.agent = AgentState::Done;
  } else if (type == "error") {
    n.error = m.value("text", "");
    n.verdict_reason = n.error;
  }
  (void)coordinator_origin;
}

// The job processes a node's agent had seen alive, by pid and start time.
std::vector<WitnessProcess> last_seen_alive(const Timeline& t) {
  std::map<int, std::uint64_t> ticks;
  for (const auto& ob : t.observations)
    if (const auto* s = ob.as<obs::ProcStart>())
      ticks[s->pid] = static_cast<std::uint64_t>(s->start_ticks);
  std::vector<WitnessProcess> out;
  for (const auto& p : build_histories(t))
    if (!p.end() && ticks.count(p.pid))
      out.push_back({p.pid, ticks[p.pid], std::string(to_string(p.role))});
  return out;
}

// The grace the witness gives a lost agent's job to go.
Nanos witness_grace(const Scenario& sc) {
  auto it = sc.checks.find(kDiedWithAgent);
  return it != sc.checks.end() && it->second.grace ? *it->second.grace : sc.grace;
}

// `aftermath witness` on one node (its index in the allocation), through srun.
struct Witness {
  Step step;
  std::string report_path;
  std::string log_path;
};

std::unique_ptr<Witness> start_witness(const std::string& self, const NodeRun& n,
                                       const Scenario& sc) {
  auto w = std::make_unique<Witness>();
  w->report_path = n.out_dir + "/witness.json";
  w->log_path = n.out_dir + "/witness.log";
  std::vector<std::string> argv = {*find_program("srun"),
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--relative=" + std::to_string(n.index),
                                   "--overlap",
                                   "--job-name=aftermath-witness",
                                   "--output=" + w->report_path,
                                   "--error=" + w->log_path,
                                   self,
                                   "witness",
                                   "--grace",
                                   std::to_string(witness_grace(sc) / kMilli) + "ms"};
  for (const auto& p : last_seen_alive(n.timeline)) {
    argv.push_back("--proc");
    argv.push_back(witness_arg(p));
  }
  if (auto pid = w->step.start(argv, n.out_dir + "/witness-srun.log"); !pid) return nullptr;
  return w;
}

void finish_witness(Witness* w, NodeRun& n, Nanos deadline) {
  if (!w) {
    n.witness_error = "the witness could not be started (srun)";
    return;
  }
  w->step.finish(std::max<Nanos>(deadline - monotonic_now(), kSecond));
  std::ifstream f(w->report_path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  json j = json::parse(text, nullptr, false);
  if (auto report = witness_report_from(j)) {
    n.witness = std::move(*report);
    return;
  }
  n.witness_error = "the witness on node" + std::to_string(n.index) + " gave no report";
  std::string log = tail_of(w->log_path, 500) + tail_of(w->report_path, 500);
  if (!log.empty()) n.witness_error += ": " + log;
}

Expected<std::string> coordinator_address(const CoordinatorOptions& c) {
  std::string configured = !c.address.empty() ? c.address : env_or("AFTERMATH_COORDINATOR_ADDR");
  std::string host = host_name();
  return pick_coordinator_address(
      configured, host, configured.empty() ? resolve_ipv4(host) : Expected<std::string>(""));
}

}  // namespace

Expected<std::string> pick_coordinator_address(const std::string& configured,
                                               const std::string& host,
                                               const Expected<std::string>& resolved) {
  if (!configured.empty()) return configured;
  const std::string fix =
      ": set $AFTERMATH_COORDINATOR_ADDR to this host's address on the nodes' network";
  if (!resolved)
    return Error{"this host's name '" + host + "' does not resolve (" + resolved.error().what +
                 ")" + fix};
  if (resolved->rfind("127.", 0) == 0)
    return Error{"this host's name '" + host + "' resolves to " + *resolved +
                 ", a loopback address no other node can reach" + fix};
  return *resolved;
}

Status multinode_available(int nodes) {
  std::string job = env_or("SLURM_JOB_ID");
  if (job.empty())
    return Error{"nodes: " + std::to_string(nodes) +
                 " runs through Slurm and this is not inside an allocation " +
                 "(no $SLURM_JOB_ID): run it under `salloc -N" + std::to_string(nodes) +
                 " aftermath run ...` " + "or in an sbatch script"};
  int have = std::atoi(env_or("SLURM_JOB_NUM_NODES", env_or("SLURM_NNODES", "0")).c_str());
  if (have < nodes)
    return Error{"nodes: " + std::to_string(nodes) + " but Slurm job " + job + " has " +
                 std::to_string(have) + " node(s) (ask for them: salloc -N" +
                 std::to_string(nodes) + ")"};
  if (!find_program("srun")) return Error{"srun is not in PATH (Debian package slurm-client)"};
  if (auto address = coordinator_address({}); !address) return address.error();
  return {};
}

ScenarioResult run_multinode(const Scenario& input, const RunOptions& o, int run_index, int runs,
                             const CoordinatorOptions& c) {
  // Every node runs the same interpreter (${PYTHON}, or the job's own):
  // its PyTorch decides the scenario's `torch:` range, as on one node.
  PythonFacts facts = facts_for_job(input.job.argv, o.python);
  Scenario sc = for_torch(with_overrides(input, o), facts.torch);
  std::uint64_t seed = choose_seed(sc, o);
  ScenarioResult r = begin_result(sc, o, seed, run_index, runs);
  std::error_code ec;
  std::filesystem::create_directories(r.out_dir, ec);
  if (ec) return harness_error(std::move(r), "cannot create " + r.out_dir + ": " + ec.message());
  r.stdout_path = r.out_dir + "/node0/stdout.log";
  r.stderr_path = r.out_dir + "/node0/stderr.log";
  if (Status can = multinode_available(sc.nodes); !can)
    return harness_error(std::move(r), can.error().what);

  auto chosen = coordinator_address(c);
  if (!chosen) return harness_error(std::move(r), "coordinator: " + chosen.error().what);
  std::string address = *chosen;
  int port = 0;
  auto listener = listen_tcp(address, &port);
  if (!listener) return harness_error(std::move(r), "coordinator: " + listener.error().what);
  std::string token = random_token();
  std::string self = o.repro.self_path.empty() ? "aftermath" : o.repro.self_path;
  std::string agents_log = r.out_dir + "/agents.log";
  std::vector<std::string> argv = {*find_program("srun"),
                                   "--nodes=" + std::to_string(sc.nodes),
                                   "--ntasks=" + std::to_string(sc.nodes),
                                   "--ntasks-per-node=1",
                                   "--overlap",
                                   "--kill-on-bad-exit=0",
                                   "--job-name=aftermath-" + sc.name,
                                   self,
                                   "agent",
                                   "--coordinator",
                                   address + ":" + std::to_string(port),
                                   "--token",
                                   token};
  Step step;
  if (auto pid = step.start(argv, agents_log); !pid)
    return harness_error(std::move(r), "cannot start srun: " + pid.error().what);

  // Every agent's hello, within the deadline.
  std::vector<Agent> agents(static_cast<size_t>(sc.nodes));
  for (int i = 0; i < sc.nodes; ++i) {
    agents[i].run.index = i;
    agents[i].run.out_dir = r.out_dir + "/node" + std::to_string(i);
  }
  Nanos deadline = monotonic_now() + c.connect_timeout;
  int connected = 0;
  std::string refused;
  while (connected < sc.nodes && monotonic_now() < deadline && step.running()) {
    auto fd =
        accept_tcp(listener->get(), std::min<Nanos>(200 * kMilli, deadline - monotonic_now()));
    if (!fd) continue;
    Link link(std::move(*fd));
    auto hello = link.receive(10 * kSecond);
    if (!hello || hello->value("type", "") != "hello" || hello->value("token", "") != token) {
      refused = "a connection that was not one of this run's agents";
      continue;
    }
    int node = hello->value("node", -1);
    if (node < 0 || node >= sc.nodes || agents[node].link.open()) {
      (void)link.send(
          {{"type", "error"}, {"text", "node index " + std::to_string(node) + " is not expected"}});
      continue;
    }
    Agent& a = agents[node];
    a.run.host = hello->value("host", "");
    a.run.address = peer_address(link.fd());
    a.run.agent = AgentState::Lost;
    a.link = std::move(link);
    ++connected;
  }
  if (connected < sc.nodes) {
    std::string missing;
    for (const auto& a : agents)
      if (!a.link.open())
        missing += (missing.empty() ? "" : ", ") + ("node" + std::to_string(a.run.index));
    for (auto& a : agents) (void)a.link.send({{"type", "finish"}});
    step.finish(10 * kSecond);
    std::string why = "the agents of " + missing + " never connected (within " +
                      format_duration(c.connect_timeout) + ")";
    std::string log = tail_of(agents_log);
    if (!log.empty()) why += "; srun said: " + log;
    return harness_error(std::move(r), why);
  }

  // Clock offsets, one agent at a time (a quiet link gives the tightest bound).
  for (auto& a : agents) {
    std::vector<ClockSample> samples;
    for (int k = 0; k < c.clock_pings; ++k) {
      ClockSample s;
      s.sent = monotonic_now();
      if (!a.link.send({{"type", "ping"}, {"id", k}})) break;
      auto pong = a.link.receive(5 * kSecond);
      s.received = monotonic_now();
      if (!pong || pong->value("type", "") != "pong") break;
      s.agent = pong->value("t", Nanos{0});
      samples.push_back(s);
    }
    a.run.clock = estimate_offset(samples);
  }

  // Every node's part starts now.
  std::string head = agents[0].run.host;
  std::map<std::string, std::string> vars = o.scenario_vars;
  Nanos origin = monotonic_now();
  for (auto& a : agents)
    (void)a.link.send(start_message(sc, o, seed, head, a.run.index, a.run.out_dir, vars));

  // Gather until every node has reported its end or is lost.
  Nanos end =
      origin + sc.timeouts.job + sc.timeouts.settle + 10 * sc.timeouts.teardown + 120 * kSecond;
  auto pending = [&] {
    int n = 0;
    for (const auto& a : agents) n += a.link.open() && !a.result;
    return n;
  };
  // An agent lost mid-run gets its witness at once: whatever of its job is
  // still there after the grace survived its agent.
  std::vector<std::unique_ptr<Witness>> witnesses(agents.size());
  auto lost = [&](Agent& a) {
    a.run.agent = AgentState::Lost;
    a.run.lost_at = monotonic_now() - origin;
    a.run.witness_at = a.run.lost_at;
    witnesses[a.run.index] = start_witness(self, a.run, sc);
  };
  while (pending() > 0 && monotonic_now() < end && !(o.interrupted && *o.interrupted)) {
    std::vector<pollfd> fds;
    for (auto& a : agents) fds.push_back({a.link.open() ? a.link.fd() : -1, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 200);
    for (auto& a : agents) {
      if (!a.link.open() || a.result) continue;
      std::vector<json> got;
      bool open = a.link.read_available(got);
      for (const auto& m : got) {
        if (m.value("type", "") == "progress")
          relay_progress(agents, a);
        else if (m.value("type", "") == "trigger")
          relay_trigger(sc, agents, a, m);
        else
          take(a, m, origin);
      }
      if (!open && !a.result) lost(a);
    }
  }
  for (auto& a : agents) {
    if (a.link.open() && !a.result) lost(a);
    (void)a.link.send({{"type", "finish"}});
  }
  Nanos witness_deadline = monotonic_now() + witness_grace(sc) + 60 * kSecond;
  for (auto& a : agents)
    if (a.run.agent == AgentState::Lost)
      finish_witness(witnesses[a.run.index].get(), a.run, witness_deadline);
  step.finish(30 * kSecond);
  for (auto& a : agents) a.link.close();

  std::vector<NodeRun> runs_by_node;
  for (auto& a : agents) runs_by_node.push_back(std::move(a.run));
  r.timeline.facts.python = facts;
  merge_nodes(r, sc, o, runs_by_node, origin);
  if (o.interrupted && *o.interrupted) {
    r.verdict = Verdict::Error;
    r.error = "interrupted";
    r.verdict_reason = "the run was interrupted";
  }
  return r;
}

}  // namespace aftermath
