#include "harness/check/scenario_load.h"

#include "harness/check/registry.h"

namespace aftermath {

ParseResult parse_scenario(std::string_view text, const ParseContext& ctx) {
  return parse_scenario(text, ctx, check_registry());
}

ParseResult load_scenario(const std::string& path, ParseContext ctx) {
  return load_scenario(path, std::move(ctx), check_registry());
}

Expected<void, Diagnostics> parse_checks_text(std::string_view yaml, const std::string& label,
                                              std::map<std::string, CheckConfig>* checks) {
  return parse_checks_text(yaml, label, check_registry(), checks);
}

}  // namespace aftermath
