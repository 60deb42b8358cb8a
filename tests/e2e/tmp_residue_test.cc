// End-to-end: what a job leaves in its temp dir, through the real CLI. A real
// Python program (fixtures/python/tmp_leak_job.py: a multiprocessing
// Listener, so a real pymp-* folder) is killed, or leaves by os._exit, or
// exits cleanly; tmp_clean must fail exactly when the folder is left, the
// harness must remove it (or keep it with --keep-leaks). Then `aftermath
// check` and `reap` on planted leftovers: at once, not after 30 s.
//
// Each job's TMPDIR is a scratch folder of the test (set in the scenario's
// job.env), so tests running side by side never see each other's residue.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "e2e_util.h"

using e2e::TempDir;
namespace fs = std::filesystem;

namespace {

class TmpResidue : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(e2e::python().c_str(), X_OK) != 0)
      GTEST_SKIP() << e2e::python() << " is not installed";
    fs::create_directories(tmp());
  }
  std::string tmp() const { return dir / "tmp"; }
  // A scenario running the fixture with --how `how` in the scratch TMPDIR.
  std::string scenario(const std::string& how, bool kill) {
    std::string yaml = "name: tmp-leak-" + how + "\n" +
                       "description: a multiprocessing Listener's pymp-* folder, left or not\n" +
                       "job:\n"
                       "  command: " +
                       e2e::python() +
                       "\n"
                       "  args: [\"" +
                       e2e::src("fixtures/python/tmp_leak_job.py") + "\", --how, " + how + "]\n" +
                       "  env: {TMPDIR: \"" + tmp() + "\"}\n" +
                       "timeouts: {job: 20s, settle: 500ms, teardown: 2s}\n";
    if (kill)
      yaml +=
          "faults:\n"
          "  - action: SIGKILL\n"
          "    target: launcher\n"
          "    at: {point: tmp.ready}\n"
          "checks:\n"
          "  job_exit: {signal: SIGKILL}\n";
    std::string path = dir / ("tmp-leak-" + how + ".yaml");
    std::ofstream(path) << yaml;
    return path;
  }
  // The folder the job said it made.
  std::string made(const e2e::Run& r) {
    for (const auto& e : r.result["scenarios"][0]["timeline"])
      if (e["kind"] == "event" && e["name"] == "tmp.made") return e["fields"]["path"];
    return "";
  }
  TempDir dir;
};

TEST_F(TmpResidue, APympFolderLeftByAKilledJobFailsTmpCleanAndIsRemoved) {
  auto r = e2e::aftermath(dir, {"run", "--out", dir / "out", scenario("kill", true)});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  EXPECT_EQ(r.result["scenarios"][0]["faults"][0]["status"], "injected");
  std::string folder = made(r);
  ASSERT_EQ(folder.rfind(tmp() + "/pymp-", 0), 0u) << folder << "\n" << r.out;
  EXPECT_EQ(e2e::check_status(r, "tmp_clean"), "fail") << r.out;
  EXPECT_EQ(r.result["scenarios"][0]["verdict"], "fail");
  auto m = e2e::check(r, "tmp_clean")["measured"];
  ASSERT_EQ(m["left"].size(), 1u) << m.dump();
  EXPECT_EQ(m["left"][0]["path"], folder);
  EXPECT_EQ(m["left"][0]["residue"], "pymp");
  EXPECT_EQ(m["left"][0]["owner"], ::getuid());
  EXPECT_TRUE(m["left"][0]["reclaimed"].get<bool>());
  EXPECT_NE(e2e::check(r, "tmp_clean")["reason"].get<std::string>().find(folder + " (pymp, uid "),
            std::string::npos);
  EXPECT_FALSE(fs::exists(folder)) << "the harness removes the residue it recorded";
  EXPECT_TRUE(fs::is_empty(tmp()));
}

TEST_F(TmpResidue, KeepLeaksKeepsTheFolder) {
  auto r =
      e2e::aftermath(dir, {"run", "--out", dir / "out", "--keep-leaks", scenario("exit", false)});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  std::string folder = made(r);
  ASSERT_FALSE(folder.empty()) << r.out;
  EXPECT_EQ(e2e::check_status(r, "tmp_clean"), "fail");
  auto m = e2e::check(r, "tmp_clean")["measured"];
  ASSERT_EQ(m["left"].size(), 1u);
  EXPECT_FALSE(m["left"][0]["reclaimed"].get<bool>());
  EXPECT_TRUE(fs::exists(folder));
  fs::remove_all(folder);  // the test's own cleanup
}

