// End-to-end: ordinary PyTorch programs written with no knowledge of the
// harness (tests/data/programs/), run as `aftermath run -- PYTHON ...` and
// `aftermath run -- torchrun ...` with default options, on every PyTorch this
// machine has (the project's venv, Debian's python3-torch). PyTorch's
// designed behaviour passes; roles come from what the kernel shows; the
// settle watches long enough to see PyTorch's own cleanup; rank and worker
// targets hit the right processes of a real torchrun job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <map>
#include <regex>
#include <set>

#include "e2e_util.h"
#include "harness/observe/python_probe.h"

using namespace std::chrono_literals;
using e2e::TempDir;
using nlohmann::json;

namespace {

class RealPrograms : public ::testing::TestWithParam<e2e::TorchPython> {
 protected:
  void SetUp() override {
    if (!e2e::torch_unavailable(py()).empty()) GTEST_SKIP() << e2e::torch_unavailable(py());
  }
  static const std::string& py() { return GetParam().path; }
  // This interpreter's PyTorch, as the harness reads it.
  static aftermath::PythonFacts facts() { return aftermath::probe_python(py()); }
  TempDir dir;
  static std::string program(const std::string& name) {
    return e2e::src("tests/data/programs/" + name);
  }
  e2e::Run run(std::vector<std::string> opts, std::vector<std::string> cmd,
               std::chrono::milliseconds deadline = 120s) {
    std::vector<std::string> a{"run", "--out", dir / "out"};
    a.insert(a.end(), opts.begin(), opts.end());
    a.push_back("--");
    a.insert(a.end(), cmd.begin(), cmd.end());
    return e2e::aftermath(dir, a, deadline);
  }
  static const json& scenario(const e2e::Run& r) { return r.result.at("scenarios").at(0); }
  static std::map<std::string, int> roles(const e2e::Run& r) {
    std::map<std::string, int> n;
    for (const auto& p : scenario(r)["processes"]) n[p["role"].get<std::string>()]++;
    return n;
  }
  static std::vector<std::string> failed_checks(const e2e::Run& r) {
    std::vector<std::string> out;
    for (const auto& c : scenario(r)["checks"])
      if (c["status"] != "pass" && c["status"] != "skipped")
        out.push_back(c["name"].get<std::string>() + ": " + c["reason"].get<std::string>());
    return out;
  }
  // torchrun as a user runs it: the `torchrun` beside the interpreter (a
  // venv's), else `python -m torch.distributed.run`; --standalone where it
  // picks a free port (2.x; 1.13's takes 29400, which parallel tests would
  // share). Only torch 1.x under Python 3.11 runs through the shim (its
  // torchrun dies at start there).
  static bool needs_shim() {
    auto f = facts();
    return f.torch && f.torch->major < 2 && f.python.rfind("3.11", 0) == 0;
  }
  e2e::HeldPort port_;  // for 1.13's torchrun, held through the test
  std::vector<std::string> torchrun(std::vector<std::string> script_args) {
    std::vector<std::string> cmd;
    std::string beside = std::filesystem::path(py()).parent_path() / "torchrun";
    if (needs_shim())
      cmd = {py(), e2e::src("fixtures/python/torchrun_shim.py")};
    else if (::access(beside.c_str(), X_OK) == 0 &&
             std::filesystem::path(py()).parent_path() != "/usr/bin")
      cmd = {beside};
    else
      cmd = {py(), "-m", "torch.distributed.run"};
    if (facts().torch && facts().torch->major >= 2) {
      cmd.insert(cmd.end(), {"--standalone", "--nproc_per_node", "2"});
    } else {
      cmd.insert(cmd.end(), {"--nnodes", "1", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                             "--master_port", port_.str()});
    }
    cmd.push_back(program("ddp_plain.py"));
    cmd.insert(cmd.end(), script_args.begin(), script_args.end());
    return cmd;
  }
};

// A clean file_system loader run: each worker's torch_shm_manager outlives it
// by its designed 2 s. Every default check passes, and the processes are
// named for what they are.
TEST_P(RealPrograms, CleanFileSystemLoaderPassesEveryDefaultCheck) {
  auto r = run({}, {py(), program("loader_plain.py"), "--workers", "4", "--strategy", "file_system",
                    "--batches", "12"});
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  EXPECT_EQ(scenario(r)["verdict"], "pass") << scenario(r)["verdict_reason"] << "\n"
                                            << ::testing::PrintToString(failed_checks(r));
  EXPECT_EQ(r.exit_code, 0);
  auto n = roles(r);
  EXPECT_EQ(n["worker"], 4) << scenario(r)["processes"].dump(1);
  EXPECT_GE(n["helper"], 1);  // the managers
  EXPECT_EQ(n["unknown"], 0) << scenario(r)["processes"].dump(1);
  // Inferred, in start order, of rank 0 (a single-process job).
  std::set<int> workers;
  for (const auto& p : scenario(r)["processes"])
    if (p["role"] == "worker") {
      EXPECT_EQ(p["rank"], 0);
      workers.insert(p["worker"].get<int>());
    }
  EXPECT_EQ(workers, (std::set<int>{0, 1, 2, 3}));
  // The loader reaps its own workers; their statuses still reach the report
  // (from the kernel's exit events, as root).
  if (::geteuid() == 0) {
    for (const auto& p : scenario(r)["processes"]) {
      if (p["role"] == "worker") {
        EXPECT_EQ(p["outcome"]["text"], "exited(0)") << p.dump();
      }
    }
  }
}

// The same with the managers stopped: a helper that never exits is still a
// failure.
TEST_P(RealPrograms, StoppedShmManagersFail) {
  auto r =
      run({"--timeout", "40s", "--fault",
           "{action: SIGSTOP, target: 'match:torch_shm_manager', at: {when: {shm_entries: 1}}}"},
          {py(), program("loader_plain.py"), "--workers", "4", "--strategy", "file_system",
           "--batches", "12"});
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  EXPECT_EQ(scenario(r)["faults"][0]["status"], "injected") << scenario(r)["faults"][0].dump();
  EXPECT_EQ(scenario(r)["verdict"], "fail") << scenario(r)["verdict_reason"];
  EXPECT_EQ(e2e::check_status(r, "all_exited"), "fail");
}

// A main process SIGKILLed with 16 file_system workers: with default options
// the harness watches until PyTorch has cleaned up by itself (workers' 5 s
// watchdog, the managers' 2 s), and reports the truth, not its own teardown.
// The kill comes at the 17th batch, once each worker has delivered one: a
// worker still starting when its parent dies takes the reaper for its
// parent (ManagerWatchdog), so it never notices and never leaves.
TEST_P(RealPrograms, KilledFileSystemLoaderIsWatchedUntilPyTorchCleansUp) {
  auto r = run({}, {py(), program("loader_plain.py"), "--workers", "16", "--strategy",
                    "file_system", "--batches", "60", "--kill-at", "17"});
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  const json& s = scenario(r);
  EXPECT_EQ(s["top"]["outcome"]["signal"], "SIGKILL") << s["top"].dump();
  EXPECT_EQ(e2e::check_status(r, "all_exited"), "pass") << e2e::check(r, "all_exited")["reason"];
  EXPECT_EQ(e2e::check_status(r, "shm_clean"), "pass") << e2e::check(r, "shm_clean")["reason"];
  EXPECT_EQ(roles(r)["worker"], 16) << s["processes"].dump(1);
  // Nearly always all 16 workers are orphaned until their watchdog (~5 s),
  // but one whose next get() sees the parent's end can itself end within
  // milliseconds of the kill, before the main process's end is recorded, and
  // is then no orphan (seen once, Debian's 1.13 in CI): the count is 1 to 16,
  // and the reason names it.
  json orphans = e2e::check(r, "no_orphans")["measured"];
  int workers = 0;
  for (const auto& o : orphans["orphans"]) {
    EXPECT_FALSE(o["lifetime_is_lower_bound"].get<bool>()) << o.dump();
    if (o["role"] == "worker") ++workers;
  }
  EXPECT_GE(workers, 1) << orphans.dump(1);
  EXPECT_LE(workers, 16) << orphans.dump(1);
  double longest = orphans["max_orphan_lifetime_ms"];
  EXPECT_GE(longest, 3000);  // the watchdog's interval is 5 s
  EXPECT_LE(longest, 30000);
  EXPECT_EQ(orphans["max_orphan_lifetime_is_lower_bound"], false);
  const std::regex named("[(, ]" + std::to_string(workers) +
                         (workers == 1 ? " worker[,)]" : " workers[,)]"));
  EXPECT_TRUE(std::regex_search(e2e::check(r, "no_orphans")["reason"].get<std::string>(), named))
      << e2e::check(r, "no_orphans")["reason"];
}

// A clean torchrun job (2 ranks, 2 DataLoader workers each): torchrun reaps
// its ranks on its monitor interval (5 s in 1.13, 0.1 s since 2.4), so they
// may sit as zombies that long by design. Every default check passes; ranks
// and workers are found without the job announcing anything.
TEST_P(RealPrograms, CleanTorchrunJobPassesAndItsRanksAreKnown) {
  auto r = run({}, torchrun({"--workers", "2", "--steps", "10"}));
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  EXPECT_EQ(scenario(r)["verdict"], "pass") << scenario(r)["verdict_reason"] << "\n"
                                            << ::testing::PrintToString(failed_checks(r));
  std::set<std::pair<int, int>> workers;
  std::set<int> ranks;
  for (const auto& p : scenario(r)["processes"]) {
    if (p["role"] == "rank") ranks.insert(p["rank"].get<int>());
    if (p["role"] == "worker") workers.insert({p["rank"].get<int>(), p["worker"].get<int>()});
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1})) << scenario(r)["processes"].dump(1);
  EXPECT_EQ(workers, (std::set<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
}

// `torchrun --standalone --nproc_per_node 2` of a plain DDP script with 4
// file_system DataLoader workers per rank, as its user runs it: every
// default check passes (torchrun's own log folder is its design, not a leak:
// it lands in the run's logs).
TEST_P(RealPrograms, PlainTorchrunWithFileSystemWorkersPassesEveryDefaultCheck) {
  auto r = run({}, torchrun({"--workers", "4", "--strategy", "file_system", "--steps", "12"}));
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  const json& s = scenario(r);
  EXPECT_EQ(s["verdict"], "pass") << s["verdict_reason"] << "\n"
                                  << ::testing::PrintToString(failed_checks(r));
  EXPECT_EQ(r.exit_code, 0);
  auto n = roles(r);
  EXPECT_EQ(n["rank"], 2) << s["processes"].dump(1);
  EXPECT_EQ(n["worker"], 8) << s["processes"].dump(1);
  EXPECT_GE(n["helper"], 2);  // the workers' torch_shm_managers
  EXPECT_GT(e2e::check(r, "shm_clean")["measured"]["created"].get<int>(), 0);
  EXPECT_EQ(s["python"]["interpreter"], py()) << s["python"].dump();
  // Nothing of torchrun's is left in the job's temp dir.
  EXPECT_EQ(e2e::residue_listing(dir / "tmp"), "");
}

// A SIGKILLed torchrun agent runs no exit handler, yet nothing is left in
// $TMPDIR: under aftermath the agent's log folder is kept with the run's
// logs, where a report can point at it (the shim's torchrun-PID/ on 1.13,
// torchrun's own torchelastic_*/ moved there on 2.x).
TEST_P(RealPrograms, ASigkilledTorchrunAgentLeavesNothingInTmp) {
  // Once both ranks have their DataLoader worker: the agent has written its
  // attempt's folder by then, however slowly torch imports on a loaded machine.
  auto r = run({"--fault", "{action: SIGKILL, target: launcher, at: {when: {workers: 2}}}"},
               torchrun({"--workers", "1", "--steps", "400"}));
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  const json& f = scenario(r)["faults"][0];
  ASSERT_EQ(f["status"], "injected") << f.dump();
  EXPECT_EQ(scenario(r)["top"]["outcome"]["signal"], "SIGKILL");
  const json& tmp = e2e::check(r, "tmp_clean");
  EXPECT_EQ(tmp["measured"].dump().find("aftermath-torchrun"), std::string::npos) << tmp.dump(1);
  const std::string prefix = needs_shim() ? "torchrun-" : "torchelastic_";
  int agent_dirs = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(scenario(r)["out_dir"].get<std::string>() + "/logs"))
    if (e.is_directory() && e.path().filename().string().rfind(prefix, 0) == 0 &&
        !std::filesystem::is_empty(e.path()))
      ++agent_dirs;
  EXPECT_EQ(agent_dirs, 1) << tmp.dump(1);
  for (const auto& e : std::filesystem::directory_iterator(dir / "tmp"))
    if (e.path().filename().string().rfind("torchelastic_", 0) == 0)
      ADD_FAILURE() << "left in TMPDIR: " << e.path();
}

