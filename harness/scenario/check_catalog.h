// What the scenario parser needs to know about checks, and no more: their
// names, which run by default, and a way to read each one's parameters. The
// check layer supplies it (harness/check/registry.h); the scenario layer
// names no check itself, so a new check touches only the check layer.
#pragma once

#include <string>
#include <vector>

#include "harness/scenario/scenario.h"
#include "harness/scenario/yaml_fields.h"

namespace aftermath {

class CheckCatalog {
 public:
  virtual ~CheckCatalog() = default;
  // Every known check, in report order.
  virtual const std::vector<std::string>& names() const = 0;
  // The ones enabled when a scenario does not name them.
  virtual const std::vector<std::string>& defaults() const = 0;
  // The ones also enabled in a multi-node scenario (nodes: 2 or more).
  virtual const std::vector<std::string>& multinode_defaults() const = 0;
  // The keys `check`'s parameter map accepts, `grace` first (every check takes
  // a grace, read by the scenario parser), in the order an error lists them.
  // Precondition: `check` is one of names().
  virtual const Keys& keys(const std::string& check) const = 0;
  // Reads `check`'s own parameters (everything but grace) from the entries of
  // its map `at` into cfg->params, reporting each bad one through `r`.
  virtual void parse_params(FieldReader& r, const Entry& at, const std::vector<Entry>& es,
                            CheckConfig* cfg) const = 0;
};

}  // namespace aftermath
