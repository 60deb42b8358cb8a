// Unit tests for harness/observe/proc_events: a real fork, rename and exec
// seen as the kernel's process events. Subscribing needs CAP_NET_ADMIN in the
// initial namespaces; elsewhere the tests are skipped with the kernel's reason.
#include "harness/observe/proc_events.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace aftermath {
namespace {

using Clock = std::chrono::steady_clock;

// Events until pred() holds or the deadline passes (every wait bounded).
template <typename Pred>
bool collect(ProcEvents& ev, std::vector<ProcEvent>& out, Pred pred,
             std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto deadline = Clock::now() + limit;
  for (;;) {
    bool complete = ev.drain([&](const ProcEvent& e) { out.push_back(e); });
    (void)complete;  // a loss under load is fine here: the test looks for its own events
    if (pred()) return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{ev.fd(), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
}

TEST(ProcEvents, ForkRenameExecAndExitOfAChildAreSeen) {
  auto opened = ProcEvents::open();
  if (!opened) GTEST_SKIP() << "process events unavailable: " << opened.error().what;
  auto ev = std::move(*opened);
  ASSERT_GE(ev->fd(), 0);
  int go[2];
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Between fork and exec: async-signal-safe calls only.
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(3);
    ::prctl(PR_SET_NAME, "aftermath-pe", 0, 0, 0);
    ::execl("/bin/true", "true", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(go[0]);
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  std::vector<ProcEvent> seen;
  bool fork = false, comm = false, exec = false, exit = false;
  auto all = [&] {
    for (const auto& e : seen) {
      if (e.tgid != child) continue;
      switch (e.kind) {
        case ProcEvent::Kind::Fork:
          fork = fork || (e.parent_tgid == ::getpid() && e.pid == child);
          break;
        case ProcEvent::Kind::Comm:
          comm = true;
          break;
        case ProcEvent::Kind::Exec:
          exec = true;
          break;
        case ProcEvent::Kind::Exit:
          exit = true;
          break;
      }
    }
    return fork && comm && exec && exit;
  };
  bool ok = collect(*ev, seen, all);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(ok) << "fork " << fork << " comm " << comm << " exec " << exec << " exit " << exit;
  // In the kernel's order: the fork before the exec before the exit.
  int fork_at = -1, exec_at = -1, exit_at = -1;
  for (int i = 0; i < static_cast<int>(seen.size()); ++i) {
    if (seen[i].tgid != child) continue;
    if (seen[i].kind == ProcEvent::Kind::Fork && fork_at < 0) fork_at = i;
    if (seen[i].kind == ProcEvent::Kind::Exec && exec_at < 0) exec_at = i;
    if (seen[i].kind == ProcEvent::Kind::Exit) exit_at = i;
  }
  EXPECT_LT(fork_at, exec_at);
  EXPECT_LT(exec_at, exit_at);
}

// Threads are filtered out in the kernel: a thread's start and end here, then
// a child process's fork and exit; only the child's reach the socket (and no
// thread's, from anywhere on the machine).
TEST(ProcEvents, AThreadsStartAndEndAreFilteredOutAProcessIsNot) {
  auto opened = ProcEvents::open();
  if (!opened) GTEST_SKIP() << "process events unavailable: " << opened.error().what;
  auto ev = std::move(*opened);
  std::thread([] {}).join();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  std::vector<ProcEvent> seen;
  bool fork = false, exit = false;
  bool ok = collect(*ev, seen, [&] {
    for (const auto& e : seen) {
      fork = fork || (e.kind == ProcEvent::Kind::Fork && e.tgid == child);
      exit = exit || (e.kind == ProcEvent::Kind::Exit && e.tgid == child);
    }
    return fork && exit;
  });
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_TRUE(ok) << "fork " << fork << " exit " << exit;
  for (const auto& e : seen)
    EXPECT_EQ(e.pid, e.tgid) << "a thread's event passed the filter: kind "
                             << static_cast<int>(e.kind) << ", thread " << e.pid << " of "
                             << e.tgid;
}

TEST(ProcEvents, DrainNeverBlocks) {
  auto opened = ProcEvents::open();
  if (!opened) GTEST_SKIP() << "process events unavailable: " << opened.error().what;
  auto ev = std::move(*opened);
  auto t0 = Clock::now();
  for (int i = 0; i < 100; ++i) (void)ev->drain([](const ProcEvent&) {});
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
}

}  // namespace
}  // namespace aftermath
