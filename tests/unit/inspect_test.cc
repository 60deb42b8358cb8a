// Unit tests for what `aftermath inspect` and `aftermath reap` print
// (reports/inspect): the table and JSON of hand-made inspection reports, and
// reap's plan as text (before and after it ran) and as JSON.
#include "reports/inspect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

InspectReport bare_report() {
  InspectReport r;
  r.proc_root = "/proc";
  r.shm_dir = "/dev/shm";
  r.device_pattern = "/dev/nvidia*";
  return r;
}

HygieneGpu gpu(int index, std::string name) {
  HygieneGpu g;
  g.info.index = index;
  g.info.uuid = "GPU-" + std::to_string(index);
  g.info.pci_bus_id = "00000000:18:00.0";
  g.info.name = std::move(name);
  g.info.total = 80LL << 30;
  g.used = 512LL << 20;
  g.free = g.info.total - g.used;
  return g;
}

// A report with something of every kind: a leftover tree, a /dev/shm leak,
// temp-dir residue, a fault cgroup, notes and problems.
InspectReport dirty_report() {
  InspectReport r = bare_report();
  r.tmp_dir = "/tmp";
  r.cgroup_dir = "/sys/fs/cgroup/aftermath";
  r.driver_version = "580.1";
  HygieneGpu g = gpu(0, "NVIDIA H100 80GB HBM3");
  GpuProbe ok;
  ok.ordinal = 0;
  ok.status = ProbeStatus::Ok;
  ok.free = 79LL << 30;
  ok.elapsed = 120 * kMilli;
  g.probe = ok;
  GpuProcess gp;
  gp.nvml_pid = 4242;
  gp.pid = 4242;
  gp.used_bytes = 512LL << 20;
  gp.orphan = true;
  g.processes = {gp};
  r.gpus.push_back(g);
  HygieneGpu bad = gpu(1, "A very long GPU model name that goes on");
  GpuProbe failed;
  failed.status = ProbeStatus::Failed;
  failed.error = "cudaErrorMemoryAllocation: out of memory";
  bad.probe = failed;
  r.gpus.push_back(bad);
  GpuProbe lost;
  lost.ordinal = 3;
  lost.status = ProbeStatus::TimedOut;
  lost.error = "no answer within 20s";
  r.unmapped_probes.push_back(lost);

  HygieneProcess root;
  root.proc.pid = 4242;
  root.proc.ppid = 1;
  root.proc.state = 'S';
  root.proc.uid = 1000;
  root.proc.comm = "python3";
  root.devices = {"/dev/nvidia0"};
  root.shm = {"/dev/shm/torch_4242_1"};
  root.gpus = {0};
  root.gpu_bytes = 512LL << 20;
  root.orphan = true;
  root.leftover = true;
  root.leftover_root = 4242;
  root.why = "orphan holding a GPU";
  HygieneProcess child;
  child.proc.pid = 4243;
  child.proc.ppid = 4242;
  child.proc.state = 'Z';
  child.proc.uid = 1000;
  child.proc.comm = "pt_data_worker";
  child.leftover_root = 4242;
  child.depth = 1;
  child.why = "zombie of a leftover";
  r.processes = {root, child};

  HygieneShm leak;
  leak.name = "torch_4242_1";
  leak.bytes = 4096;
  leak.age = 90 * kSecond;
  leak.creator_pid = 4242;
  leak.creator = CreatorState::Gone;
  leak.mapped_by = {5, 3};
  leak.held_by = {3};
  leak.leftover = true;
  leak.why = "creator gone, unused";
  HygieneShm sem;
  sem.name = "sem.mp-1";
  sem.bytes = 32;
  sem.why = "too young to judge";
  r.shm = {leak, sem};

  HygieneTmp pymp;
  pymp.name = "pymp-abc";
  pymp.kind = TmpKind::Pymp;
  pymp.bytes = 2048;
  pymp.bytes_partial = true;
  pymp.bound = {"/tmp/pymp-abc/listener-1"};
  pymp.leftover = false;
  pymp.why = "its maker still listens";
  r.tmp = {pymp};

  HygieneCgroup cg;
  cg.dir = "/sys/fs/cgroup/aftermath/aftermath-4243-3-f1-p7";
  cg.owner = 4243;
  cg.members = {77};
  cg.leftover = true;
  cg.why = "leftover: aftermath pid 4243 is gone";
  r.cgroups = {cg};

  r.notes = {"2 processes could not be inspected"};
  r.problems = {"leftover process 4242 (python3)", "leftover /dev/shm/torch_4242_1"};
  return r;
}

