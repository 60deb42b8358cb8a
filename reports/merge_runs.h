// Several runs' result.json documents made into one: the shards of
// `aftermath run --shard I/N` (a CI matrix, a Slurm job array) become the run
// they are slices of, and every report renders from the merged document.
//
// What a merge must get right:
//
// - Order. A shard records where each of its scenarios stood in the whole
//   run ("shard": {index, count, total, positions, names}). When every input
//   is a shard of one run (the same count and total) the scenarios go back to
//   those positions, each scenario's repeated runs in their order; otherwise
//   they stay in input order.
// - Completeness. Shards of one run that do not cover every position once (a
//   shard missing, a shard interrupted, a position in two shards) make a
//   partial result: still merged, and the document says what is missing.
// - Identity. The same scenario run (name and run index) in two inputs is
//   not a merge but a mistake (a folder given twice, two runs mixed): refused.
// - Paths. A shard's paths (out_dir, stdout_path, stderr_path, processes'
//   logs, nodes' out_dir) point into the folder that run wrote, perhaps on
//   another machine; the merged document points them at where that folder
//   is now, relative to the merged report's folder (logs are not copied).
// - Totals. summary and aggregates are computed again over the merged
//   scenarios; what cannot be added up (command line, tool version, machine
//   facts) is kept per input under "merge" or joined.
//
// Pure: no file is read or written here; paths are handled lexically.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/os/expected.h"

namespace aftermath {

// One run to merge.
struct MergeInput {
  std::string path;    // its result.json as the user named it (DIR/result.json for a folder)
  std::string file;    // the absolute path of its result.json now
  nlohmann::json doc;  // the parsed document; its "scenarios" is a list
};

struct MergedRun {
  nlohmann::json result;  // the merged result.json document
  // Why the inputs, shards of one run, do not make it whole: one sentence
  // per problem (a shard missing, positions missing, a position covered
  // twice). Empty when they do, or when the inputs are not shards of one run.
  std::vector<std::string> incomplete;
  // What the merge could not check, e.g. inputs that are not shards of one
  // run (then input order is kept and completeness is not judged).
  std::vector<std::string> notes;
};

// Merges `inputs` (in the order given) into one document for the report
// folder `out_dir` (absolute): scenarios in the original order where the
// shards record it; every path rebased as above; "summary" counted again and
// "aggregates" computed again (when any scenario is one of several runs);
// "tool_version" the inputs' distinct versions, ", "-joined; "environment"
// each key's distinct values, ", "-joined; "command_line" is `command_line`
// (the merge's own); and "merge": {inputs: [{path (from out_dir), scenarios,
// shard ("I/N" or null), command_line, tool_version}], and for shards of one
// run: shards {count, total}, complete, missing_shards, missing_positions,
// repeated_positions (0-based), incomplete (the sentences)}.
// Error: the same scenario run in two inputs (or twice in one), naming the
// scenario and both files. Never throws on odd documents.
Expected<MergedRun> merge_runs(const std::vector<MergeInput>& inputs, const std::string& out_dir,
                               const std::string& command_line);

}  // namespace aftermath
