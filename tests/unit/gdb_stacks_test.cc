// One gdb attach for C and Python stacks: the command line, its output split
// at the markers, and — on a real python3 blocked in a C library — that
// loading only the libraries the stacks pass through prints the same stacks
// as loading every library.
#include "harness/observe/gdb_stacks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <sstream>

#include "harness/observe/diagnose.h"
#include "harness/os/spawn.h"
#include "tests/support/python_child.h"

namespace aftermath {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

bool has_pair(const std::vector<std::string>& a, const std::string& opt, const std::string& value) {
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == opt && a[i + 1] == value) return true;
  return false;
}

bool has_prefix(const std::vector<std::string>& a, const std::string& opt,
                const std::string& prefix) {
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == opt && a[i + 1].rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(GdbStacksArgv, SelectiveLoadingCAndPythonStacks) {
  auto a = gdb_stacks_argv(
      {"/usr/bin/gdb", 4242, "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py", false});
  ASSERT_GE(a.size(), 3u);
  EXPECT_EQ(a[0], "/usr/bin/gdb");
  EXPECT_THAT(a, Contains("-nx"));
  EXPECT_THAT(a, Contains("-batch"));
  EXPECT_TRUE(has_pair(a, "-p", "4242"));
  EXPECT_TRUE(has_pair(a, "-iex", "set auto-solib-add off"));
  EXPECT_TRUE(has_pair(a, "-iex", "set auto-load off"));
  EXPECT_TRUE(has_pair(a, "-iex", "set debuginfod enabled off"));
  EXPECT_TRUE(has_prefix(a, "-ex", "python exec("));
  EXPECT_TRUE(has_pair(a, "-ex", "thread apply all bt"));
  EXPECT_TRUE(has_pair(a, "-ex", "source /usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py"));
  EXPECT_TRUE(has_pair(a, "-ex", "thread apply all py-bt"));
  // -iex comes before the attach, -ex after it.
  auto pos = [&](const std::string& s) { return std::find(a.begin(), a.end(), s) - a.begin(); };
  EXPECT_LT(pos("set auto-solib-add off"), pos("-p"));
  EXPECT_LT(pos("-p"), pos("thread apply all bt"));
  EXPECT_LT(pos("thread apply all bt"), pos("thread apply all py-bt"));
}

TEST(GdbStacksArgv, EveryLibraryAndNoPython) {
  auto a = gdb_stacks_argv({"gdb", 7, "", true});
  EXPECT_FALSE(has_pair(a, "-iex", "set auto-solib-add off"));
  EXPECT_FALSE(has_prefix(a, "-ex", "python"));
  EXPECT_FALSE(has_prefix(a, "-ex", "source"));
  EXPECT_FALSE(has_pair(a, "-ex", "thread apply all py-bt"));
  EXPECT_TRUE(has_pair(a, "-ex", "thread apply all bt"));
}

TEST(SplitGdbStacks, PartsBetweenTheMarkers) {
  auto g = split_gdb_stacks(
      "[New LWP 4243]\n"
      "[Thread debugging using libthread_db enabled]\n"
      "0x00007f in __GI___libc_read (fd=3) at read.c:26\n"
      "aftermath-gdb:loaded 3\n"
      "\naftermath-gdb:c-stacks\n"
      "\nThread 2 (Thread 0x7f01 (LWP 4243) \"python3\"):\n"
      "#0  0x00007f in epoll_wait () from /lib/x86_64-linux-gnu/libc.so.6\n"
      "\nThread 1 (Thread 0x7f00 (LWP 4242) \"python3\"):\n"
      "#0  0x00007f in __GI___libc_read (fd=3) at read.c:26\n"
      "26\tread.c: No such file or directory.\n"
      "#1  0x000055 in main () at main.cc:10\n"
      "\naftermath-gdb:c-end\n"
      "\naftermath-gdb:py-stacks\n"
      "\nThread 1 (Thread 0x7f00 (LWP 4242) \"python3\"):\n"
      "Traceback (most recent call first):\n"
      "  File \"/tmp/x.py\", line 3, in f\n"
      "\naftermath-gdb:py-end\n"
      "[Inferior 1 (process 4242) detached]\n");
  EXPECT_TRUE(g.loaded);
  EXPECT_TRUE(g.c_done);
  EXPECT_TRUE(g.python_done);
  EXPECT_EQ(g.c_stacks,
            "Thread 2 (Thread 0x7f01 (LWP 4243) \"python3\"):\n"
            "#0  0x00007f in epoll_wait () from /lib/x86_64-linux-gnu/libc.so.6\n"
            "Thread 1 (Thread 0x7f00 (LWP 4242) \"python3\"):\n"
            "#0  0x00007f in __GI___libc_read (fd=3) at read.c:26\n"
            "#1  0x000055 in main () at main.cc:10\n");
  EXPECT_THAT(g.python, HasSubstr("Thread 1 (Thread 0x7f00 (LWP 4242) \"python3\"):\n"));
  EXPECT_THAT(g.python, HasSubstr("  File \"/tmp/x.py\", line 3, in f\n"));
  EXPECT_THAT(g.python, Not(HasSubstr("aftermath-gdb")));
  EXPECT_THAT(g.errors, IsEmpty());
}

TEST(SplitGdbStacks, CutShortAndFailures) {
  // Killed in the middle of the C stacks.
  auto cut = split_gdb_stacks(
      "aftermath-gdb:loaded 1\naftermath-gdb:c-stacks\nThread 1 (LWP 5):\n#0  f ()\n");
  EXPECT_TRUE(cut.loaded);
  EXPECT_FALSE(cut.c_done);
  EXPECT_FALSE(cut.python_done);
  EXPECT_EQ(cut.c_stacks, "Thread 1 (LWP 5):\n#0  f ()\n");
  // Attach refused: gdb still runs every command, on nothing.
  auto refused = split_gdb_stacks(
      "ptrace: Operation not permitted.\n"
      "aftermath-gdb:loaded 0\n"
      "aftermath-gdb:c-stacks\n"
      "aftermath-gdb:c-end\n");
  EXPECT_EQ(refused.errors, "ptrace: Operation not permitted.");
  EXPECT_THAT(refused.c_stacks, IsEmpty());
  // A gdb without Python: no loader line; each failure named once.
  auto no_python = split_gdb_stacks(
      "Python scripting is not supported in this copy of GDB.\n"
      "aftermath-gdb:c-stacks\n#0  f ()\naftermath-gdb:c-end\n"
      "Python scripting is not supported in this copy of GDB.\n"
      "aftermath-gdb:py-stacks\n"
      "Undefined command: \"py-bt\".  Try \"help\".\n"
      "aftermath-gdb:py-end\n");
  EXPECT_FALSE(no_python.loaded);
  EXPECT_EQ(no_python.errors,
            "Python scripting is not supported in this copy of GDB.\n"
            "Undefined command: \"py-bt\".  Try \"help\".");
}

// The function of each frame, per thread, without addresses and arguments.
std::vector<std::string> functions(const std::string& c_stacks) {
  static const std::regex frame(R"(^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+))");
  std::vector<std::string> out;
  std::stringstream in(c_stacks);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, frame)) out.push_back(m[1]);
  return out;
}