// ---- the table

TEST(InspectTable, ACleanMachineSaysSoUnderEmptySections) {
  std::string t = inspect_table(bare_report());
  EXPECT_THAT(t, HasSubstr("GPUs\n  none\n"));
  EXPECT_THAT(
      t, HasSubstr("Processes holding GPUs or /dev/shm (device files: /dev/nvidia*)\n  none\n"));
  EXPECT_THAT(t, HasSubstr("/dev/shm (torch_*, sem.*)\n  none\n"));
  EXPECT_THAT(t, Not(HasSubstr("pymp-*")));         // no temp dir looked at: no section
  EXPECT_THAT(t, Not(HasSubstr("Fault cgroups")));  // none found: no section
  EXPECT_THAT(t, Not(HasSubstr("Notes")));
  EXPECT_THAT(t, EndsWith("\nCLEAN: nothing left behind\n"));
}

TEST(InspectTable, GpusNotInspectedSayWhy) {
  InspectReport r = bare_report();
  r.gpu_unavailable = "no NVIDIA driver";
  r.probe_unavailable = "no CUDA runtime";
  std::string t = inspect_table(r);
  EXPECT_THAT(t, HasSubstr("GPUs\n  not inspected: no NVIDIA driver\n  probe: no CUDA runtime\n"));
  // The same reasons in the notes (as the judge writes them) are not said twice.
  r.notes = {"GPU memory not inspected: no NVIDIA driver", "no allocation probe: no CUDA runtime",
             "temp dir not inspected: permission denied"};
  t = inspect_table(r);
  EXPECT_THAT(t, HasSubstr("\nNotes\n  - temp dir not inspected: permission denied\n\n"));
  EXPECT_THAT(t, Not(HasSubstr("GPU memory not inspected")));
  EXPECT_THAT(t, Not(HasSubstr("no allocation probe")));
}

