// Unit tests for harness/observe/creators (who made each new entry of a
// directory): real processes create real entries in a real folder, and the
// kernel's answer is compared with the pids this test forked.
#include "harness/observe/creators.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using testing::TempDir;

// Forks a child that runs `make` and exits; returns its pid once reaped.
template <typename F>
int in_child(F make) {
  pid_t pid = ::fork();
  if (pid == 0) {
    make();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(CreatorWatch, NamesTheProcessThatMadeEachEntryAndNothingDeeper) {
  TempDir d{"aftermath-creators"};
  d.write("watched/old/inside", "");
  CreatorWatch w;
  if (Status st = w.watch(d / "watched"); !st) {
    ASSERT_NE(::geteuid(), 0u) << "root is refused: " << st.error().what;
    GTEST_SKIP() << st.error().what;
  }
  const std::string dir = d / "watched";
  int file_maker = in_child([&] { std::ofstream(dir + "/pytorch-errorfile-x.pickle") << "e"; });
  int dir_maker = in_child([&] {
    ::mkdir((dir + "/pymp-y").c_str(), 0700);
    int s = ::socket(AF_UNIX, SOCK_STREAM, 0);  // a listener under it: deeper, not reported
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s/pymp-y/listener-1", dir.c_str());
    (void)::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  });
  d.write("elsewhere", "");
  int mover2 = in_child([&] { std::rename((d / "elsewhere").c_str(), (dir + "/moved").c_str()); });
  std::ofstream(dir + "/old/deeper") << "";  // in a subfolder: not reported
  std::vector<CreatedEntry> got;
  ASSERT_TRUE(w.read(&got));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].name, "pytorch-errorfile-x.pickle");
  EXPECT_EQ(got[0].pid, file_maker);
  EXPECT_EQ(got[1].name, "pymp-y");
  EXPECT_EQ(got[1].pid, dir_maker);
  EXPECT_EQ(got[2].name, "moved");
  EXPECT_EQ(got[2].pid, mover2);
  got.clear();
  ASSERT_TRUE(w.read(&got));
  EXPECT_TRUE(got.empty()) << "each creation once";
}

TEST(CreatorWatch, AMissingFolderIsAnErrorThatNamesIt) {
  TempDir d{"aftermath-creators"};
  CreatorWatch w;
  Status st = w.watch(d / "missing");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what.find(d / "missing"), std::string::npos) << st.error().what;
  EXPECT_FALSE(w.active());
  std::vector<CreatedEntry> got;
  EXPECT_FALSE(w.read(&got));
}

}  // namespace
}  // namespace aftermath