// rank:1 and worker:0/1 on a job that never announces itself hit exactly
// the process torchrun made rank 1, and rank 0's second DataLoader worker.
TEST_P(RealPrograms, RankAndWorkerTargetsHitTheRightProcessOfATorchrunJob) {
  auto r = run({"--fault", "{action: SIGKILL, target: rank:1, at: {after: 1s}}"},
               torchrun({"--workers", "2", "--steps", "400"}));
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  const json& f = scenario(r)["faults"][0];
  ASSERT_EQ(f["status"], "injected") << f.dump();
  ASSERT_EQ(f["pids"].size(), 1u);
  int pid = f["pids"][0];
  for (const auto& p : scenario(r)["processes"])
    if (p["pid"] == pid) {
      EXPECT_EQ(p["role"], "rank");
      EXPECT_EQ(p["rank"], 1);
      EXPECT_EQ(p["outcome"]["signal"], "SIGKILL") << p.dump();
    }

  TempDir d2;
  std::vector<std::string> a{
      "run",
      "--out",
      d2 / "out",
      "--fault",
      "{action: SIGKILL, target: worker:0/1, at: {when: {workers: {rank: 0, count: 2}}}}",
      "--"};
  for (const auto& c : torchrun({"--workers", "2", "--steps", "400"})) a.push_back(c);
  auto w = e2e::aftermath(d2, a, 120s);
  ASSERT_FALSE(w.result.is_null()) << w.err << w.out;
  const json& wf = w.result["scenarios"][0]["faults"][0];
  ASSERT_EQ(wf["status"], "injected") << wf.dump();
  ASSERT_EQ(wf["pids"].size(), 1u);
  EXPECT_EQ(wf["target_role"], "worker");
  EXPECT_EQ(wf["rank"], 0);
  EXPECT_EQ(wf["worker"], 1);
  // It is rank 0's second-born worker: a child of the process with RANK=0.
  int wpid = wf["pids"][0];
  std::map<int, json> by_pid;
  for (const auto& p : w.result["scenarios"][0]["processes"]) by_pid[p["pid"]] = p;
  ASSERT_TRUE(by_pid.count(wpid));
  int parent = by_pid[wpid]["ppid"];
  ASSERT_TRUE(by_pid.count(parent));
  EXPECT_EQ(by_pid[parent]["role"], "rank");
  EXPECT_EQ(by_pid[parent]["rank"], 0);
  int younger = 0;
  for (const auto& [pid2, p] : by_pid)
    if (p["ppid"] == parent && p["role"] == "worker" &&
        p["started_ms"] < by_pid[wpid]["started_ms"])
      ++younger;
  EXPECT_EQ(younger, 1);
}

