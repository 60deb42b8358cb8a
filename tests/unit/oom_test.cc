// Host OOM by RLIMIT_AS: VmSize parsing, the limit lowered on a real child.
// (The cgroup mechanism: cgroup_test.cc.)
#include "harness/inject/oom.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "tests/support/children.h"
#include "tests/support/temp_dir.h"
#include "tests/support/units.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;

using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing_units::kMiB;

// --- parse_vm_size ---------------------------------------------------------------------

const char kStatus[] =
    "Name:\tsleep\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t4242\n"
    "Ngid:\t0\n"
    "Pid:\t4242\n"
    "PPid:\t4200\n"
    "TracerPid:\t0\n"
    "Uid:\t1000\t1000\t1000\t1000\n"
    "Gid:\t1000\t1000\t1000\t1000\n"
    "FDSize:\t64\n"
    "Groups:\t4 24 27 1000 \n"
    "NStgid:\t4242\n"
    "NSpid:\t4242\n"
    "NSpgid:\t4242\n"
    "NSsid:\t4200\n"
    "VmPeak:\t    8624 kB\n"
    "VmSize:\t    5616 kB\n"
    "VmLck:\t       0 kB\n"
    "VmPin:\t       0 kB\n"
    "VmHWM:\t     896 kB\n"
    "VmRSS:\t     896 kB\n"
    "RssAnon:\t      88 kB\n"
    "VmData:\t     360 kB\n"
    "VmStk:\t     132 kB\n"
    "VmExe:\t      16 kB\n"
    "VmLib:\t    1748 kB\n"
    "VmPTE:\t      48 kB\n"
    "VmSwap:\t       0 kB\n"
    "Threads:\t1\n"
    "SigQ:\t0/62756\n";

TEST(OomVmSize, ParsesAUserProcessStatus) {
  auto v = parse_vm_size(kStatus);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, 5616LL * 1024);
}

TEST(OomVmSize, LargeValues) {
  auto v = parse_vm_size("Name:\tpython3\nVmPeak:\t34359738368 kB\nVmSize:\t34359738368 kB\n");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, 34359738368LL * 1024);  // 32 TiB of address space (CUDA reserves that much)
}

TEST(OomVmSize, AKernelThreadHasNone) {
  EXPECT_FALSE(
      parse_vm_size("Name:\tkthreadd\nUmask:\t0000\nState:\tS (sleeping)\nTgid:\t2\n"
                    "Pid:\t2\nPPid:\t0\nThreads:\t1\n"));
  EXPECT_FALSE(parse_vm_size(""));
}

TEST(OomVmSize, MalformedValues) {
  EXPECT_FALSE(parse_vm_size("VmSize:\t  abc kB\n"));
  EXPECT_FALSE(parse_vm_size("VmSize:\t  5616 MB\n"));
  EXPECT_FALSE(parse_vm_size("VmSize:\t  5616\n"));
  EXPECT_FALSE(parse_vm_size("VmSize:"));
}

TEST(OomVmSize, OurOwnStatus) {
  std::ifstream in("/proc/self/status");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto v = parse_vm_size(text);
  ASSERT_TRUE(v.has_value());
  EXPECT_GT(*v, 1 * kMiB);
  EXPECT_EQ(*v % 1024, 0);
}

// --- lower_address_space on a real child -------------------------------------------------

// A forked child that waits for a command byte, then tries to allocate and
// touch 256 MiB and answers '1' (it worked) or '0' (malloc failed).
class AllocChild {
 public:
  // `hard_limit`: the child first sets its own RLIMIT_AS (soft = hard) to it.
  explicit AllocChild(std::optional<rlim_t> hard_limit = std::nullopt) {
    int cmd[2], res[2];
    if (::pipe2(cmd, O_CLOEXEC) != 0) return;
    if (::pipe2(res, O_CLOEXEC) != 0) {
      ::close(cmd[0]);
      ::close(cmd[1]);
      return;
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(cmd[1]);
      ::close(res[0]);
      if (hard_limit) {
        rlimit l{*hard_limit, *hard_limit};
        if (::setrlimit(RLIMIT_AS, &l) != 0) ::_exit(3);
      }
      char ready = 'r';
      if (::write(res[1], &ready, 1) != 1) ::_exit(4);
      char c;
      if (::read(cmd[0], &c, 1) != 1) ::_exit(2);  // parent gone: EOF
      // Through a volatile pointer, so the compiler cannot elide the allocation.
      void* (*volatile alloc)(size_t) = ::malloc;
      const size_t size = 256 * kMiB;
      char answer = '0';
      if (auto* p = static_cast<char*>(alloc(size))) {
        ::memset(p, 1, size);
        answer = static_cast<volatile char*>(p)[size - 1] == 1 ? '1' : '?';
        ::free(p);
      }
      ssize_t w = ::write(res[1], &answer, 1);
      ::_exit(w == 1 ? 0 : 5);
    }
    ::close(cmd[0]);
    ::close(res[1]);
    if (pid < 0) {
      ::close(cmd[1]);
      ::close(res[0]);
      return;
    }
    to_child_ = cmd[1];
    from_child_ = res[0];
    child_.adopt(pid);
  }
  ~AllocChild() {
    child_.kill_and_reap();  // before its pipes close
    if (to_child_ >= 0) ::close(to_child_);
    if (from_child_ >= 0) ::close(from_child_);
  }
  AllocChild(const AllocChild&) = delete;
  AllocChild& operator=(const AllocChild&) = delete;

