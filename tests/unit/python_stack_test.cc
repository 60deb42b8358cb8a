// Python stacks: the interpreter's version from its file name, where gdb's
// libpython extension is found (a fake auto-load tree), py-bt's text parsed
// into frames (hand-written gdb output), which thread holds the hang, and
// the few words that say where a process is.
#include "harness/observe/python_stack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using aftermath::testing::TempDir;
using ::testing::IsEmpty;

TEST(PythonVersionOf, InterpretersByName) {
  EXPECT_EQ(python_version_of("/usr/bin/python3.11"), "3.11");
  EXPECT_EQ(python_version_of("/root/.pyenv/versions/3.12.1/bin/python3.12"), "3.12");
  EXPECT_EQ(python_version_of("/usr/bin/python3.11d"), "3.11");  // a debug build
  EXPECT_EQ(python_version_of("python3.10"), "3.10");
  EXPECT_EQ(python_version_of("/usr/bin/python3"), "");  // no version in the name
  EXPECT_EQ(python_version_of("/usr/lib/torch/bin/torch_shm_manager"), "");
  EXPECT_EQ(python_version_of("/usr/bin/python3.11-config"), "");
  EXPECT_EQ(python_version_of("/opt/python3.11/bin/trainer"), "");  // the folder does not count
  EXPECT_EQ(python_version_of(""), "");
}

TEST(FindLibpythonScript, TheInterpretersOwnFirstThenByName) {
  TempDir root;
  ASSERT_FALSE(root.path().empty());
  EXPECT_EQ(find_libpython_script(root.path(), "/usr/bin/python3.11", "3.11"),
            "");  // no auto-load folder
  std::string lib =
      root.write("auto-load/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0-gdb.py", "#\n");
  root.write("auto-load/usr/lib/x86_64-linux-gnu/libpython3.11d.so.1.0-gdb.py", "#\n");
  root.write("auto-load/usr/bin/python3.11d-gdb.py", "#\n");
  root.write("auto-load/usr/bin/python3.12-gdb.py", "#\n");
  // Only the shared library's: it is the same extension.
  EXPECT_EQ(find_libpython_script(root.path(), "/usr/bin/python3.11", "3.11"), lib);
  std::string by_name = root.write("auto-load/usr/bin/python3.11-gdb.py", "#\n");
  EXPECT_EQ(find_libpython_script(root.path(), "/usr/bin/python3.11", "3.11"), by_name);
  // A venv's interpreter elsewhere: found by name.
  EXPECT_EQ(find_libpython_script(root.path(), "/opt/venv/bin/python3.11", "3.11"), by_name);
  // The one gdb would auto-load for that very file wins.
  std::string own = root.write("auto-load/opt/venv/bin/python3.11-gdb.py", "#\n");
  EXPECT_EQ(find_libpython_script(root.path(), "/opt/venv/bin/python3.11", "3.11"), own);
  EXPECT_EQ(find_libpython_script(root.path(), "/usr/bin/python3.11d", "3.11"),
            root.path() + "/auto-load/usr/bin/python3.11d-gdb.py");
  // Another version's script is never taken.
  EXPECT_EQ(find_libpython_script(root.path(), "/usr/bin/python3.10", "3.10"), "");
  EXPECT_EQ(find_libpython_script(root.path(), "/usr/bin/python3.11", ""), "");
}

// What `thread apply all py-bt` printed for a rank blocked in all_reduce
// (gdb 13, Python 3.11), cut down, with the cases py-bt has besides frames.
constexpr const char* kPyBt = R"(
Thread 4 (Thread 0x7f98c72906c0 (LWP 1694) "python3"):
Unable to locate python frame

Thread 3 (Thread 0x7f98c7a916c0 (LWP 1691) "pt_pin"):
Traceback (most recent call first):
  <built-in method acquire of _thread.lock object at remote 0x7f0>
  File "/usr/lib/python3.11/threading.py", line 320, in wait
    waiter.acquire()
  File "/usr/lib/python3.11/queue.py", line 171, in get
    self.not_empty.wait(remaining)

Thread 1 (Thread 0x7f98ea6f0040 (LWP 1612) "python3"):
Traceback (most recent call first):
  <built-in method wait of PyCapsule object at remote 0x7f98c9634c30>
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1541, in all_reduce
    work.wait()
  File "/home/me/train.py", line 42, in step
    dist.all_reduce(t)
  (unable to read python frame information)
  File "/home/me/train.py", line ?, in run
    (failed to get frame line number)
  File "/home/me/train.py", line 60, in <module>
    run()
)";

