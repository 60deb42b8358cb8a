// report.html: the report a person reads, rendered from the typed run.
//
// One self-contained file that works offline and from a CI artifact: inline
// CSS and JavaScript, no fonts, images or scripts fetched from anywhere. Per
// scenario it shows the verdict, the checks with their measured values, the
// recovery timings and a timeline (inline SVG drawn here in C++, so it reads
// without JavaScript; the script only adds zoom and a time readout). With
// --repeat, a "Repeated runs" table (the rate with its interval, flaky
// scenarios' outcomes) comes first and every run is named "name run K/N". It
// shows what result.json says and never re-derives a verdict or a check status.
#pragma once

#include <string>

#include "harness/core/result.h"

namespace aftermath {

// The whole HTML document for a run.
//
// `report_dir` is the folder report.html will be written to: log files inside
// it are linked by relative paths, so the folder can be moved or downloaded
// as an artifact and the links still work. Empty, or a log outside it: the
// link is the absolute file:// path.
//
// Every process lane is an element with class="lane" and data-pid="<pid>".
// The page's script reports its own errors into <span id="js-errors">, which
// reads "0" once the script ran cleanly ("not run" when it never ran), and
// sets data-js="ready" on <body> when it finished.
std::string render_html(const RunResult& run, const std::string& report_dir = "");

}  // namespace aftermath
