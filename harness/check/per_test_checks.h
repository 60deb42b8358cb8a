// Per-test judgement of a pytest suite run as the job: which test left this
// behind? A pure function of the timeline, over the boundaries the suite
// reported (fixtures/points/aftermath_pytest.py): "pytest.test_start" and
// "pytest.test_end" events of the process that ran the test (pytest itself or
// a pytest-xdist worker), each recorded after the supervisor sampled the
// process table and /dev/shm, so whatever a test started is on the timeline
// before its end.
//
// Attribution.
//   - A process started by a pytest process belongs to the test that was
//     running in that pytest process when it was first seen (its window:
//     after the start, up to and including the end); one started by another
//     job process belongs to its first parent's test (so a DataLoader worker
//     of a subprocess of a test is the test's, even once re-parented). With
//     pytest-xdist each worker has windows of its own, so its tests' processes
//     never mix with another worker's. Processes started outside every window
//     (collection, session-scoped fixtures between tests) belong to none.
//   - A /dev/shm entry named torch_<pid>_... belongs to the test of the job
//     process with that pid (its pid inside the job's namespace), or, when
//     that process is a pytest process, to the test running in it when the
//     entry appeared; an entry with no pid in its name belongs to the test
//     running when it appeared if exactly one was, else to none.
//
// Judgement, at the test's end T, with the scenario's graces by role:
//   - zombie: a process of the test was a zombie at T (or became one within
//     no_zombies' grace after T) and stayed unreaped for more than the grace;
//   - orphan: one orphaned by T (its parent gone) and alive at T outlived its
//     parent by more than no_orphans' grace (as the no_orphans check counts it);
//   - process: one was still running all_exited's grace after T, or alive at
//     T and still held by its pytest process when that process ended the
//     session (the "pytest.session_end" event: it and every ancestor up to
//     pytest still running), however soon after T that was: a process that
//     lives as long as the session is the test's, whatever ran next;
//   - shm: an entry of the test still there shm_clean's grace after T;
//   - device: a process of the test that NVML saw holding memory on a GPU
//     all_exited's grace after T (where the device observer has samples).
// Each process counts once (zombie, else orphan, else process), plus its
// device memory. A test that
// never ended (the run was cut during it) is listed, not judged.
#pragma once

#include <vector>

#include "harness/check/checks.h"

namespace aftermath {

inline constexpr const char* kTestsClean = "tests_clean";

// Whether the job reported any test boundary (else tests_clean does not apply).
bool saw_tests(const Timeline& tl);

// The suite's tests in the order they started, each with its processes and
// what it left behind.
std::vector<TestResult> judge_tests(const CheckInput& in);

// Fails naming every test that left something behind; measured: "tests",
// "leaking" ([{nodeid, worker, leaks: [{kind, pid|name, what}]}]) and
// "unfinished" (node ids of tests the run ended during).
CheckResult tests_clean(const CheckInput& in);

}  // namespace aftermath
