// The device-OOM tools, run for real against a stand-in for libcudart
// (tests/fake_cuda/fake_cudart.cc): the interposer preloaded into a client that
// links the stand-in (tests/fake_cuda/cudafail_client.cc), the hog pointed at the
// stand-in with AFTERMATH_CUDART, and DeviceHog driving both real hogs and
// misbehaving stand-ins. Every wait has a deadline; nothing sleeps.
#include "harness/inject/device_fault.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/support/units.h"

extern char** environ;

namespace aftermath {
namespace {

// A Status as a gtest assertion, its error text the failure message.
::testing::AssertionResult ok(const Status& s) {
  if (s) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.error().what;
}

namespace fs = std::filesystem;

constexpr auto kGiBUnsigned = static_cast<std::uint64_t>(testing_units::kGiB);
const std::string kPreload = AFTERMATH_CUDAFAIL_SO;
const std::string kFake = AFTERMATH_FAKECUDART_SO;
const std::string kClient = AFTERMATH_CUDAFAIL_CLIENT;
const std::string kHog = AFTERMATH_DEVICE_HOG;

// A child with pipes on stdin/stdout/stderr, signalled and waited on by
// pidfd, every read and wait with a deadline; killed and reaped at the end.
class Proc {
 public:
  // The environment is ours without the variables these tools read, plus `env`.
  Proc(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    std::vector<std::string> env_s;
    for (char** e = environ; e && *e; ++e) {
      std::string v(*e);
      if (v.rfind("LD_PRELOAD=", 0) == 0 || v.rfind("AFTERMATH_CUDA", 0) == 0 ||
          v.rfind("AFTERMATH_FAKE_CUDA", 0) == 0)
        continue;
      env_s.push_back(v);
    }
    for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
    int in[2], out[2], err[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    std::vector<char*> a, e;
    for (auto s : argv) args_.push_back(s);
    for (auto& s : args_) a.push_back(s.data());
    a.push_back(nullptr);
    for (auto& s : env_s) e.push_back(s.data());
    e.push_back(nullptr);
    int rc = ::posix_spawn(&pid_, a[0], &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = UniqueFd(in[1]);
    out_ = UniqueFd(out[0]);
    err_ = UniqueFd(err[0]);
    EXPECT_EQ(rc, 0) << "cannot run " << argv[0];
    if (rc == 0)
      EXPECT_FALSE(pidfd_open(pid_, pidfd_));
    else
      pid_ = -1;
  }
  ~Proc() {
    if (pid_ > 0 && !outcome_) {
      (void)pidfd_signal(pidfd_.get(), SIGKILL);
      wait(10 * kSecond);
    }
  }
  void send(const std::string& line) {
    std::string s = line + "\n";
    ASSERT_EQ(::write(in_.get(), s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void close_stdin() { in_ = UniqueFd(); }
  int pid() const { return pid_; }
  void signal(int sig) { ASSERT_FALSE(pidfd_signal(pidfd_.get(), sig)); }
  // The next stdout line; "<timeout>" or "<eof>" when there is none.
  std::string line(Nanos timeout = 10 * kSecond) {
    Nanos until = monotonic_now() + timeout;
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return l;
      }
      Nanos left = until - monotonic_now();
      if (left <= 0) return "<timeout>";
      pollfd p{out_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left / kMilli) + 1) <= 0) continue;
      char b[4096];
      ssize_t n = ::read(out_.get(), b, sizeof b);
      if (n <= 0) return "<eof>";
      buf_.append(b, static_cast<std::size_t>(n));
    }
  }
  // Every stdout line until EOF.
  std::vector<std::string> lines() {
    std::vector<std::string> v;
    for (std::string l = line(); l != "<eof>" && l != "<timeout>"; l = line()) v.push_back(l);
    return v;
  }
  std::string stderr_text() {  // call after the exit: reads to EOF
    std::string s;
    char b[4096];
    for (ssize_t n; (n = ::read(err_.get(), b, sizeof b)) > 0;)
      s.append(b, static_cast<std::size_t>(n));
    return s;
  }
  std::optional<Outcome> wait(Nanos timeout = 10 * kSecond) {
    if (outcome_) return outcome_;
    pollfd p{pidfd_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout / kMilli)) != 1) return std::nullopt;
    int st = 0;
    if (::waitpid(pid_, &st, 0) == pid_) outcome_ = Outcome::from_wait_status(st);
    return outcome_;
  }

