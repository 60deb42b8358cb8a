// report.html's "Hang diagnosis" section: what every live process of a hung
// job was doing when the harness declared the hang (hang_view.h), near the
// top of its scenario so a reader sees where the job is stuck before the
// timeline and the checks.
//
// One table row per process (role, pid, state spelled out, wchan, the
// collective it waits in, the innermost Python frames); each row is followed
// by a <details> that opens on the full Python, C and kernel stacks, so the
// section works without JavaScript and prints as a table.
#pragma once

#include <string>

#include "harness/core/result.h"

namespace aftermath {

// The section for a scenario, or "" when it has no diagnosis
// (report::hang_diagnosis). `id` is the scenario section's HTML id; the
// section's is "hang-<id>". Every process's rows are a
// <tbody class="hang-proc" data-pid="PID">; all text is HTML-escaped.
std::string hang_section_html(const ScenarioResult& scenario, const std::string& id);

}  // namespace aftermath