  int pid() const { return child_.pid(); }
  bool started() const { return pid() > 0 && from_child_ >= 0; }

  // The next byte from the child, within `timeout_ms`; 0 on timeout or EOF.
  char read_byte(int timeout_ms = 10000) {
    if (!testing_children::readable_within(from_child_, timeout_ms)) return 0;
    char c = 0;
    return ::read(from_child_, &c, 1) == 1 ? c : 0;
  }
  bool go() {
    char c = 'g';
    return ::write(to_child_, &c, 1) == 1;
  }
  // Reaps it (it exits on its own after answering); false if it does not within the deadline.
  bool reap(int* status, int timeout_ms = 10000) {
    return child_.exited_within(timeout_ms, status);
  }

 private:
  testing_children::OwnedChild child_;
  int to_child_ = -1;
  int from_child_ = -1;
};

std::optional<std::int64_t> vm_size_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_vm_size(text);
}

TEST(OomRlimit, LoweredChildCannotAllocate) {
  AllocChild child;
  ASSERT_TRUE(child.started());
  ASSERT_EQ(child.read_byte(), 'r');  // it is running and blocked on the command pipe
  auto vm = vm_size_of(child.pid());
  ASSERT_TRUE(vm.has_value());

  auto a = lower_address_space(child.pid(), 32 * kMiB);
  ASSERT_TRUE(a) << a.error().what;
  EXPECT_THAT(*a, StartsWith("RLIMIT_AS of pid " + std::to_string(child.pid()) + " lowered to "));
  EXPECT_THAT(*a, HasSubstr("(its size + " + std::to_string(32 * kMiB) + ")"));

  rlimit now{};
  ASSERT_EQ(::prlimit(child.pid(), RLIMIT_AS, nullptr, &now), 0);
  EXPECT_EQ(static_cast<std::int64_t>(now.rlim_cur), *vm + 32 * kMiB);
  rlimit ours{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &ours), 0);
  EXPECT_EQ(now.rlim_max, ours.rlim_max);  // the hard limit (inherited from us) is left alone

  ASSERT_TRUE(child.go());
  EXPECT_EQ(child.read_byte(), '0') << "a 256 MiB allocation succeeded under the lowered limit";
  int status = 0;
  ASSERT_TRUE(child.reap(&status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(OomRlimit, ControlChildWithoutTheLimitAllocates) {
  AllocChild child;
  ASSERT_TRUE(child.started());
  ASSERT_EQ(child.read_byte(), 'r');
  ASSERT_TRUE(child.go());
  EXPECT_EQ(child.read_byte(), '1');
  int status = 0;
  ASSERT_TRUE(child.reap(&status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(OomRlimit, NeverRaisedAboveTheHardLimit) {
  const rlim_t hard = 64ULL << 30;  // 64 GiB, far above the child's size
  AllocChild child(hard);
  ASSERT_TRUE(child.started());
  ASSERT_EQ(child.read_byte(), 'r');
  auto a = lower_address_space(child.pid(), std::int64_t{1} << 50);  // + 1 PiB
  EXPECT_TRUE(a) << a.error().what;
  rlimit now{};
  ASSERT_EQ(::prlimit(child.pid(), RLIMIT_AS, nullptr, &now), 0);
  EXPECT_EQ(now.rlim_cur, hard);
  EXPECT_EQ(now.rlim_max, hard);
}

using aftermath::testing::TempDir;

TEST(OomRlimit, NoAddressSpaceSize) {
  TempDir proc;
  ASSERT_FALSE(proc.path().empty());
  proc.write("77/status", "Name:\tkworker/0:1\nPid:\t77\n");
  auto a = lower_address_space(77, kMiB, proc.path());
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().what, "cannot read the address-space size of pid 77");
  // No such process under the root at all.
  a = lower_address_space(78, kMiB, proc.path());
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().what, "cannot read the address-space size of pid 78");
}

TEST(OomRlimit, PrlimitFailureIsReported) {
  // A status that says there is a process, for a pid no process has.
  TempDir proc;
  ASSERT_FALSE(proc.path().empty());
  proc.write("999999999/status", kStatus);
  auto a = lower_address_space(999999999, kMiB, proc.path());
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().errnum, ESRCH);
  EXPECT_THAT(a.error().what, StartsWith("prlimit: "));
}

}  // namespace
}  // namespace aftermath