 private:
  std::vector<std::string> args_;
  pid_t pid_ = -1;
  UniqueFd pidfd_, in_, out_, err_;
  std::string buf_;
  std::optional<Outcome> outcome_;
};

using aftermath::testing::TempDir;

std::map<std::string, std::string> with_preload(std::map<std::string, std::string> env) {
  env["LD_PRELOAD"] = kPreload;
  return env;
}

// --- the interposer ---

TEST(DeviceFaultCudaFail, CallsBeforeTheNthReachTheLibraryLaterOnesFailWithoutReachingIt) {
  Proc p({kClient, "cudaMalloc", "5"}, with_preload({{"AFTERMATH_CUDA_FAIL_AFTER", "3"}}));
  EXPECT_EQ(p.lines(),
            (std::vector<std::string>{"rc=0 reached=1", "rc=0 reached=2", "rc=2 reached=2",
                                      "rc=2 reached=2", "rc=2 reached=2"}));
  ASSERT_EQ(p.wait(), Outcome::exited(0));
  std::string err = p.stderr_text();
  EXPECT_NE(err.find("aftermath-cudafail: cudaMalloc(4096 bytes) -> cudaErrorMemoryAllocation "
                     "(call 3)\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("(call 5)\n"), std::string::npos) << err;
}

TEST(DeviceFaultCudaFail, WithoutThePreloadEveryCallReachesTheLibrary) {
  // Negative control: the failures above come from the interposer alone.
  Proc p({kClient, "cudaMalloc", "3"}, {{"AFTERMATH_CUDA_FAIL_AFTER", "1"}});
  EXPECT_EQ(p.lines(),
            (std::vector<std::string>{"rc=0 reached=1", "rc=0 reached=2", "rc=0 reached=3"}));
  EXPECT_EQ(p.wait(), Outcome::exited(0));
}

TEST(DeviceFaultCudaFail, EveryDeviceAllocatorFailsWithItsOwnOutOfMemoryCode) {
  for (const char* api : {"cudaMalloc", "cudaMallocAsync", "cudaMallocAsync_ptsz",
                          "cudaMallocManaged", "cuMemAlloc", "cuMemAlloc_v2"}) {
    SCOPED_TRACE(api);
    Proc p({kClient, api, "2"}, with_preload({{"AFTERMATH_CUDA_FAIL_AFTER", "2"}}));
    EXPECT_EQ(p.lines(), (std::vector<std::string>{"rc=0 reached=1", "rc=2 reached=1"}));
    EXPECT_EQ(p.wait(), Outcome::exited(0));
    std::string err = p.stderr_text();
    bool driver = std::string(api).rfind("cu", 0) == 0 && std::string(api).rfind("cuda", 0) != 0;
    EXPECT_NE(err.find(std::string(api) + "(4096 bytes) -> " +
                       (driver ? "CUDA_ERROR_OUT_OF_MEMORY" : "cudaErrorMemoryAllocation")),
              std::string::npos)
        << err;
  }
}

TEST(DeviceFaultCudaFail, PinnedHostAllocationsFailOnlyWhenAskedAndAreNotCountedOtherwise) {
  for (const char* api : {"cudaMallocHost", "cudaHostAlloc"}) {
    SCOPED_TRACE(api);
    Proc pass({kClient, api, "2"}, with_preload({{"AFTERMATH_CUDA_FAIL_AFTER", "1"}}));
    EXPECT_EQ(pass.lines(), (std::vector<std::string>{"rc=0 reached=1", "rc=0 reached=2"}));
    EXPECT_EQ(pass.wait(), Outcome::exited(0));
    Proc fail({kClient, api, "2"}, with_preload({{"AFTERMATH_CUDA_FAIL_AFTER", "2"},
                                                 {"AFTERMATH_CUDA_FAIL_HOST", "1"}}));
    EXPECT_EQ(fail.lines(), (std::vector<std::string>{"rc=0 reached=1", "rc=2 reached=1"}));
    EXPECT_EQ(fail.wait(), Outcome::exited(0));
  }
}

TEST(DeviceFaultCudaFail, QuietWritesNothing) {
  Proc p({kClient, "cudaMalloc", "1"},
         with_preload({{"AFTERMATH_CUDA_FAIL_AFTER", "1"}, {"AFTERMATH_CUDA_FAIL_QUIET", "1"}}));
  EXPECT_EQ(p.lines(), (std::vector<std::string>{"rc=2 reached=0"}));
  EXPECT_EQ(p.wait(), Outcome::exited(0));
  EXPECT_EQ(p.stderr_text(), "");
}

TEST(DeviceFaultCudaFail, ABadCountIsIgnoredWithAWarning) {
  Proc p({kClient, "cudaMalloc", "1"}, with_preload({{"AFTERMATH_CUDA_FAIL_AFTER", "0"}}));
  EXPECT_EQ(p.lines(), (std::vector<std::string>{"rc=0 reached=1"}));
  EXPECT_EQ(p.wait(), Outcome::exited(0));
  EXPECT_NE(p.stderr_text().find("ignoring AFTERMATH_CUDA_FAIL_AFTER=0"), std::string::npos);
}

TEST(DeviceFaultCudaFail, TheArmFileTurnsFailureOnAndOff) {
  TempDir dir;
  std::string arm = dir / "cuda-fail.arm";
  Proc p({kClient}, with_preload({{"AFTERMATH_CUDA_FAIL_ARM", arm}}));
  p.send("alloc cudaMalloc 100");
  EXPECT_EQ(p.line(), "rc=0 reached=1");
  ASSERT_TRUE(ok(arm_cuda_fail(arm)));
  p.send("alloc cudaMalloc 100");
  EXPECT_EQ(p.line(), "rc=2 reached=1");
  p.send("alloc cuMemAlloc_v2 100");
  EXPECT_EQ(p.line(), "rc=2 reached=1");
  ASSERT_TRUE(ok(disarm_cuda_fail(arm)));
  p.send("alloc cudaMalloc 100");
  EXPECT_EQ(p.line(), "rc=0 reached=2");
  ASSERT_TRUE(ok(arm_cuda_fail(arm)));
  p.send("alloc cudaMallocManaged 100");
  EXPECT_EQ(p.line(), "rc=2 reached=2");
  p.close_stdin();
  EXPECT_EQ(p.wait(), Outcome::exited(0));
}

TEST(DeviceFaultCudaFail, AnArmFolderArmsOneProcessOrAll) {
  TempDir dir;
  std::string arm_dir = dir / "arm";
  ASSERT_EQ(::mkdir(arm_dir.c_str(), 0700), 0);
  Proc p({kClient}, with_preload({{"AFTERMATH_CUDA_FAIL_ARM", arm_dir + "/"}}));
  // Another process armed: this one is untouched.
  ASSERT_TRUE(ok(arm_cuda_fail(arm_dir + "/pid-" + std::to_string(p.pid() + 1))));
  p.send("alloc cudaMalloc 100");
  EXPECT_EQ(p.line(), "rc=0 reached=1");
  ASSERT_TRUE(ok(arm_cuda_fail(arm_dir + "/pid-" + std::to_string(p.pid()))));
  p.send("alloc cudaMalloc 100");
  EXPECT_EQ(p.line(), "rc=2 reached=1");
  ASSERT_TRUE(ok(disarm_cuda_fail(arm_dir + "/pid-" + std::to_string(p.pid()))));
  p.send("alloc cuMemAlloc_v2 100");
  EXPECT_EQ(p.line(), "rc=0 reached=2");
  ASSERT_TRUE(ok(arm_cuda_fail(arm_dir + "/all")));
  p.send("alloc cudaMalloc 100");
  EXPECT_EQ(p.line(), "rc=2 reached=2");
  p.close_stdin();
  EXPECT_EQ(p.wait(), Outcome::exited(0));
}

TEST(DeviceFaultCudaFail, AForkedChildCountsAfresh) {
  Proc p({kClient}, with_preload({{"AFTERMATH_CUDA_FAIL_AFTER", "3"}}));
  p.send("alloc cudaMalloc 100");  // the parent's call 1
  EXPECT_EQ(p.line(), "rc=0 reached=1");
  // Counting on from the parent, the child's calls would be 2, 3, 4: ok, fail, fail.
  p.send("fork cudaMalloc 3");
  EXPECT_EQ(p.line(), "child rcs=0,0,2 reached=3");
  EXPECT_EQ(p.line(), "parent reached=1");
  p.send("alloc cudaMalloc 100");  // the parent's call 2: its count is its own
  EXPECT_EQ(p.line(), "rc=0 reached=2");
  p.send("alloc cudaMalloc 100");  // call 3
  EXPECT_EQ(p.line(), "rc=2 reached=2");
  p.close_stdin();
  EXPECT_EQ(p.wait(), Outcome::exited(0));
}

TEST(DeviceFaultCudaFail, EnvPutsTheInterposerFirstInLdPreload) {
  const std::string so = "/opt/a/libaftermath-cudafail.so";
  auto env = *cuda_fail_env(so, 7, "/run/x/arm", "");
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"LD_PRELOAD", so},
                                                     {"AFTERMATH_CUDA_FAIL_AFTER", "7"},
                                                     {"AFTERMATH_CUDA_FAIL_ARM", "/run/x/arm"}}));
  env = *cuda_fail_env(so, std::nullopt, "", "libfoo.so:/usr/lib/libbar.so");
  EXPECT_EQ(
      env,
      (std::map<std::string, std::string>{{"LD_PRELOAD", so + ":libfoo.so:/usr/lib/libbar.so"}}));
  // Spaces separate too; empty entries and other copies of ours go.
  EXPECT_EQ(cuda_fail_env(so, 1, "", " libfoo.so  " + so + "::libbar.so: ")->at("LD_PRELOAD"),
            so + ":libfoo.so:libbar.so");
  EXPECT_EQ(cuda_fail_env(so, 1, "", so)->at("LD_PRELOAD"), so);
}