INSTANTIATE_TEST_SUITE_P(Versions, RealPrograms, ::testing::ValuesIn(e2e::torch_pythons()),
                         e2e::torch_python_name);

// --python given twice: the same command once on each interpreter, each
// run's reports in a folder named for its PyTorch, and versions.md /
// versions.json side by side.
TEST(VersionMatrix, OneRunPerInterpreterSideBySide) {
  std::vector<std::string> have;
  for (const auto& p : e2e::torch_pythons())
    if (e2e::torch_unavailable(p.path).empty()) have.push_back(p.path);
  if (have.size() < 2) GTEST_SKIP() << "needs two interpreters with torch";
  TempDir dir;
  auto r = e2e::aftermath(dir,
                          {"run", "--out", dir / "out", "--python", have[0], "--python", have[1],
                           "--", "${PYTHON}", "-c", "import torch; print(torch.__version__)"},
                          120s);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  json v = json::parse(e2e::slurp(dir / "out/versions.json"));
  ASSERT_EQ(v["versions"].size(), 2u) << v.dump(1);
  std::set<std::string> dirs;
  for (size_t i = 0; i < 2; ++i) {
    const json& ver = v["versions"][i];
    EXPECT_EQ(ver["interpreter"], have[i]);
    EXPECT_TRUE(ver["torch"].is_string());
    dirs.insert(ver["dir"].get<std::string>());
    json res =
        json::parse(e2e::slurp(dir / ("out/" + ver["dir"].get<std::string>() + "/result.json")));
    const json& s = res["scenarios"][0];
    EXPECT_EQ(s["verdict"], "pass") << s["verdict_reason"];
    EXPECT_EQ(s["python"]["interpreter"], have[i]);
    // ${PYTHON} became this interpreter in the job's command.
    EXPECT_NE(s["repro"].get<std::string>().find(have[i]), std::string::npos) << s["repro"];
    EXPECT_NE(e2e::slurp(s["stdout_path"].get<std::string>()).find(ver["torch"].get<std::string>()),
              std::string::npos);
  }
  EXPECT_EQ(dirs.size(), 2u);
  ASSERT_EQ(v["scenarios"].size(), 1u);
  EXPECT_EQ(v["scenarios"][0]["differs"], false);
  std::string md = e2e::slurp(dir / "out/versions.md");
  EXPECT_NE(md.find("| scenario |"), std::string::npos) << md;
  EXPECT_NE(r.out.find("versions: "), std::string::npos) << r.out;
  // A command that does not name ${PYTHON} cannot run on two: said, nothing launched.
  TempDir d2;
  auto bad = e2e::aftermath(d2, {"run", "--out", d2 / "out", "--python", have[0], "--python",
                                 have[1], "--", have[0], "-c", "pass"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("does not name ${PYTHON}"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(d2 / "out"));
}

}  // namespace

namespace {

std::string sig_ign_line(const std::string& text) {
  auto at = text.find("SigIgn:");
  return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
}

// The mask of a SigIgn line (bit sig-1).
std::uint64_t sig_ign_mask(const std::string& line) {
  return std::stoull(line.substr(line.find('\t') + 1), nullptr, 16);
}

// The job starts with the signal dispositions its launcher gave the harness:
// not the harness's own ignored SIGPIPE; a nohup-style ignored SIGHUP kept.
TEST(JobSignals, IgnoredSignalsAreTheLaunchersNotTheHarnesss) {
  for (const char* trap : {"", "trap '' HUP; "}) {
    TempDir d;
    // Directly: what the job would see without the harness.
    e2e::Child direct =
        e2e::spawn({"/bin/sh", "-c", std::string(trap) + "exec /bin/cat /proc/self/status"},
                   d / "direct.out", d / "direct.err");
    ASSERT_GE(e2e::wait_for(direct, 30s), 0);
    std::string want = sig_ign_line(e2e::slurp(d / "direct.out"));
    ASSERT_FALSE(want.empty());
    e2e::Child via = e2e::spawn({"/bin/sh", "-c",
                                 std::string(trap) + "exec \"$0\" run --out " + (d / "out") +
                                     " -- /bin/cat /proc/self/status",
                                 e2e::bin("aftermath")},
                                d / "via.out", d / "via.err");
    ASSERT_GE(e2e::wait_for(via, 60s), 0);
    std::string got;
    for (const auto& e : std::filesystem::directory_iterator(d / "out"))
      if (e.is_directory()) got = sig_ign_line(e2e::slurp(e.path() / "stdout.log"));
    EXPECT_EQ(got, want) << "trap: " << trap << e2e::slurp(d / "via.err");
  }
}

// A scenario file's job starts with every signal at its default, whatever
// aftermath's caller ignored (a script's background job ignores SIGINT, which
// would undo a SIGINT fault or torch's parent-death SIGINT); `signals:
// inherited` asks for the caller's.
TEST(JobSignals, AScenarioFilesJobStartsWithDefaultsUnlessItInherits) {
  const std::string trap = "trap '' INT; ";
  TempDir d;
  e2e::Child direct = e2e::spawn({"/bin/sh", "-c", trap + "exec /bin/cat /proc/self/status"},
                                 d / "direct.out", d / "direct.err");
  ASSERT_GE(e2e::wait_for(direct, 30s), 0);
  std::string ignoring = sig_ign_line(e2e::slurp(d / "direct.out"));
  ASSERT_NE(ignoring.find("SigIgn:"), std::string::npos);
  ASSERT_NE(sig_ign_mask(ignoring) & (1ull << (SIGINT - 1)), 0u);  // the trap took
  for (std::string signals : {"", "default", "inherited"}) {
    TempDir s;
    s.write("status.yaml",
            "name: status\ndescription: the job's own signal dispositions\njob:\n"
            "  command: [/bin/cat, /proc/self/status]\n" +
                (signals.empty() ? "" : "  signals: " + signals + "\n"));
    e2e::Child via = e2e::spawn(
        {"/bin/sh", "-c", trap + "exec \"$0\" run --out " + (s / "out") + " " + (s / "status.yaml"),
         e2e::bin("aftermath")},
        s / "via.out", s / "via.err");
    ASSERT_GE(e2e::wait_for(via, 60s), 0);
    std::string got = sig_ign_line(e2e::slurp(s / "out/status/stdout.log"));
    ASSERT_FALSE(got.empty()) << e2e::slurp(s / "via.err");
    if (signals == "inherited") {
      EXPECT_EQ(got, ignoring) << e2e::slurp(s / "via.err");
    } else {
      // Every signal a program can set is at its default: not the C
      // library's own 32 and 33, which no sigaction() reaches.
      const std::uint64_t libc_own = (1ull << 31) | (1ull << 32);
      EXPECT_EQ(sig_ign_mask(got) & ~libc_own, 0u)
          << signals << ": " << got << e2e::slurp(s / "via.err");
    }
  }
}

}  // namespace
