// Tests for finding a program on $PATH (harness/os/find_program).
#include "harness/os/find_program.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

// Sets $PATH for one test and puts it back.
class PathIs {
 public:
  explicit PathIs(const std::string& value) {
    const char* old = std::getenv("PATH");
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~PathIs() {
    if (had_)
      ::setenv("PATH", old_.c_str(), 1);
    else
      ::unsetenv("PATH");
  }

 private:
  bool had_ = false;
  std::string old_;
};

void write_file(const std::string& path, mode_t mode) {
  std::ofstream(path) << "#!/bin/sh\n";
  ::chmod(path.c_str(), mode);
}

TEST(FindProgram, TheFirstExecutableRegularFileOnThePathWins) {
  testing::TempDir a, b, c;
  write_file(a / "tool", 0644);                   // not executable: skipped
  std::filesystem::create_directory(b / "tool");  // a directory: skipped
  ::chmod((b / "tool").c_str(), 0755);
  write_file(c / "tool", 0755);
  PathIs p(a.path() + ":" + b.path() + ":" + c.path());
  EXPECT_EQ(find_program("tool"), c / "tool");
  EXPECT_EQ(find_program("absent"), std::nullopt);
}

TEST(FindProgram, ExtraDirectoriesComeAfterThePath) {
  testing::TempDir a, extra;
  write_file(extra / "cuda-tool", 0755);
  PathIs p(a.path());
  EXPECT_EQ(find_program("cuda-tool"), std::nullopt);
  EXPECT_EQ(find_program("cuda-tool", extra.path()), extra / "cuda-tool");
}

TEST(FindProgram, IsExecutableFileWantsARegularExecutableFile) {
  testing::TempDir d;
  write_file(d / "x", 0755);
  write_file(d / "y", 0600);
  EXPECT_TRUE(is_executable_file(d / "x"));
  EXPECT_FALSE(is_executable_file(d / "y"));
  EXPECT_FALSE(is_executable_file(d.path()));
  EXPECT_FALSE(is_executable_file(d / "none"));
}

}  // namespace
}  // namespace aftermath
