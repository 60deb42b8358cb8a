// tmp_clean: did the job leave PyTorch or multiprocessing residue in its temp
// directory ($TMPDIR or /tmp)? A pure function of the timeline, over what the
// supervisor recorded after teardown (observe/tmp_residue.h):
//
//   tmp_left     an entry new since launch and still there, with its kind,
//                owner and size, and a process outside the job that holds
//                (or held) it, if any
//   tmp_reclaim  the harness removed it afterwards
//
// Fails on known residue (pymp-*, torch-shm-dir-*) the job left and nobody
// outside it holds. torchrun's log folders (torchelastic_*) are listed apart
// (torchrun_logs) and never fail: torchrun makes one on every run and never
// removes it, by design; the harness moves them into the run's logs/. Other new entries are listed
// in the measured values but never fail: a job's outputs may live there. Entries held by a process
// outside the job (a run beside it shares the temp dir) are listed apart, never blamed. Skipped
// when the temp dir could not be read (a HarnessFailure of HarnessPart::TmpDir).
#pragma once

#include "harness/check/checks.h"

namespace aftermath {

CheckResult tmp_clean(const CheckInput& in);

}  // namespace aftermath
