#include "harness/cluster/agent.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "harness/check/scenario_load.h"
#include "harness/cluster/link.h"
#include "harness/cluster/node_part.h"
#include "harness/cluster/protocol.h"
#include "harness/core/timeline_wire.h"
#include "harness/inject/network_cut.h"
#include "harness/supervise/runner.h"

namespace aftermath {

namespace {

using nlohmann::json;

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

int fail(Link& link, int code, const std::string& why) {
  std::cerr << "aftermath agent: " << why << "\n";
  (void)link.send({{"type", "error"}, {"text", why}});
  return code;
}

// The scenario as the coordinator parsed it, parsed again here with this
// node's values for the node variables, its overrides applied.
Expected<Scenario> scenario_from(const json& start) {
  ParseContext ctx;
  ctx.file = start.value("file", "");
  ctx.scenario_dir = start.value("scenario_dir", "");
  const json vars = start.value("vars", json::object());
  for (const auto& [k, v] : vars.items())
    if (v.is_string()) ctx.vars[k] = v.get<std::string>();
  ParseResult parsed = parse_scenario(start.value("scenario", ""), ctx);
  if (!parsed) {
    std::string why = "the scenario does not parse on this node:";
    for (const auto& d : parsed.error()) why += " " + d.to_string() + ";";
    return Error{why};
  }
  Scenario sc = std::move(*parsed);
  const json t = start.value("timeouts", json::object());
  sc.timeouts.job = t.value("job", sc.timeouts.job);
  sc.timeouts.settle = t.value("settle", sc.timeouts.settle);
  sc.timeouts.teardown = t.value("teardown", sc.timeouts.teardown);
  sc.grace = start.value("grace", sc.grace);
  const json role_grace = start.value("role_grace", json::object());
  for (const auto& [role, g] : role_grace.items())
    if (auto r = parse_role(role); r && g.is_number_integer()) sc.role_grace[*r] = g.get<Nanos>();
  return sc;
}

}  // namespace

int run_agent(const AgentOptions& opt) {
  Link none;
  int node = opt.node;
  if (node < 0) {
    const char* id = std::getenv("SLURM_NODEID");
    if (!id)
      return fail(none, protocol::kAgentBadStart,
                  "no --node and no $SLURM_NODEID: which node is this?");
    node = std::atoi(id);
  }
  auto colon = opt.coordinator.rfind(':');
  if (colon == std::string::npos)
    return fail(none, protocol::kAgentBadStart,
                "--coordinator must be host:port, got '" + opt.coordinator + "'");
  std::string coord_host = opt.coordinator.substr(0, colon);
  int coord_port = std::atoi(opt.coordinator.c_str() + colon + 1);
  auto fd = connect_tcp(coord_host, coord_port, opt.connect_timeout);
  if (!fd) return fail(none, protocol::kAgentLostCoordinator, fd.error().what);
  Link link(std::move(*fd));
  std::string kept_address = peer_address(link.fd());
  if (Status s = link.send({{"type", "hello"},
                            {"version", protocol::kVersion},
                            {"token", opt.token},
                            {"node", node},
                            {"host", host_name()},
                            {"pid", ::getpid()}});
      !s)
    return fail(link, protocol::kAgentLostCoordinator, s.error().what);

  // Pings until the start.
  json start;
  for (;;) {
    auto m = link.receive(opt.connect_timeout);
    if (!m)
      return fail(link, protocol::kAgentLostCoordinator,
                  "waiting for the start: " + m.error().what);
    std::string type = m->value("type", "");
    if (type == "ping") {
      (void)link.send({{"type", "pong"}, {"id", m->value("id", 0)}, {"t", monotonic_now()}});
    } else if (type == "start") {
      start = std::move(*m);
      break;
    } else if (type == "finish" || type == "error") {
      return fail(link, protocol::kAgentBadStart,
                  "the coordinator ended the run before it started");
    }
  }
  auto parsed = scenario_from(start);
  if (!parsed) return fail(link, protocol::kAgentBadStart, parsed.error().what);
  Scenario part = node_part(*parsed, node);

  RunOptions o;
  o.exact_dir = start.value("out_dir", "");
  std::error_code ec;
  std::filesystem::create_directories(o.exact_dir, ec);
  o.contain.reaper_path = opt.bin_dir + "/aftermath-reaper";
  o.contain.mode = start.value("containment", "auto");
  o.contain.shm = start.value("shm", "auto");
  o.contain.keep_leaks = start.value("keep_leaks", false);
  o.overrides.seed = start.value("seed", std::uint64_t{0});
  o.repro.self_path = opt.bin_dir + "/aftermath";
  // The run's interpreter, as the coordinator resolved it (${PYTHON}).
  const json vars = start.value("vars", json::object());
  if (auto py = vars.find("PYTHON"); py != vars.end() && py->is_string())
    o.python = py->get<std::string>();
  NftNetworkCut cut("aftermath_cut_" + std::to_string(::getpid()),
                    KeptPeer{kept_address, coord_port}, o.exact_dir);
  o.inject.network = &cut;
  bool streaming = true;
  std::optional<Nanos> origin;  // the agent clock at the run's time 0 (the earliest estimate)
  o.node.on_observation = [&](const Observation& ob) {
    Nanos at = monotonic_now() - ob.t;
    bool first = !origin;
    if (!origin || at < *origin) origin = at;
    // The origin goes out with the first observation too: a node whose agent
    // dies mid-run still has its timeline placed (within microseconds).
    if (streaming && first && !link.send({{"type", "origin"}, {"t", *origin}})) streaming = false;
    if (streaming && !link.send({{"type", "obs"}, {"o", wire_json(ob)}}))
      streaming = false;  // the coordinator is gone; the run goes on to its end and teardown
  };
  // Progress, both ways: this node's goes to the coordinator (at most every
  // 250 ms), which passes it on to the other nodes; theirs comes back here.
  Nanos progress_sent = -kSecond;
  o.node.on_progress = [&] {
    Nanos t = monotonic_now();
    if (!streaming || t - progress_sent < 250 * kMilli) return;
    progress_sent = t;
    if (!link.send({{"type", "progress"}}, kSecond)) streaming = false;
  };
  bool finished = false;  // the coordinator ended the run early (interrupted)
  // Faults triggered across nodes: a point here that matched another node's
  // fault goes to the coordinator, which passes it to that node; this node's
  // own faults triggered elsewhere come back the same way.
  const std::vector<size_t> mine = node_fault_indices(*parsed, node);
  std::vector<RemoteFireRequest> fires;
  o.node.on_remote_trigger = [&](size_t fault, const std::string& point, long long hit) {
    if (streaming &&
        !link.send({{"type", "trigger"}, {"fault", fault}, {"point", point}, {"hit", hit}},
                   kSecond))
      streaming = false;
  };
  o.node.remote_progress = [&] {
    std::vector<json> got;
    if (streaming && !link.read_available(got)) streaming = false;
    bool progress = false;
    for (const auto& m : got) {
      std::string type = m.value("type", "");
      progress = progress || type == "progress";
      finished = finished || type == "finish";
      if (type != "fire") continue;
      auto at = std::find(mine.begin(), mine.end(), m.value("fault", size_t(-1)));
      if (at != mine.end())
        fires.push_back({size_t(at - mine.begin()), m.value("from", -1), m.value("point", ""),
                         m.value("hit", 0LL)});
    }
    return progress;
  };
  o.node.remote_fires = [&] { return std::exchange(fires, {}); };
  // agent_kill: what the coordinator is to learn of it was streamed above;
  // then this process dies as a SIGKILL from outside would end it.
  o.inject.end_agent = [] { ::kill(::getpid(), SIGKILL); };
  ScenarioResult r = run_scenario(part, o);
  json faults = json::array();
  for (size_t i : mine) faults.push_back(i);
  (void)link.send({{"type", "origin"}, {"t", origin.value_or(monotonic_now())}});
  (void)link.send({{"type", "result"},
                   {"facts", wire_json(r.timeline.facts)},
                   {"device", wire_json(r.timeline.device)},
                   {"verdict", std::string(to_string(r.verdict))},
                   {"verdict_reason", r.verdict_reason},
                   {"error", r.error},
                   {"faults", faults}},
                  60 * kSecond);
  // Until every node is done: a node that lost its network stays cut off.
  Nanos wait =
      part.timeouts.job + part.timeouts.settle + 10 * part.timeouts.teardown + 300 * kSecond;
  while (!finished) {
    auto m = link.receive(wait);
    if (!m || m->value("type", "") == "finish") break;
  }
  if (Status s = cut.heal(); !s) std::cerr << "aftermath agent: " << s.error().what << "\n";
  return 0;
}

}  // namespace aftermath