// python3 blocked in pause() called through ctypes: the stack passes through
// libc, libffi and the _ctypes extension, each found only once the frame
// inside the one before it is unwound.
TEST(GdbStacks, OnlyTheLibrariesOnTheStacksGiveTheSameStacks) {
  std::string gdb = find_gdb();
  if (gdb.empty()) GTEST_SKIP() << "gdb is not installed";
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  testing::PythonChild py(
      "/usr/bin/python3",
      {"-c",
       "import ctypes\nlibc = ctypes.CDLL(None)\nprint('paused', flush=True)\nlibc.pause()\n"});
  ASSERT_TRUE(py.wait_for("paused"));
  CommandOutcome some = run_command(gdb_stacks_argv({gdb, py.pid(), "", false}), 120 * kSecond);
  CommandOutcome all = run_command(gdb_stacks_argv({gdb, py.pid(), "", true}), 120 * kSecond);
  ASSERT_TRUE(some.exited_zero()) << some.output;
  ASSERT_TRUE(all.exited_zero()) << all.output;
  auto s = split_gdb_stacks(some.output), a = split_gdb_stacks(all.output);
  EXPECT_TRUE(s.loaded) << some.output;
  EXPECT_TRUE(s.c_done);
  EXPECT_TRUE(a.c_done);
  EXPECT_THAT(s.c_stacks, HasSubstr("pause"));
  EXPECT_THAT(s.c_stacks, HasSubstr("_ctypes_callproc"));  // symbols of the extension were loaded
  EXPECT_THAT(s.c_stacks, HasSubstr("main"));              // and the unwinding got to the bottom
  EXPECT_EQ(functions(s.c_stacks), functions(a.c_stacks)) << s.c_stacks << "\n---\n" << a.c_stacks;
  EXPECT_EQ(py.state(), 'S');  // left as it was
}

}  // namespace
}  // namespace aftermath