TEST(DeviceFaultCudaFail, EnvRejectsWhatTheLoaderOrTheJobWouldMisread) {
  EXPECT_FALSE(cuda_fail_env("libaftermath-cudafail.so", 1, "", ""));
  EXPECT_FALSE(cuda_fail_env("/a b/lib.so", 1, "", ""));
  EXPECT_FALSE(cuda_fail_env("/a:b/lib.so", 1, "", ""));
  EXPECT_EQ(cuda_fail_env("/lib.so", 0, "", "").error().what, "fail_after must be >= 1, not 0");
  EXPECT_FALSE(cuda_fail_env("/lib.so", 0, "", ""));
  EXPECT_FALSE(cuda_fail_env("/lib.so", std::nullopt, "arm", ""));
}

TEST(DeviceFaultCudaFail, ArmAndDisarmAreIdempotentAndReportErrors) {
  TempDir dir;
  std::string arm = dir / "arm";
  EXPECT_TRUE(ok(arm_cuda_fail(arm)));
  EXPECT_TRUE(fs::exists(arm));
  EXPECT_TRUE(ok(arm_cuda_fail(arm)));
  EXPECT_TRUE(ok(disarm_cuda_fail(arm)));
  EXPECT_FALSE(fs::exists(arm));
  EXPECT_TRUE(ok(disarm_cuda_fail(arm)));
  Status bad = arm_cuda_fail(dir / "no/such/dir/arm");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().errnum, ENOENT);
  EXPECT_EQ(bad.error().what, "arm " + (dir / "no/such/dir/arm") + ": " + std::strerror(ENOENT));
}