TEST(ParsePyBt, ThreadsFramesAndWhatIsNotAFrame) {
  auto threads = parse_py_bt(kPyBt);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0].lwp, 1694);
  EXPECT_THAT(threads[0].frames, IsEmpty());
  EXPECT_EQ(threads[0].text, "Unable to locate python frame\n");
  EXPECT_EQ(threads[0].header, "Thread 4 (Thread 0x7f98c72906c0 (LWP 1694) \"python3\"):");
  EXPECT_EQ(threads[1].lwp, 1691);
  ASSERT_EQ(threads[1].frames.size(), 2u);
  EXPECT_EQ(threads[1].frames[0].function, "wait");
  EXPECT_EQ(threads[1].frames[1].file, "/usr/lib/python3.11/queue.py");
  const auto& main = threads[2];
  EXPECT_EQ(main.lwp, 1612);
  ASSERT_EQ(main.frames.size(), 4u);  // the built-in call and the unreadable frame are not frames
  EXPECT_EQ(main.frames[0].file,
            "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py");
  EXPECT_EQ(main.frames[0].line, 1541);
  EXPECT_EQ(main.frames[0].function, "all_reduce");
  EXPECT_EQ(main.frames[0].code, "work.wait()");
  EXPECT_EQ(main.frames[1].file, "/home/me/train.py");
  EXPECT_EQ(main.frames[1].line, 42);
  EXPECT_EQ(main.frames[1].function, "step");
  EXPECT_EQ(main.frames[1].code, "dist.all_reduce(t)");
  EXPECT_EQ(main.frames[2].function, "run");
  EXPECT_EQ(main.frames[2].line, 0);   // py-bt could not tell
  EXPECT_EQ(main.frames[2].code, "");  // nor the code: its excuse is not code
  EXPECT_EQ(main.frames[3].function, "<module>");
  EXPECT_EQ(main.frames[3].code, "run()");
  // The text keeps everything py-bt said about the thread.
  EXPECT_THAT(main.text, ::testing::HasSubstr("<built-in method wait of PyCapsule object"));
  EXPECT_THAT(main.text, ::testing::HasSubstr("(unable to read python frame information)"));
}

TEST(ParsePyBt, OnePyBtWithoutThreadHeaders) {
  auto threads = parse_py_bt(
      "Traceback (most recent call first):\n"
      "  File \"/tmp/hang.py\", line 3, in inner\n"
      "    time.sleep(600)\n"
      "  File \"/tmp/hang.py\", line 5, in <module>\n"
      "    inner()\n");
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].lwp, 0);
  ASSERT_EQ(threads[0].frames.size(), 2u);
  EXPECT_EQ(threads[0].frames[0].function, "inner");
  EXPECT_EQ(hang_thread(threads, 4242), &threads[0]);  // the only one is the main one
  EXPECT_THAT(parse_py_bt(""), IsEmpty());
}

TEST(ParsePyBt, HeadersWithoutThreadDebugging) {
  auto threads = parse_py_bt(
      "\nThread 2 (LWP 43 \"worker\"):\nUnable to locate python frame\n"
      "\nThread 1 (process 42):\nTraceback (most recent call first):\n"
      "  File \"a b/\\\"q\\\".py\", line 7, in f\n");
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].lwp, 43);
  EXPECT_EQ(threads[1].lwp, 42);
  ASSERT_EQ(threads[1].frames.size(), 1u);
  EXPECT_EQ(threads[1].frames[0].file, "a b/\\\"q\\\".py");
}

PythonThreadStack thread(int lwp, std::vector<PythonFrame> frames) {
  PythonThreadStack t;
  t.lwp = lwp;
  t.frames = std::move(frames);
  return t;
}

// What `py-spy dump --native --full-filenames` printed for a rank stuck in
// its all_reduce (PyTorch 2.13 in a venv), with a watchdog thread beside it.
TEST(ParsePySpyDump, ThreadsPythonFramesAndNativeFramesKeptAsText) {
  const std::string dump =
      "Process 4242: /v/bin/python -u /home/me/train.py\n"
      "Python v3.11.7 (/root/.pyenv/versions/3.11.7/bin/python3.11)\n"
      "\n"
      "Thread 4242 (active): \"MainThread\"\n"
      "    c10d::ProcessGroupGloo::AsyncWork::wait (libtorch_cpu.so)\n"
      "    all_reduce "
      "(/v/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py:3010)\n"
      "    wrapper (/v/lib/python3.11/site-packages/torch/distributed/c10d_logger.py:81)\n"
      "    time_sleep (Modules/timemodule.c:2048)\n"
      "    main (/home/me/train.py:40)\n"
      "    <module> (/home/me/train.py:52)\n"
      "    0x7f00deadbeef (libc.so.6)\n"
      "Thread 4250 (idle): \"Thread-1 (watch)\"\n"
      "    wait (/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py:324)\n"
      "    run (/home/me/train.py:12)\n";
  auto t = parse_py_spy_dump(dump);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].lwp, 4242);
  EXPECT_EQ(t[0].header, "Thread 4242 (active): \"MainThread\"");
  ASSERT_EQ(t[0].frames.size(), 4u);  // a C file with a line is a native frame
  EXPECT_EQ(t[0].frames[0].function, "all_reduce");
  EXPECT_EQ(t[0].frames[0].line, 3010);
  EXPECT_EQ(t[0].frames[2].file, "/home/me/train.py");
  EXPECT_NE(t[0].text.find("ProcessGroupGloo::AsyncWork::wait (libtorch_cpu.so)"),
            std::string::npos);
  EXPECT_NE(t[0].text.find("0x7f00deadbeef"), std::string::npos);
  EXPECT_EQ(t[1].lwp, 4250);
  EXPECT_EQ(hang_thread(t, 4242), &t[0]);
  EXPECT_EQ(python_where(hang_thread(t, 4242)->frames),
            "all_reduce (distributed_c10d.py:3010) called from train.py:40");
  // py-spy's complaint, not a dump: nothing.
  EXPECT_TRUE(
      parse_py_spy_dump("Error: Failed to find python version from target process\n").empty());
}

