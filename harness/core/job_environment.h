// What the job says about its own environment: the "torch_config" events the
// points clients send (sharing strategy, start method, versions, ...).
#pragma once

#include <map>
#include <string>

#include "harness/core/timeline.h"

namespace aftermath {

// The job's "torch_config" events merged over processes: field -> value
// (strings as they are, numbers and booleans written out; objects, arrays and
// null left out); distinct
// values in report order, ", "-joined. Events whose text is not a JSON object
// are skipped. Nothing the job did not say.
std::map<std::string, std::string> job_environment_from(const Timeline& tl);

}  // namespace aftermath