TEST(InspectTable, GpuRowsWithTheirProbes) {
  std::string t = inspect_table(dirty_report());
  EXPECT_THAT(t, HasSubstr("GPUs (driver 580.1)\n"));
  EXPECT_THAT(t, HasSubstr("NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(t, HasSubstr("ok (79 GiB free, 120ms)"));
  EXPECT_THAT(t, HasSubstr(" A very long GPU model... "));  // cut to 24 columns
  EXPECT_THAT(t, HasSubstr("failed: cudaErrorMemoryAllocation: out of memory"));
  EXPECT_THAT(t, HasSubstr("  probe, CUDA device 3: timed_out: no answer within 20s\n"));
}

TEST(InspectTable, ProcessesIndentedUnderTheirLeftoverRoot) {
  std::string t = inspect_table(dirty_report());
  // What it holds, cut to its 44 columns.
  EXPECT_THAT(t, HasSubstr(" /dev/nvidia0, /dev/shm/torch_4242_1, 512 ... LEFTOVER"));
  EXPECT_THAT(t, HasSubstr("LEFTOVER orphan holding a GPU\n"));
  EXPECT_THAT(t, HasSubstr("  4242     1 "));
  EXPECT_THAT(t, HasSubstr("    4243   4242 "));                 // depth 1: two more spaces
  EXPECT_THAT(t, HasSubstr("LEFTOVER zombie of a leftover\n"));  // a zombie is marked too
}

TEST(InspectTable, ShmEntriesWithCreatorAndEveryUserOnce) {
  std::string t = inspect_table(dirty_report());
  EXPECT_THAT(t, HasSubstr("4242 (gone)"));
  EXPECT_THAT(t, HasSubstr(" 3, 5 "));  // mapped_by and held_by, sorted, once each
  EXPECT_THAT(t, HasSubstr("1m30s"));
  EXPECT_THAT(t, HasSubstr("LEFTOVER creator gone, unused\n"));
  EXPECT_THAT(t, HasSubstr("too young to judge\n"));
  EXPECT_THAT(t, Not(HasSubstr("LEFTOVER too young")));
}

TEST(InspectTable, TempDirCgroupsNotesAndProblems) {
  std::string t = inspect_table(dirty_report());
  EXPECT_THAT(
      t, HasSubstr("\n/tmp (pymp-*, torch-shm-dir-*, torchelastic_*, aftermath-torchrun-*)\n"));
  EXPECT_THAT(t, HasSubstr("2.0 KiB+"));  // a size that could not all be read
  EXPECT_THAT(t, HasSubstr(" socket "));  // held by a bound socket, no pid known
  EXPECT_THAT(t, HasSubstr("its maker still listens\n"));
  EXPECT_THAT(
      t, HasSubstr("\nFault cgroups in /sys/fs/cgroup/aftermath\n"
                   "  aftermath-4243-3-f1-p7  LEFTOVER leftover: aftermath pid 4243 is gone\n"));
  EXPECT_THAT(t, HasSubstr("\nNotes\n  - 2 processes could not be inspected\n"));
  EXPECT_THAT(t, EndsWith("\nNOT CLEAN: 2 problem(s)\n  - leftover process 4242 (python3)\n"
                          "  - leftover /dev/shm/torch_4242_1\n"));
}

// ---- the JSON

TEST(InspectJson, ACleanReportHasEveryMemberEmpty) {
  InspectReport r = bare_report();
  r.tmp_dir = "/scratch";
  json j = inspect_json(r);
  EXPECT_EQ(j["clean"], true);
  for (const char* k : {"problems", "notes", "gpus", "unmapped_probes", "processes", "shm", "tmp",
                        "cgroups", "uninspected"}) {
    ASSERT_TRUE(j.contains(k)) << k;
    EXPECT_TRUE(j[k].is_array() && j[k].empty()) << k;
  }
  EXPECT_EQ(j["roots"], (json{{"proc", "/proc"},
                              {"shm", "/dev/shm"},
                              {"tmp", "/scratch"},
                              {"device_pattern", "/dev/nvidia*"},
                              {"cgroup", ""}}));
  EXPECT_EQ(j["unreadable_processes"], 0);
}

TEST(InspectJson, EveryKindOfEntryWithItsFields) {
  InspectReport r = dirty_report();
  Uninspected u;
  u.pid = 900;
  u.comm = "sshd";
  u.why = "permission denied";
  u.matters = true;
  u.matters_why = "an orphan";
  r.uninspected = {u};
  r.unreadable_processes = 1;
  json j = inspect_json(r);
  EXPECT_EQ(j["clean"], false);
  EXPECT_EQ(j["problems"].size(), 2u);
  EXPECT_EQ(j["driver_version"], "580.1");

  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["total_bytes"], 80LL << 30);
  EXPECT_EQ(j["gpus"][0]["probe"]["status"], "ok");
  EXPECT_EQ(j["gpus"][0]["processes"][0]["orphan"], true);
  EXPECT_EQ(j["unmapped_probes"][0]["status"], "timed_out");

  ASSERT_EQ(j["processes"].size(), 2u);
  EXPECT_EQ(j["processes"][0]["state"], "S");  // a letter, not a number
  EXPECT_EQ(j["processes"][0]["gpu_bytes"], 512LL << 20);
  EXPECT_EQ(j["processes"][0]["leftover"], true);
  EXPECT_EQ(j["processes"][1]["zombie"], true);
  EXPECT_EQ(j["processes"][1]["leftover_root"], 4242);

  EXPECT_EQ(j["shm"][0]["creator_pid"], 4242);
  EXPECT_EQ(j["shm"][0]["creator"], "gone");
  EXPECT_EQ(j["shm"][0]["age_ms"], 90000.0);
  EXPECT_EQ(j["shm"][0]["mapped_by"], json::array({5, 3}));
  EXPECT_TRUE(j["shm"][1]["creator_pid"].is_null());
  EXPECT_EQ(j["shm"][1]["creator"], "unknown");

  EXPECT_EQ(j["tmp"][0]["kind"], "pymp");
  EXPECT_EQ(j["tmp"][0]["bytes_partial"], true);
  EXPECT_EQ(j["tmp"][0]["bound"], json::array({"/tmp/pymp-abc/listener-1"}));

  EXPECT_EQ(j["cgroups"][0]["owner"], 4243);
  EXPECT_EQ(j["cgroups"][0]["members"], json::array({77}));
  EXPECT_EQ(j["cgroups"][0]["leftover"], true);

  EXPECT_EQ(j["uninspected"][0]["matters_why"], "an orphan");
  EXPECT_EQ(j["unreadable_processes"], 1);
}

TEST(InspectJson, AGpuWithoutAProbeHasANullProbe) {
  InspectReport r = bare_report();
  r.gpus.push_back(gpu(0, "x"));
  EXPECT_TRUE(inspect_json(r)["gpus"][0]["probe"].is_null());
}

// ---- reap's plan

ReapPlan sample_plan() {
  ReapPlan plan;
  ReapStep child;
  child.kind = ReapStep::Kind::Terminate;
  child.pid = 4243;
  child.comm = "pt_data_worker";
  child.uid = 1000;
  child.depth = 1;
  child.why = "below leftover 4242";
  ReapStep root = child;
  root.pid = 4242;
  root.comm = "python3";
  root.depth = 0;
  root.why = "orphan holding a GPU";
  ReapStep shm;
  shm.kind = ReapStep::Kind::Remove;
  shm.name = "torch_4242_1";
  shm.after_processes = true;
  shm.why = "creator gone";
  ReapStep tmp;
  tmp.kind = ReapStep::Kind::RemoveTmp;
  tmp.name = "/tmp/pymp-gone";
  tmp.why = "maker gone";
  ReapStep cg;
  cg.kind = ReapStep::Kind::RemoveCgroup;
  cg.name = "/sys/fs/cgroup/aftermath/aftermath-4243-3-f1-p7";
  cg.after_processes = true;
  cg.why = "harness gone";
  plan.steps = {child, root, shm, tmp, cg};
  plan.untouched = {"sem.mp-1: too young to judge"};
  return plan;
}

TEST(ReapPlanText, NothingToReap) {
  EXPECT_EQ(format_reap_plan(ReapPlan{}, false), "Nothing to reap.\n");
  EXPECT_EQ(format_reap_plan(ReapPlan{}, true), "Nothing was done: nothing to reap.\n");
  ReapPlan only_untouched;
  only_untouched.untouched = {"x: in use"};
  EXPECT_EQ(format_reap_plan(only_untouched, false),
            "Nothing to reap.\nLeft alone:\n  x: in use\n");
  // Processes in use are in the report's table already: counted, not listed again.
  ReapPlan in_use;
  in_use.in_use = {"pid 7 (python3, uid 0): in use: its parent 6 is alive",
                   "pid 8 (python3, uid 0): in use: its parent 6 is alive"};
  EXPECT_EQ(
      format_reap_plan(in_use, false),
      "Nothing to reap.\nLeft alone:\n  2 process(es) in use: no leftover (each listed above)\n");
  EXPECT_EQ(reap_plan_json(in_use)["untouched"].size(), 2u);
}

TEST(ReapPlanText, EveryKindOfStepWithWhy) {
  std::string t = format_reap_plan(sample_plan(), false);
  EXPECT_EQ(t,
            "Plan:\n"
            "    terminate pid 4243 (pt_data_worker, uid 1000) (SIGTERM, then SIGKILL)\n"
            "      why: below leftover 4242\n"
            "  terminate pid 4242 (python3, uid 1000) (SIGTERM, then SIGKILL)\n"
            "      why: orphan holding a GPU\n"
            "  remove torch_4242_1 (once its users are gone)\n"
            "      why: creator gone\n"
            "  remove /tmp/pymp-gone and everything in it\n"
            "      why: maker gone\n"
            "  remove cgroup /sys/fs/cgroup/aftermath/aftermath-4243-3-f1-p7 (once its processes "
            "are gone)\n"
            "      why: harness gone\n"
            "Left alone:\n"
            "  sem.mp-1: too young to judge\n");
}

TEST(ReapPlanText, AfterRunningEachStepSaysWhatHappened) {
  ReapPlan plan = sample_plan();
  plan.steps[0].result = "gone after SIGTERM";
  plan.steps[0].done = true;
  std::string t = format_reap_plan(plan, true);
  EXPECT_THAT(t, ::testing::StartsWith("Done:\n"));
  EXPECT_THAT(t, HasSubstr("      why: below leftover 4242\n      -> gone after SIGTERM\n"));
  EXPECT_THAT(t, HasSubstr("      why: orphan holding a GPU\n      -> not attempted\n"));
  EXPECT_THAT(format_reap_plan(plan, false), Not(HasSubstr("->")));
}

TEST(ReapPlanText, DeepTreesAreIndentedAtMostFourLevels) {
  ReapPlan plan;
  ReapStep deep;
  deep.pid = 1;
  deep.comm = "x";
  deep.depth = 9;
  plan.steps = {deep};
  EXPECT_THAT(format_reap_plan(plan, false), HasSubstr("\n          terminate pid 1"));  // 2 + 8
}

TEST(ReapPlanJson, StepsByKindWithTheirOwnFields) {
  ReapPlan plan = sample_plan();
  plan.steps[1].result = "killed";
  plan.steps[1].done = true;
  json j = reap_plan_json(plan);
  ASSERT_EQ(j["steps"].size(), 5u);
  const json& root = j["steps"][1];
  EXPECT_EQ(root["kind"], "terminate");
  EXPECT_EQ(root["pid"], 4242);
  EXPECT_EQ(root["comm"], "python3");
  EXPECT_EQ(root["uid"], 1000);
  EXPECT_EQ(root["depth"], 0);
  EXPECT_EQ(root["result"], "killed");
  EXPECT_EQ(root["done"], true);
  EXPECT_FALSE(root.contains("name"));
  EXPECT_EQ(j["steps"][2]["kind"], "remove");
  EXPECT_EQ(j["steps"][2]["name"], "torch_4242_1");
  EXPECT_EQ(j["steps"][2]["after_processes"], true);
  EXPECT_FALSE(j["steps"][2].contains("pid"));
  EXPECT_EQ(j["steps"][3]["kind"], "remove_tmp");
  EXPECT_EQ(j["steps"][3]["after_processes"], false);
  EXPECT_EQ(j["steps"][4]["kind"], "remove_cgroup");
  EXPECT_EQ(j["untouched"], json::array({"sem.mp-1: too young to judge"}));
  EXPECT_EQ(reap_plan_json(ReapPlan{}),
            (json{{"steps", json::array()}, {"untouched", json::array()}}));
}

}  // namespace
}  // namespace aftermath