// --- availability ---

TEST(DeviceFaultAvailability, SaysWhichPieceIsMissing) {
  TempDir dev;
  Status can = device_oom_available(dev.path(), {kFake});
  ASSERT_FALSE(can);
  EXPECT_NE(can.error().what.find("nvidiactl absent"), std::string::npos) << can.error().what;
  std::ofstream(dev / "nvidiactl").put('x');
  EXPECT_TRUE(device_oom_available(dev.path(), {kFake}));
  can = device_oom_available(dev.path(), {"/nonexistent/libcudart.so.13"});
  ASSERT_FALSE(can);
  EXPECT_NE(can.error().what.find("no CUDA runtime"), std::string::npos) << can.error().what;
  EXPECT_NE(can.error().what.find("/nonexistent/libcudart.so.13"), std::string::npos)
      << can.error().what;
}

TEST(DeviceFaultAvailability, ThisMachineAgreesWithDevNvidiactl) {
  Status can = device_oom_available();
  if (::access("/dev/nvidiactl", F_OK) != 0) {
    ASSERT_FALSE(can);
    EXPECT_NE(can.error().what.find("nvidiactl"), std::string::npos);
  }
}

// --- the hog ---

TEST(DeviceFaultHogLine, ParsesTheThreeAnswers) {
  auto r = parse_hog_line(
      "ready device=0 goal=10 held=8 free_before=20 free_after=12 total=40 "
      "chunks=2 short=1 error=cudaErrorMemoryAllocation\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, HogState::Ready);
  EXPECT_EQ(r->fields.at("held"), "8");
  EXPECT_EQ(r->fields.at("error"), "cudaErrorMemoryAllocation");
  r = parse_hog_line("unavailable reason=no_runtime detail=no CUDA runtime: a b=c; d");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, HogState::Unavailable);
  EXPECT_EQ(r->fields.at("detail"), "no CUDA runtime: a b=c; d");
  r = parse_hog_line("failed reason=bad_device detail=device 3 of 1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, HogState::Failed);
  EXPECT_EQ(r->fields.at("reason"), "bad_device");
  EXPECT_FALSE(parse_hog_line("waiting device=0"));
  EXPECT_FALSE(parse_hog_line("ready device=0"));  // no held=
  EXPECT_FALSE(parse_hog_line("ready held=1 junk"));
  EXPECT_FALSE(parse_hog_line(""));
}

std::map<std::string, std::string> fake_gpu(std::uint64_t total, std::uint64_t free,
                                            int devices = 1) {
  return {{"AFTERMATH_CUDART", kFake},
          {"AFTERMATH_FAKE_CUDA_TOTAL", std::to_string(total)},
          {"AFTERMATH_FAKE_CUDA_FREE", std::to_string(free)},
          {"AFTERMATH_FAKE_CUDA_DEVICES", std::to_string(devices)}};
}

DeviceHogOptions hog_options(std::map<std::string, std::string> env) {
  DeviceHogOptions o;
  o.hog_path = kHog;
  o.deadline = 20 * kSecond;
  o.env = std::move(env);
  return o;
}

TEST(DeviceFaultHog, TakesTheShareOfFreeMemoryHoldsItAndExitsZeroOnStop) {
  auto o = hog_options(fake_gpu(8 * kGiBUnsigned, 6 * kGiBUnsigned));
  o.share = 0.5;
  DeviceHog hog;
  ASSERT_EQ(hog.start(o), HogState::Ready) << hog.reason() << " / " << hog.line();
  EXPECT_EQ(hog.goal(), 3 * kGiBUnsigned);
  EXPECT_EQ(hog.held(), 3 * kGiBUnsigned);
  EXPECT_EQ(hog.free_before(), 6 * kGiBUnsigned);
  EXPECT_EQ(hog.free_after(),
            3 * kGiBUnsigned);  // the fake's own reading after the hog's allocations
  EXPECT_EQ(hog.total(), 8 * kGiBUnsigned);
  EXPECT_EQ(hog.reason(), "");
  ASSERT_TRUE(hog.running());
  // It holds: still alive after its answer, until told.
  pollfd p{};
  UniqueFd pidfd;
  ASSERT_FALSE(pidfd_open(hog.pid(), pidfd));
  p = {pidfd.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0);
  EXPECT_EQ(hog.stop(), Outcome::exited(0));
  EXPECT_FALSE(hog.running());
  EXPECT_EQ(::waitpid(hog.pid(), nullptr, WNOHANG), -1);  // reaped: not our child any more
  EXPECT_EQ(errno, ECHILD);
}

TEST(DeviceFaultHog, TakesExactBytesInChunks) {
  auto o = hog_options(fake_gpu(8 * kGiBUnsigned, 8 * kGiBUnsigned));
  o.bytes = 3 * kGiBUnsigned / 2;
  DeviceHog hog;
  ASSERT_EQ(hog.start(o), HogState::Ready) << hog.reason();
  EXPECT_EQ(hog.held(), 3 * kGiBUnsigned / 2);
  EXPECT_EQ(hog.free_after(), 8 * kGiBUnsigned - 3 * kGiBUnsigned / 2);
  EXPECT_NE(hog.line().find(" chunks=2"), std::string::npos) << hog.line();
  EXPECT_EQ(hog.stop(), Outcome::exited(0));
}

TEST(DeviceFaultHog, HoldsWhatItGotWhenTheGoalExceedsTheFreeMemory) {
  auto o = hog_options(fake_gpu(8 * kGiBUnsigned, 5 * kGiBUnsigned / 2));
  o.bytes = 10 * kGiBUnsigned;
  DeviceHog hog;
  ASSERT_EQ(hog.start(o), HogState::Ready) << hog.reason();
  EXPECT_EQ(hog.held(), 5 * kGiBUnsigned / 2);  // halving chunks take the last half GiB too
  EXPECT_EQ(hog.free_after(), 0u);
  EXPECT_EQ(hog.reason(), "cudaErrorMemoryAllocation");
  EXPECT_NE(hog.line().find(" short=1"), std::string::npos) << hog.line();
  EXPECT_EQ(hog.stop(), Outcome::exited(0));
}

TEST(DeviceFaultHog, FailsWhenNothingCanBeHeld) {
  auto o = hog_options(fake_gpu(8 * kGiBUnsigned, 0));
  o.bytes = kGiBUnsigned;
  DeviceHog hog;
  ASSERT_EQ(hog.start(o), HogState::Failed) << hog.line();
  EXPECT_EQ(hog.reason(), "out_of_memory (cudaErrorMemoryAllocation)");
  EXPECT_FALSE(hog.running());
  EXPECT_EQ(hog.outcome(), Outcome::exited(1));
  EXPECT_EQ(hog.held(), 0u);
  // A share of nothing is nothing: no pretending to hold a full GPU.
  DeviceHog share;
  ASSERT_EQ(share.start(hog_options(fake_gpu(8 * kGiBUnsigned, 0))), HogState::Failed)
      << share.line();
  EXPECT_EQ(share.reason(), "nothing_to_take");
  EXPECT_EQ(share.outcome(), Outcome::exited(1));
}

TEST(DeviceFaultHog, FailsOnADeviceThatIsNotThere) {
  auto o = hog_options(fake_gpu(8 * kGiBUnsigned, 8 * kGiBUnsigned, 1));
  o.device = 1;
  DeviceHog hog;
  ASSERT_EQ(hog.start(o), HogState::Failed) << hog.line();
  EXPECT_NE(hog.reason().find("bad_device"), std::string::npos) << hog.reason();
  EXPECT_EQ(hog.outcome(), Outcome::exited(1));
}

TEST(DeviceFaultHog, UnavailableWithoutARuntimeExitsThree) {
  auto o = hog_options({{"AFTERMATH_CUDART", "/nonexistent/libcudart.so.13"}});
  DeviceHog hog;
  ASSERT_EQ(hog.start(o), HogState::Unavailable) << hog.line();
  EXPECT_EQ(hog.reason().rfind("no_runtime: no CUDA runtime", 0), 0u) << hog.reason();
  EXPECT_FALSE(hog.running());
  EXPECT_EQ(hog.outcome(), Outcome::exited(3));
}

TEST(DeviceFaultHog, UnavailableWithoutADeviceExitsThree) {
  DeviceHog hog;
  ASSERT_EQ(hog.start(hog_options(fake_gpu(8 * kGiBUnsigned, 8 * kGiBUnsigned, 0))),
            HogState::Unavailable);
  EXPECT_EQ(hog.reason().rfind("no_device", 0), 0u) << hog.reason();
  EXPECT_EQ(hog.outcome(), Outcome::exited(3));
}

TEST(DeviceFaultHog, ReleasesWhenItsStdinCloses) {
  // The hog dies with the parent that holds its stdin pipe.
  Proc p({kHog, "--share", "0.25"}, fake_gpu(4 * kGiBUnsigned, 4 * kGiBUnsigned));
  EXPECT_EQ(p.line().rfind("ready device=0 goal=1073741824 held=1073741824 ", 0), 0u);
  EXPECT_EQ(p.wait(0), std::nullopt);  // holding
  p.close_stdin();
  EXPECT_EQ(p.line(), "released held=1073741824");
  EXPECT_EQ(p.wait(), Outcome::exited(0));
}

TEST(DeviceFaultHog, WaitSignalAllocatesOnlyAfterSigusr1) {
  Proc p({kHog, "--bytes", "4096", "--wait-signal"}, fake_gpu(4 * kGiBUnsigned, 4 * kGiBUnsigned));
  EXPECT_EQ(p.line(), "waiting device=0");
  p.signal(SIGUSR1);
  std::string ready = p.line();
  EXPECT_EQ(ready.rfind("ready device=0 goal=4096 held=4096 free_before=4294967296 ", 0), 0u)
      << ready;
  p.signal(SIGTERM);
  EXPECT_EQ(p.line(), "released held=4096");
  EXPECT_EQ(p.wait(), Outcome::exited(0));
}

TEST(DeviceFaultHog, RejectsBadArguments) {
  Proc p({kHog, "--share", "1.5"}, {});
  EXPECT_EQ(p.wait(), Outcome::exited(2));
}

// A stand-in hog written as a shell script.
std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  std::string path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(DeviceFaultHog, ANonAnsweringHogTimesOutIsKilledAndReaped) {
  TempDir dir;
  DeviceHogOptions o;
  o.hog_path = script(dir, "silent", "exec sleep 30");
  o.deadline = 300 * kMilli;
  DeviceHog hog;
  Nanos t0 = monotonic_now();
  ASSERT_EQ(hog.start(o), HogState::TimedOut) << hog.reason();
  Nanos took = monotonic_now() - t0;
  EXPECT_GE(took, 300 * kMilli);
  EXPECT_LT(took, 5 * kSecond);
  EXPECT_NE(hog.reason().find("no answer within"), std::string::npos) << hog.reason();
  EXPECT_FALSE(hog.running());
  EXPECT_EQ(hog.outcome(), Outcome::killed(SIGKILL));
  EXPECT_EQ(::waitpid(hog.pid(), nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(DeviceFaultHog, StopEscalatesToSigkillWhenSigtermIsIgnored) {
  TempDir dir;
  DeviceHogOptions o;
  // Ignored signals stay ignored across exec: the sleep ignores SIGTERM, and
  // it never reads its stdin.
  o.hog_path =
      script(dir, "stubborn",
             "trap '' TERM\n"
             "echo 'ready device=0 goal=1 held=1 free_before=2 free_after=1 total=2 chunks=1'\n"
             "exec sleep 30");
  o.deadline = 10 * kSecond;
  o.term_wait = 200 * kMilli;
  DeviceHog hog;
  ASSERT_EQ(hog.start(o), HogState::Ready) << hog.reason();
  EXPECT_EQ(hog.held(), 1u);
  Nanos t0 = monotonic_now();
  EXPECT_EQ(hog.stop(), Outcome::killed(SIGKILL));
  EXPECT_GE(monotonic_now() - t0, 200 * kMilli);
  EXPECT_FALSE(hog.running());
}

TEST(DeviceFaultHog, TheDestructorStopsAndReapsIt) {
  int pid = -1;
  UniqueFd pidfd;
  {
    DeviceHog hog;
    ASSERT_EQ(hog.start(hog_options(fake_gpu(kGiBUnsigned, kGiBUnsigned))), HogState::Ready)
        << hog.reason();
    pid = hog.pid();
    ASSERT_FALSE(pidfd_open(pid, pidfd));
  }
  pollfd p{pidfd.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 1);                   // exited
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);  // and reaped
  EXPECT_EQ(errno, ECHILD);
}

TEST(DeviceFaultHog, AHogThatSaysNothingUsefulIsAnError) {
  TempDir dir;
  DeviceHogOptions o;
  o.deadline = 10 * kSecond;
  o.hog_path = "/nonexistent/aftermath-device-hog";
  DeviceHog missing;
  EXPECT_EQ(missing.start(o), HogState::Error);
  EXPECT_NE(missing.reason().find("cannot run"), std::string::npos) << missing.reason();

  o.hog_path = script(dir, "mute", "echo oops >&2; exit 4");
  DeviceHog mute;
  EXPECT_EQ(mute.start(o), HogState::Error);
  EXPECT_NE(mute.reason().find("without answering"), std::string::npos) << mute.reason();
  EXPECT_NE(mute.reason().find("oops"), std::string::npos) << mute.reason();
  EXPECT_EQ(mute.outcome(), Outcome::exited(4));

  o.hog_path = script(dir, "babble", "echo hello; exec sleep 30");
  DeviceHog babble;
  EXPECT_EQ(babble.start(o), HogState::Error);
  EXPECT_NE(babble.reason().find("not a hog answer: hello"), std::string::npos) << babble.reason();
  EXPECT_EQ(babble.outcome(), Outcome::killed(SIGKILL));
}

}  // namespace
}  // namespace aftermath
