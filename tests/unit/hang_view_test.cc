// Tests for the reports' view of a hang diagnosis (reports/hang_view.h):
// taken from the run's facts, ordered like the lanes, states spelled
// out, frames as one line, and the user's own frame told from Python's and
// the packages'.
#include "reports/hang_view.h"

#include <gtest/gtest.h>

namespace aftermath::report {
namespace {

constexpr Nanos kMs = 1'000'000;

ProcessDiagnosis diagnosed(int pid, Role role, int rank, int worker, char state) {
  ProcessDiagnosis d;
  d.pid = pid;
  d.role = role;
  d.rank = rank;
  d.worker = worker;
  d.state = state;
  return d;
}

TEST(HangView, NoDiagnosisWithoutProcessesOrNote) {
  // What every run that did not hang has.
  RunFacts facts;
  EXPECT_FALSE(hang_diagnosis(facts));
  facts.diagnosis_took = 3 * kMs;
  EXPECT_FALSE(hang_diagnosis(facts));
  // A hang with nothing left alive to look at still says why.
  facts.diagnosis_note = "gdb not installed";
  auto only_note = hang_diagnosis(facts);
  ASSERT_TRUE(only_note);
  EXPECT_EQ(only_note->note, "gdb not installed");
  EXPECT_TRUE(only_note->processes.empty());
}

TEST(HangView, ReadsEveryFieldAndOrdersLikeTheLanes) {
  RunFacts facts;
  facts.diagnosis_note = "n";
  facts.diagnosis_took = 830'500'000;
  ProcessDiagnosis r1 = diagnosed(20, Role::Rank, 1, -1, 'T');
  r1.wchan = "do_signal_stop";
  r1.waiting_in = "allreduce #7";
  r1.kernel_stack = "k";
  r1.user_stacks = "u";
  r1.python_stacks = "p";
  r1.python_frames = {{"/w/train.py", 42, "step", "dist.all_reduce(t)"}};
  r1.took = 12 * kMs;
  facts.diagnosis = {diagnosed(30, Role::Worker, 0, 1, 'S'), r1,
                     diagnosed(21, Role::Rank, 0, -1, '?'),
                     diagnosed(10, Role::Launcher, -1, -1, 'S')};
  auto d = hang_diagnosis(facts);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->note, "n");
  EXPECT_EQ(d->took_ms, 830.5);
  ASSERT_EQ(d->processes.size(), 4u);
  std::vector<long long> pids;
  for (const auto& p : d->processes) pids.push_back(p.pid);
  EXPECT_EQ(pids, (std::vector<long long>{10, 21, 20, 30}));  // launcher, rank 0, rank 1, worker
  const DiagnosedProcess& shown = d->processes[2];
  EXPECT_EQ(shown.role, "rank");
  EXPECT_EQ(shown.state, 'T');
  EXPECT_EQ(shown.rank, 1);
  EXPECT_FALSE(shown.worker);
  EXPECT_EQ(shown.wchan, "do_signal_stop");
  EXPECT_EQ(shown.waiting_in, "allreduce #7");
  EXPECT_EQ(shown.kernel_stack + shown.user_stacks + shown.python_stacks, "kup");
  ASSERT_EQ(shown.frames.size(), 1u);
  EXPECT_EQ(shown.frames[0].line, 42);
  EXPECT_EQ(shown.frames[0].code, "dist.all_reduce(t)");
  EXPECT_EQ(shown.took_ms, 12);
  EXPECT_EQ(d->processes[3].worker, 1);
  EXPECT_FALSE(d->processes[0].rank);     // -1: not announced
  EXPECT_FALSE(d->processes[3].took_ms);  // 0: not measured
  facts.diagnosis_took = 0;
  EXPECT_FALSE(hang_diagnosis(facts)->took_ms);
}

TEST(HangView, StatesAreSpelledOut) {
  EXPECT_EQ(state_text('S'), "S sleeping");
  EXPECT_EQ(state_text('T'), "T stopped");
  EXPECT_EQ(state_text('t'), "t stopped (traced)");
  EXPECT_EQ(state_text('D'), "D uninterruptible (disk/driver)");
  EXPECT_EQ(state_text('R'), "R running");
  EXPECT_EQ(state_text('Z'), "Z zombie");
  EXPECT_EQ(state_text('?'), "? unknown state");
}

TEST(HangView, ProcessNames) {
  DiagnosedProcess p;
  p.role = "launcher";
  EXPECT_EQ(process_name(p), "launcher");
  p.role = "rank";
  p.rank = 1;
  EXPECT_EQ(process_name(p), "rank 1");
  p.role = "worker";
  p.rank = 0;
  p.worker = 3;
  EXPECT_EQ(process_name(p), "worker 3 of rank 0");
  p.role = "helper";
  p.worker.reset();
  EXPECT_EQ(process_name(p), "helper (rank 0)");
}

TEST(HangView, LibraryFilesAreNotTheUsersCode) {
  EXPECT_TRUE(library_file("/usr/lib/python3.11/threading.py"));
  EXPECT_TRUE(library_file("/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"));
  EXPECT_TRUE(library_file("/home/u/venv/lib/python3.10/site-packages/torch/nn/modules/module.py"));
  EXPECT_TRUE(library_file("/opt/conda/lib/python3.10/multiprocessing/queues.py"));
  EXPECT_TRUE(library_file("<frozen importlib._bootstrap>"));
  EXPECT_FALSE(library_file("/home/u/project/train.py"));
  EXPECT_FALSE(library_file("train.py"));
  EXPECT_FALSE(library_file("/home/u/lib/python3stuff/train.py"));  // not a python3* version folder
}

TEST(HangView, InnermostUserFrameAndShortFiles) {
  DiagnosedProcess p;
  p.frames = {{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 1234,
               "all_reduce", "work = group.allreduce([tensor], opts)"},
              {"/usr/lib/python3.11/contextlib.py", 81, "inner", ""},
              {"/home/u/project/train.py", 42, "step", "dist.all_reduce(t)"},
              {"/home/u/project/train.py", 60, "<module>", "step()"}};
  const PyFrame* user = innermost_user_frame(p);
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(user->line, 42);
  EXPECT_EQ(short_file(p.frames[0].file), "torch/distributed/distributed_c10d.py");
  EXPECT_EQ(short_file(p.frames[1].file), "contextlib.py");
  EXPECT_EQ(short_file(p.frames[2].file), "train.py");
  EXPECT_EQ(short_file("train.py"), "train.py");
  EXPECT_EQ(frame_where(p.frames[0]), "torch/distributed/distributed_c10d.py:1234 in all_reduce");
  EXPECT_EQ(frame_text(p.frames[2]), "train.py:42 in step \u2014 dist.all_reduce(t)");
  EXPECT_EQ(frame_text(p.frames[1]), "contextlib.py:81 in inner");
  p.frames.resize(2);
  EXPECT_EQ(innermost_user_frame(p), nullptr);
}

}  // namespace
}  // namespace aftermath::report
