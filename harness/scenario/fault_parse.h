// The scenario's `faults:` list (and `--fault` maps) into FaultSpecs
// (fault.h): each fault's action, target, trigger and the options its action
// takes, with the combinations that cannot work reported where they stand.
#pragma once

#include <optional>
#include <vector>

#include "harness/scenario/fault.h"
#include "harness/scenario/yaml_fields.h"

namespace aftermath {

// `faults:`: a list of fault maps, appended to *out in order. Problems go to
// `r`. `nodes`: the scenario's node count (node:N targets must be below it).
void parse_faults(FieldReader& r, const Entry& fe, int nodes, std::vector<FaultSpec>* out);

// One fault map; nullopt when anything in it was reported. `nodes` 0: the
// node count is not known (node:N is not range-checked).
std::optional<FaultSpec> parse_fault(FieldReader& r, const Entry& fe, int nodes = 0);

}  // namespace aftermath
