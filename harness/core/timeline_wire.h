// A Timeline on the wire: the lossless JSON one node's supervisor sends so
// that another process can rebuild its Timeline exactly and judge it there.
//
// This is not the report's JSON (reports/json.cc), which writes what a reader
// needs and rounds times to milliseconds. Here every field of every value is
// kept: times are integer nanoseconds, enums travel as the words their own
// to_string gives (and their parse takes back), outcomes as their kind with
// their code or signal. To keep the stream small a field equal to its
// default is left out, and decoding takes an absent field as its default; a
// field a decoder does not know is ignored, so a newer sender can add fields
// without breaking an older receiver. Keys are the C++ members' names.
//
// The one loss: strings are bytes (a job's output need not be UTF-8) and
// JSON text is UTF-8, so wire_line() writes each invalid byte as U+FFFD.
// Every other string comes back byte for byte.
//
// Decoding never throws: bad input gives an Error that names the field by
// its path ("observations[3].kind", "faults[0].action") and what is wrong
// with it (missing, the wrong JSON type, out of range, an unknown word).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "harness/core/device.h"
#include "harness/core/timeline.h"
#include "harness/os/expected.h"

namespace aftermath {

// One observation: always "t" and "kind" (its payload's word), "node" where
// it is not -1, then the payload's fields (by their keys in observation.h)
// that differ from their defaults. "state" is a one-character string where it is
// printable ASCII, else its byte value as an integer; "outcome" is
// {"kind":"exited","code":N} or {"kind":"killed","signal":N[,"core_dumped":true]}.
nlohmann::json wire_json(const Observation& o);
// Requires "t" and "kind"; every other field may be absent (its default).
Expected<Observation> observation_from_wire(const nlohmann::json& j);

// The run's facts, with its faults and hang diagnosis; {} for default facts.
nlohmann::json wire_json(const RunFacts& f);
Expected<RunFacts> run_facts_from_wire(const nlohmann::json& j);

// The device side: GPUs, every sample with its processes, the holder scan and
// the probe after teardown. An engaged optional travels even when it holds an
// empty value (holders_after: [] is a scan that found nobody, unlike no scan).
nlohmann::json wire_json(const DeviceTimeline& d);
Expected<DeviceTimeline> device_timeline_from_wire(const nlohmann::json& j);

// A whole timeline: {"observations":[...], "facts":{...}, "device":{...}},
// each member left out when empty or default.
nlohmann::json wire_json(const Timeline& tl);
Expected<Timeline> timeline_from_wire(const nlohmann::json& j);

// The one way to put wire JSON on a stream: compact, on one line (newlines in
// strings are escaped), ending in '\n', with invalid UTF-8 written as U+FFFD
// instead of throwing as nlohmann::json::dump() does by default. Senders must
// use it for every line. Never throws but std::bad_alloc.
std::string wire_line(const nlohmann::json& j);
// One received line (a trailing '\n' or "\r\n" allowed) as JSON; an Error
// quoting where the parse stopped, never an exception.
Expected<nlohmann::json> parse_wire_line(std::string_view line);

}  // namespace aftermath
