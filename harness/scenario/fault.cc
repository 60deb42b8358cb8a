#include "harness/scenario/fault.h"

#include <cctype>
#include <charconv>
#include <regex>

namespace aftermath {

namespace {
bool to_int(const std::string& s, int* out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && *out >= 0;
}
}  // namespace

Expected<TargetSpec> parse_target(const std::string& text) {
  TargetSpec t;
  t.text = text;
  auto colon = text.find(':');
  std::string kind = text.substr(0, colon);
  std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  auto fail = [](std::string why) -> Expected<TargetSpec> { return Error{std::move(why)}; };
  if (kind == "launcher" || kind == "all" || kind == "self") {
    if (colon != std::string::npos) return fail("'" + kind + "' takes no argument");
    t.kind = kind == "launcher" ? TargetSpec::Kind::Launcher
             : kind == "all"    ? TargetSpec::Kind::All
                                : TargetSpec::Kind::Self;
    return t;
  }
  if (kind == "node" || kind == "agent") {
    if (!to_int(arg, &t.node))
      return fail("'" + kind + ":N' needs a node number, got '" + arg + "'");
    t.kind = kind == "node" ? TargetSpec::Kind::Node : TargetSpec::Kind::Agent;
    return t;
  }
  if (kind == "rank" || kind == "workers") {
    if (!to_int(arg, &t.rank))
      return fail("'" + kind + ":R' needs a rank number, got '" + arg + "'");
    t.kind = kind == "rank" ? TargetSpec::Kind::Rank : TargetSpec::Kind::Workers;
    return t;
  }
  if (kind == "worker") {
    auto slash = arg.find('/');
    if (slash == std::string::npos || !to_int(arg.substr(0, slash), &t.rank) ||
        !to_int(arg.substr(slash + 1), &t.worker))
      return fail("'worker:R/W' needs a rank and a worker index, got '" + arg + "'");
    t.kind = TargetSpec::Kind::Worker;
    return t;
  }
  if (kind == "match") {
    if (arg.empty()) return fail("'match:<regex>' needs a regex");
    try {
      std::regex re(arg, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return fail("invalid regex '" + arg + "': " + e.what());
    }
    t.kind = TargetSpec::Kind::Match;
    t.regex = arg;
    return t;
  }
  return fail(
      "unknown target '" + text +
      "' (launcher, rank:R, worker:R/W, workers:R, match:<regex>, all, self, node:N, agent:N)");
}

const std::vector<std::string>& known_fault_actions() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v;
    for (FaultAction a : all_fault_actions()) v.emplace_back(to_string(a));
    return v;
  }();
  return k;
}

std::string armed_points(const std::vector<FaultSpec>& faults) {
  std::vector<TriggerSpec> triggers;
  for (const auto& f : faults) triggers.push_back(f.at);
  return armed_points(triggers);
}

std::string armed_points(const std::vector<TriggerSpec>& triggers) {
  std::string out;
  for (const auto& t : triggers) {
    if (t.kind != TriggerSpec::Kind::Point) continue;
    if (!out.empty()) out += ";";
    out += t.point;
    if (!t.labels.empty()) {
      out += "{";
      bool first = true;
      for (const auto& [k, v] : t.labels) {
        out += (first ? "" : ",") + k + "=" + v;
        first = false;
      }
      out += "}";
    }
    if (t.hit) out += "#" + std::to_string(*t.hit);
  }
  return out;
}

}  // namespace aftermath