// Negative control: the same program exiting normally runs the finalizer.
TEST_F(TmpResidue, AJobThatExitsNormallyLeavesNothing) {
  auto r = e2e::aftermath(dir, {"run", "--out", dir / "out", scenario("clean", false)});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(made(r).empty());
  EXPECT_EQ(e2e::check_status(r, "tmp_clean"), "pass") << e2e::check(r, "tmp_clean").dump();
  EXPECT_TRUE(fs::is_empty(tmp()));
}

// Two runs side by side in one temp dir: one job writes an error file (as
// mp.spawn does when a child raises: written and closed, held by nobody)
// while the other runs. Each run is judged on what its own job made. The
// bystander leaves a folder of its own, and the maker waits until that is
// gone, so the bystander's run is judged (and removes what it takes for its
// own) while the error file is there: before the kernel was asked who made
// an entry, it took the file nobody held for its own.
TEST_F(TmpResidue, SideBySideEachRunIsJudgedOnWhatItsOwnJobMade) {
  if (::geteuid() != 0) GTEST_SKIP() << "the kernel names who made an entry only to root";
  const std::string sync = dir / "sync";
  fs::create_directories(sync);
  // Bounded waits on what the other job does: 400 looks, 20 s.
  auto wait_until = [](const std::string& test) {
    return "i=0; until " + test + "; do i=$((i+1)); [ $i -lt 400 ] || exit 3; sleep 0.05; done; ";
  };
  auto write = [&](const std::string& name, const std::string& script) {
    std::string path = dir / (name + ".yaml");
    std::ofstream(path) << "name: " << name << "\n"
                        << "description: side by side in one temp dir\n"
                        << "job:\n  command: /bin/sh\n  args: [-c, '" << script << "']\n"
                        << "  env: {TMPDIR: \"" << tmp() << "\"}\n"
                        << "timeouts: {job: 30s, settle: 500ms, teardown: 2s}\n"
                        << "expect:\n  fail: [tmp_clean]\n  reason: it leaves an entry\n";
    return path;
  };
  const std::string maker =
      write("errorfile-maker",
            wait_until("[ -e " + sync + "/bystander-running ]") +
                "echo e > $TMPDIR/pytorch-errorfile-side$$.pickle; touch " + sync + "/made; " +
                wait_until("! ls -d $TMPDIR/torch-shm-dir-bystander* >/dev/null 2>&1"));
  const std::string bystander =
      write("bystander", "mkdir $TMPDIR/torch-shm-dir-bystander$$; touch " + sync +
                             "/bystander-running; " + wait_until("[ -e " + sync + "/made ]"));
  auto r = e2e::aftermath(dir, {"run", "--out", dir / "out", "--jobs", "2", maker, bystander});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  std::map<std::string, nlohmann::json> left;  // scenario: the paths its tmp_clean names
  for (const auto& s : r.result["scenarios"])
    for (const auto& c : s["checks"])
      if (c["name"] == "tmp_clean") {
        left[s["name"]] = nlohmann::json::array();
        for (const auto& e : c["measured"]["left"]) {
          left[s["name"]].push_back(e["path"]);
          EXPECT_TRUE(e["reclaimed"].get<bool>()) << e.dump();
        }
      }
  ASSERT_EQ(left.size(), 2u) << r.out;
  ASSERT_EQ(left["errorfile-maker"].size(), 1u) << left["errorfile-maker"].dump();
  EXPECT_EQ(
      left["errorfile-maker"][0].get<std::string>().rfind(tmp() + "/pytorch-errorfile-side", 0),
      0u);
  ASSERT_EQ(left["bystander"].size(), 1u) << left["bystander"].dump();
  EXPECT_EQ(left["bystander"][0].get<std::string>().rfind(tmp() + "/torch-shm-dir-bystander", 0),
            0u);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_empty(tmp()));
}

