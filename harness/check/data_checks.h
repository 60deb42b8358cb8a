// Checks over what a training job says about its data and its collectives,
// from fixture events (the C++ trainer and the Python fixtures send them
// through the points client). Pure functions of the timeline, like every
// check; each is skipped, with the reason, when the job reported nothing.
//
// Events read:
//   dataset           {size, world, rank, drop_last}            per rank, once
//   rank.samples      {rank, epoch, indices: "3,17,42", last}   chunks of consumed indices;
//                                                               last=1: the epoch is complete
//   collective        {op, seq, state: begin|end, rank}         around every collective
//   rank.collectives  {rank, count}                             at a clean end
// A rank is known by the pid that announced it (role rank), else by the
// event's "rank" field.
#pragma once

#include "harness/check/checks.h"

namespace aftermath {

// data_partition: in every epoch, the indices the ranks consumed are
// disjoint and complete, up to what DistributedSampler itself does: without
// drop_last it pads the dataset to ceil(N/R)*R by repeating indices (that
// many may be consumed twice); with drop_last it drops the tail (that many
// may be missing). Completeness is judged only for epochs every rank
// finished (reported last=1): a rank killed mid-epoch is not a partition bug.
// Fails on an index consumed more often than padding allows, an index out
// of range, or (when judged) a missing index. Measured per epoch: consumed
// per rank, distinct, duplicates, missing, the allowances, examples.
CheckResult data_partition(const CheckInput& in);

// collectives_matched: every rank ran the same number of collectives, and
// the same operation at each sequence number. Counts come from
// "rank.collectives" where a rank reported one, else from its "collective"
// begin events. Ranks that stopped early (ended before the teardown without
// reporting a count: killed, or failed) are left out, with the reason: a
// dead rank is not a mismatch. Skipped when no
// collective was reported or fewer than two ranks remain. On failure the
// reason names the first divergence and the collective each rank is still
// inside ("rank 0 waits in barrier #232").
CheckResult collectives_matched(const CheckInput& in);

}  // namespace aftermath
