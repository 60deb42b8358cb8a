// Several runs (each read from its result.json) made into one: the shards of
// `aftermath run --shard I/N` (a CI matrix, a Slurm job array) become the run
// they are slices of, and every report renders from the merged run.
//
// What a merge must get right:
//
// - Order. A shard records where each of its scenarios stood in the whole
//   run (its ShardInfo: index, count, total, positions, names). When every input
//   is a shard of one run (the same count and total) the scenarios go back to
//   those positions, each scenario's repeated runs in their order; otherwise
//   they stay in input order.
// - Completeness. Shards of one run that do not cover every position once (a
//   shard missing, a shard interrupted, a position in two shards) make a
//   partial result: still merged, and the run says what is missing.
// - Identity. The same scenario run (name and run index) in two inputs is
//   not a merge but a mistake (a folder given twice, two runs mixed): refused.
// - Paths. A shard's paths (out_dir, stdout_path, stderr_path, processes'
//   logs, nodes' out_dir) point into the folder that run wrote, perhaps on
//   another machine; the merged run points them at where that folder is now,
//   relative to the merged report's folder (logs are not copied).
// - Totals. The aggregates are computed again over the merged scenarios (and
//   result.json's summary is counted from them); what cannot be added up
//   (command line, tool version, machine facts) is kept per input in the
//   merge record or joined.
//
// Pure: no file is read or written here; paths are handled lexically.
#pragma once

#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/os/expected.h"

namespace aftermath {

// One run to merge.
struct MergeInput {
  std::string path;  // its result.json as the user named it (DIR/result.json for a folder)
  std::string file;  // the absolute path of its result.json now
  RunResult run;     // what it holds (reports/result_read.h)
};

struct MergedRun {
  RunResult run;  // the merged run
  // Why the inputs, shards of one run, do not make it whole: one sentence
  // per problem (a shard missing, positions missing, a position covered
  // twice). Empty when they do, or when the inputs are not shards of one run.
  std::vector<std::string> incomplete;
  // What the merge could not check, e.g. inputs that are not shards of one
  // run (then input order is kept and completeness is not judged).
  std::vector<std::string> notes;
};

// Merges `inputs` (in the order given) into one run for the report folder
// `out_dir` (absolute): scenarios in the original order where the shards
// record it; every path rebased as above; aggregates computed again (when
// any scenario is one of several runs); tool_version the inputs' distinct
// versions, ", "-joined; environment each key's distinct values, ", "-joined;
// command_line is `command_line` (the merge's own); no shard; and the merge
// record: each input (its path from out_dir, scenario count, shard "I/N",
// command line, tool version) and, for shards of one run, their coverage
// (count, total, complete, missing shards, missing and repeated positions,
// 0-based, and the sentences).
// Error: the same scenario run in two inputs (or twice in one), naming the
// scenario and both files.
Expected<MergedRun> merge_runs(const std::vector<MergeInput>& inputs, const std::string& out_dir,
                               const std::string& command_line);

}  // namespace aftermath
