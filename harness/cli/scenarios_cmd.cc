#include "harness/cli/scenarios_cmd.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "harness/check/scenario_load.h"
#include "harness/cli/inputs.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

namespace {

std::string join_or_dash(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s.empty() ? std::string("-") : s;
}

}  // namespace

int cmd_list(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  if (ec) {
    std::fprintf(stderr, "aftermath list: %s: %s\n", dir.c_str(), ec.message().c_str());
    return 2;
  }
  std::sort(files.begin(), files.end());
  int bad = 0;
  std::printf("%-36s %-24s %-14s %s\n", "scenario", "tags", "requires", "description");
  for (const auto& f : files) {
    ParseContext ctx;
    ctx.vars = scenario_vars(run_python("").value_or("python3"));
    ctx.check_command = false;
    auto r = load_scenario(f, ctx);
    if (!r) {
      for (const auto& d : r.error()) std::fprintf(stderr, "%s\n", d.to_string().c_str());
      ++bad;
      continue;
    }
    std::string desc = r->description;
    auto nl = desc.find('\n');
    if (nl != std::string::npos) desc = desc.substr(0, nl);
    std::printf("%-36s %-24s %-14s %s\n", r->name.c_str(), join_or_dash(r->tags).c_str(),
                join_or_dash(r->requires_).c_str(), desc.c_str());
  }
  return bad ? 2 : 0;
}

int cmd_validate(const std::vector<std::string>& inputs) {
  std::vector<std::string> errors;
  int n = 0;
  for (const auto& f : expand_inputs(inputs, errors)) {
    ParseContext ctx;
    ctx.vars = scenario_vars(run_python("").value_or("python3"));
    auto r = load_scenario(f, ctx);
    if (!r)
      for (const auto& d : r.error()) errors.push_back(d.to_string());
    else
      ++n;
  }
  for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
  if (!errors.empty()) {
    std::fprintf(stderr, "aftermath validate: %zu problem(s)\n", errors.size());
    return 2;
  }
  std::printf("aftermath validate: %d scenario(s), all valid\n", n);
  return 0;
}

}  // namespace aftermath
