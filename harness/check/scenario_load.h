// Loading a scenario with its checks read through the check registry: the
// forms of harness/scenario/scenario.h's parsers that callers use.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/scenario.h"

namespace aftermath {

// parse_scenario / load_scenario with check_registry() (registry.h).
ParseResult parse_scenario(std::string_view text, const ParseContext& ctx);
ParseResult load_scenario(const std::string& path, ParseContext ctx);

// `--check` text through check_registry(); see scenario.h.
Expected<void, Diagnostics> parse_checks_text(std::string_view yaml, const std::string& label,
                                              std::map<std::string, CheckConfig>* checks);

}  // namespace aftermath