TEST(HangThread, TheMainThreadUnlessItIsIdle) {
  PythonFrame user{"/home/me/train.py", 42, "step", ""};
  PythonFrame join{"/usr/lib/python3.11/threading.py", 1112, "_wait_for_tstate_lock", ""};
  PythonFrame get{"/usr/lib/python3.11/queue.py", 171, "get", ""};
  PythonFrame collective{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py",
                         1541, "all_reduce", ""};
  {
    std::vector<PythonThreadStack> t{thread(11, {collective}), thread(10, {collective, user})};
    EXPECT_EQ(hang_thread(t, 10), &t[1]);  // the main thread, wherever it is listed
  }
  {
    // The main thread joins the thread that does the work: that one.
    std::vector<PythonThreadStack> t{thread(10, {join, user}), thread(11, {get}),
                                     thread(12, {collective})};
    EXPECT_EQ(hang_thread(t, 10), &t[2]);
  }
  {
    // Everyone idle: the main thread still.
    std::vector<PythonThreadStack> t{thread(11, {get}), thread(10, {join, user})};
    EXPECT_EQ(hang_thread(t, 10), &t[1]);
  }
  {
    // No Python in the main thread (a C++ program embedding Python, or a
    // main thread in C code that py-bt cannot see through).
    std::vector<PythonThreadStack> t{thread(10, {}), thread(11, {get})};
    EXPECT_EQ(hang_thread(t, 10), &t[1]);
  }
  {
    // A user's own file named threading.py is not the standard library's.
    std::vector<PythonThreadStack> t{thread(10, {{"/home/me/threading.py", 3, "wait", ""}}),
                                     thread(11, {user})};
    EXPECT_EQ(hang_thread(t, 10), &t[0]);
  }
  {
    // A DataLoader worker: its main thread polls its index queue (another
    // process) while a resource-sharer thread accepts. Waiting on another
    // process is not idle: the main thread.
    PythonFrame select{"/usr/lib/python3.11/selectors.py", 415, "select", ""};
    PythonFrame loop{"/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py", 269,
                     "_worker_loop", ""};
    PythonFrame accept{"/usr/lib/python3.11/socket.py", 294, "accept", ""};
    std::vector<PythonThreadStack> t{thread(11, {accept}), thread(10, {select, loop})};
    EXPECT_EQ(hang_thread(t, 10), &t[1]);
  }
  std::vector<PythonThreadStack> none{thread(10, {}), thread(11, {})};
  EXPECT_EQ(hang_thread(none, 10), nullptr);
  EXPECT_EQ(hang_thread({}, 10), nullptr);
}

TEST(IsInstalledPythonFile, StandardLibrarySitePackagesAndFrozen) {
  EXPECT_TRUE(is_installed_python_file("/usr/lib/python3.11/threading.py"));
  EXPECT_TRUE(is_installed_python_file(
      "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"));
  EXPECT_TRUE(is_installed_python_file(
      "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py"));
  EXPECT_TRUE(is_installed_python_file("/root/.pyenv/versions/3.11.7/lib/python3.11/selectors.py"));
  EXPECT_TRUE(is_installed_python_file("/usr/lib64/python3.9/queue.py"));
  EXPECT_TRUE(is_installed_python_file("<frozen runpy>"));
  EXPECT_FALSE(is_installed_python_file("/home/me/train.py"));
  EXPECT_FALSE(is_installed_python_file("train.py"));
  EXPECT_FALSE(is_installed_python_file("/home/me/lib/pythonic/x.py"));
  EXPECT_FALSE(is_installed_python_file("<string>"));  // python -c
}

TEST(PythonWhere, InnermostAndTheUsersCode) {
  PythonFrame wait{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 1541,
                   "all_reduce", ""};
  PythonFrame wrap{"/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py", 72, "wrapper",
                   ""};
  PythonFrame step{"/home/me/train.py", 42, "step", ""};
  PythonFrame top{"/home/me/train.py", 60, "<module>", ""};
  EXPECT_EQ(python_where({wait, wrap, step, top}),
            "all_reduce (distributed_c10d.py:1541) called from train.py:42");
  EXPECT_EQ(python_where({step, top}), "step (train.py:42)");
  EXPECT_EQ(python_where({wait, wrap}), "all_reduce (distributed_c10d.py:1541)");  // no user code
  EXPECT_EQ(python_where({{"/home/me/train.py", 0, "run", ""}}), "run (train.py)");
  EXPECT_EQ(python_where({}), "");
}

}  // namespace
}  // namespace aftermath