// `aftermath check` right after a job: segments whose creator is gone and a
// pymp folder whose listener is gone are leftovers at once, and reap --yes
// removes them. (Scratch /dev/shm, temp dir and device files: this machine's
// own are not the test's.)
TEST(HygieneCli, CheckSeesFreshLeftoversAtOnceAndReapRemovesThem) {
  TempDir dir;
  fs::create_directories(dir / "shm");
  fs::create_directories(dir / "tmp/pymp-gone");
  // A pid that is certainly gone: a child of ours, reaped.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  int st;
  ASSERT_EQ(::waitpid(dead, &st, 0), dead);
  for (int i = 0; i < 9; ++i) {
    std::ofstream(dir / ("shm/torch_" + std::to_string(dead) + "_" + std::to_string(i) + "_0"))
        << std::string(4096, 'x');
  }
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::string path = dir / "tmp/pymp-gone/listener-1";
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  std::vector<std::string> roots = {"--no-probe", "--shm-dir",        dir / "shm",
                                    "--tmp-dir",  dir / "tmp",        "--cgroup-dir",
                                    "none",       "--device-pattern", dir / "dev/nvidia*"};
  std::vector<std::string> check = {"check"};
  check.insert(check.end(), roots.begin(), roots.end());
  auto c = e2e::aftermath(dir, check);
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_NE(c.out.find("NOT CLEAN: 10 problem(s)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("creator " + std::to_string(dead) + " is gone"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find(dir / "tmp/pymp-gone (pymp"), std::string::npos) << c.out;

  // `inspect` is the command's name; `check` above is its alias.
  std::vector<std::string> inspect = {"inspect"};
  inspect.insert(inspect.end(), roots.begin(), roots.end());
  auto i = e2e::aftermath(dir, inspect);
  EXPECT_EQ(i.exit_code, 1) << i.out << i.err;
  EXPECT_NE(i.out.find("NOT CLEAN: 10 problem(s)"), std::string::npos) << i.out;

  // A dry run shows the plan, does nothing, and exits 1: something is left.
  std::vector<std::string> dry = {"reap", "--dry-run", "--yes"};
  dry.insert(dry.end(), roots.begin(), roots.end());
  auto d = e2e::aftermath(dir, dry);
  EXPECT_EQ(d.exit_code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("Dry run: nothing was done."), std::string::npos) << d.out;
  EXPECT_FALSE(fs::is_empty(dir / "shm"));
  EXPECT_TRUE(fs::exists(dir / "tmp/pymp-gone"));

  std::vector<std::string> reap = {"reap", "--yes"};
  reap.insert(reap.end(), roots.begin(), roots.end());
  auto r = e2e::aftermath(dir, reap);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_empty(dir / "shm")) << r.out;
  EXPECT_FALSE(fs::exists(dir / "tmp/pymp-gone")) << r.out;
}

// --require-gpu on a machine whose GPUs the real NVML cannot inspect (this
// one has no driver): inspect and reap fail, naming why; without it the
// same machine is clean. Where NVML works, the flag adds nothing. (Scratch
// /dev/shm, temp dir and device files: nothing else is left to find.)
TEST(HygieneCli, RequireGpuFailsWhereTheGpusCouldNotBeInspected) {
  TempDir dir;
  fs::create_directories(dir / "shm");
  fs::create_directories(dir / "tmp");
  std::vector<std::string> roots = {
      "--json",    "--no-probe",       "--shm-dir",         dir / "shm",    "--tmp-dir",
      dir / "tmp", "--device-pattern", dir / "dev/nvidia*", "--cgroup-dir", "none"};
  auto with = [&](std::vector<std::string> argv) {
    argv.insert(argv.end(), roots.begin(), roots.end());
    return e2e::aftermath(dir, argv);
  };
  auto plain = with({"inspect"});
  auto p = nlohmann::json::parse(plain.out);
  const std::string why = p["gpu_unavailable"];
  const std::string problem = "GPU not inspected (--require-gpu): " + why;
  EXPECT_EQ(plain.exit_code, p["problems"].empty() ? 0 : 1) << plain.out;

  auto required = with({"inspect", "--require-gpu"});
  auto q = nlohmann::json::parse(required.out);
  auto expected = p["problems"];
  if (!why.empty()) expected.insert(expected.begin(), nlohmann::json(problem));
  EXPECT_EQ(q["problems"], expected) << required.out;
  EXPECT_EQ(required.exit_code, expected.empty() ? 0 : 1) << required.out;

  auto reap = with({"reap", "--dry-run", "--require-gpu"});
  auto before = nlohmann::json::parse(reap.out)["before"];
  EXPECT_EQ(before["problems"], expected) << reap.out;
  EXPECT_EQ(reap.exit_code, expected.empty() ? 0 : 1) << reap.out;

  if (::access("/dev/nvidiactl", F_OK) != 0) {
    // No GPU here: the case the flag is for, and the one CI runs.
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(plain.exit_code, 0) << plain.out;
    EXPECT_EQ(required.exit_code, 1) << required.out;
    EXPECT_EQ(reap.exit_code, 1) << reap.out;
  }
}

}  // namespace
