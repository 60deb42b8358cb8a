// The runs of this process side by side (`run --jobs N`) and the processes
// each one's job has had, so that one run can tell a process of a run beside
// it from one it simply has not seen: whose temp-dir residue is whose. Each
// run publishes its job's processes as it finds them; entries stay for the
// life of this process (a run that ended is still the maker of what it made).
// Thread-safe.
#pragma once

namespace aftermath {

// A run's number, unique in this process.
int new_run_id();
// `pid` is (or was) a process of run `run`'s job.
void note_run_pid(int run, int pid);
// The run, other than `run`, whose job had `pid`; 0 when none did.
int other_run_with(int run, int pid);

}  // namespace aftermath
